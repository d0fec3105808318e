"""The store: session logs and checkpoints in git, the SQLite index, search, redaction, the journal."""
