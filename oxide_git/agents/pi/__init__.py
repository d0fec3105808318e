"""Pi: discover, parse and export (``agent`` is what the registry imports by name)."""
