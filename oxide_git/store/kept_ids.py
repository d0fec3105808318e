"""A message's id, once stored (and so shown), is its id for good.

An id is derived from the session, the message's number and its time (``model.message_id_for``),
and an importer takes a message's time from its first line that has one. A transcript read while
it grows can hold the start of a message whose lines have no time yet: stored then, the message
got an id with no time in it, and the import that read the rest re-placed it under another id
(``show`` had printed the first, a checkpoint or a fork may name it). So when an import re-places
a message the store already holds at that number, and it is the same message (the same native id,
or neither has one), the id stored is kept; a different message at that number (a transcript
rewritten) gets its own. The stored ids are read from the index, whose rows are the log's.
"""

from __future__ import annotations

from oxide_git.core.model import Message
from oxide_git.store.context import Context


def keep_stored(ctx: Context, session_id: str, start: int, msgs: list[Message]) -> list[Message]:
    """``msgs`` (placed from ``start``), each that re-places the same stored message with its id."""
    rows = ctx.index.query(
        "SELECT seq, id, native_id FROM messages WHERE session_id=? AND seq>=? AND seq<?",
        (session_id, start, start + len(msgs)))
    out = list(msgs)
    for seq, mid, native in rows:
        m = out[int(seq) - start]
        if not m.id and mid and native == m.native_id:
            out[int(seq) - start] = m.with_id(mid)
    return out
