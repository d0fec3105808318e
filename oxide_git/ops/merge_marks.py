"""How a merge (`git oxide merge`) marks what it brought into a session, and where forks were
merged: read by `list --tree` without loading git (the marker messages' rows in the index)."""

from __future__ import annotations

import re

from oxide_git.core.model import MERGE_MARKER, MERGED_FROM
from oxide_git.store.context import Context

MARKER = "[git oxide merge]"  # the marker message's text begins so
MARKER_KEY = MERGE_MARKER  # the marker message's extra: what it merged
FROM_KEY = MERGED_FROM  # each merged message's extra: the session, seq and agent it came from
_FORK_IN_MARKER = re.compile(r"from fork ([0-9a-f]+)|digest of fork ([0-9a-f]+)")


def merged_into(ctx: Context, session_ids: list[str]) -> dict[str, list[str]]:
    """fork id -> the sessions (of ``session_ids``) a merge brought it into, from their markers."""
    out: dict[str, list[str]] = {}
    for i in range(0, len(session_ids), 500):
        chunk = session_ids[i:i + 500]
        for target, text in ctx.index.query(
                f"SELECT session_id, text FROM messages WHERE session_id IN ({','.join('?' * len(chunk))}) "
                "AND role='user' AND text LIKE ? ORDER BY seq", (*chunk, MARKER + "%")):
            hit = _FORK_IN_MARKER.search(text or "")
            fork = hit and (hit.group(1) or hit.group(2))
            if fork and target not in out.setdefault(fork, []):
                out[fork].append(target)
    return out
