"""Where a session log keeps its messages in git: ``session.msgpack`` and ``messages/<bucket>/
<seq>.msgpack``, BUCKET messages to a bucket. Stdlib only: ``blame`` finds a message's blob by it
without importing the write path (``logwrite``) or the codec. ``SCHEMA_VERSION``: the version of
every payload oxide writes (its ``v``: ``payload`` reads it, ``model`` names it)."""

from __future__ import annotations

SCHEMA_VERSION = 1

BUCKET = 256
SESSION_FILE = "session.msgpack"
MESSAGES_DIR = "messages"


def bucket_name(seq: int) -> str:
    return f"{seq // BUCKET:06d}"


def entry_name(seq: int) -> str:
    return f"{seq:08d}.msgpack"
