"""Transcripts out: Markdown, HTML, JSON, and the text of `show`."""
