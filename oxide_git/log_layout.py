"""Where a session log keeps its messages in git: ``session.msgpack`` and ``messages/<bucket>/
<seq>.msgpack``, BUCKET messages to a bucket. Stdlib only: ``blame`` finds a message's blob by it
without importing the write path (``logwrite``) or the codec."""

from __future__ import annotations

BUCKET = 256
SESSION_FILE = "session.msgpack"
MESSAGES_DIR = "messages"


def bucket_name(seq: int) -> str:
    return f"{seq // BUCKET:06d}"


def entry_name(seq: int) -> str:
    return f"{seq:08d}.msgpack"
