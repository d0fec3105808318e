"""Values, errors and encodings every layer uses: stdlib (and msgpack) only, no git, no SQLite."""
