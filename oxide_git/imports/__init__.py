"""Bulk import of the agents' sessions into the store: plan, workers, batches, report."""
