"""Commit notes on ``refs/notes/oxide``: which sessions and checkpoints made a commit.

The note (JSON) is the truth; the index's ``links`` table is a cache of it that ``reindex``
rebuilds. Stdlib only at import time: the hooks use this.
"""

from __future__ import annotations

import json
from typing import Any

NOTES_REF = "refs/notes/oxide"


def read_note(git: Any, commit: str) -> dict[str, Any]:
    try:
        note = git.lookup_note(commit, NOTES_REF)
    except (KeyError, ValueError, Exception):  # pygit2 raises KeyError or GitError
        return {}
    try:
        data = json.loads(note.message)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def merge_notes(*notes: dict[str, Any]) -> dict[str, Any]:
    """The union of notes (sessions and checkpoints kept in first-seen order)."""
    out: dict[str, Any] = {"oxide": 1, "sessions": [], "checkpoints": []}
    for n in notes:
        for key in ("sessions", "checkpoints"):
            for v in n.get(key, []):
                if v and v not in out[key]:
                    out[key].append(v)
        for k, v in n.items():
            if k not in ("sessions", "checkpoints"):
                out[k] = v  # a later note's fields win
    return out


def write_note(ctx: Any, commit: str, note: dict[str, Any]) -> dict[str, Any]:
    """Merge ``note`` into the commit's note on refs/notes/oxide and the index's links."""
    import pygit2

    from .sessionlog import IDENTITY

    git = ctx.repo.git
    merged = merge_notes(read_note(git, commit), note)
    if not merged["sessions"] and not merged["checkpoints"]:
        return merged
    sig = pygit2.Signature(*IDENTITY, ctx.now_ms // 1000, 0)
    git.create_note(json.dumps(merged, sort_keys=True) + "\n", sig, sig, commit, NOTES_REF, True)
    put_links(ctx, commit, merged)
    return merged


def put_links(ctx: Any, commit: str, note: dict[str, Any]) -> None:
    rows = [(commit, s, c) for s in note["sessions"] or [""] for c in note["checkpoints"] or [""]]
    with ctx.index.write() as conn:
        conn.executemany("INSERT OR IGNORE INTO links VALUES (?,?,?)", rows)


def rebuild_links(ctx: Any) -> int:
    """Refill the index's ``links`` table from refs/notes/oxide (the truth); returns the count."""
    git = ctx.repo.git
    n = 0
    try:
        notes = list(git.notes(NOTES_REF))
    except Exception:
        return 0
    for note in notes:
        try:
            data = json.loads(note.message)
        except ValueError:
            continue
        put_links(ctx, str(note.annotated_id), merge_notes(data))
        n += 1
    return n


