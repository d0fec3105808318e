"""`git oxide blame`: which session, prompt and agent wrote each line."""
