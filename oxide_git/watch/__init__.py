"""`git oxide watch`: the daemon, what it watches, and its checkpoint fast path."""
