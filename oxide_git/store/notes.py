"""Commit notes on ``refs/notes/oxide``: which sessions and checkpoints made a commit.

The note (JSON) is the truth; the index's ``links`` table is a cache of it that ``reindex``
rebuilds. Stdlib only at import time: the hooks use this.
"""

from __future__ import annotations

import json
import re
from typing import Any

from oxide_git.git import refs

NOTES_REF = "refs/notes/oxide"
NOTE_LOCK_BUDGET_S = refs.STALE_LOCK_S + 5  # past it, a lock still there is stale and broken

_HEX = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
_ID = re.compile(r"^[A-Za-z0-9_-]{6,128}$")


def parse_note(text: str) -> dict[str, Any]:
    """A note as ``{"sessions": [...], "checkpoints": [...], ...}`` from JSON, several JSON
    documents (a line-wise union merge of two notes) or one id per line."""
    out: dict[str, Any] = {"sessions": [], "checkpoints": []}
    docs: list[Any] = []
    try:
        docs = [json.loads(text)]
    except ValueError:
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                docs.append(json.loads(line))
            except ValueError:
                docs.append(line)
    for d in docs:
        if isinstance(d, dict):
            for key in ("sessions", "checkpoints"):
                for v in d.get(key) or []:
                    if isinstance(v, str) and v not in out[key]:
                        out[key].append(v)
            out.update({k: v for k, v in d.items() if k not in ("sessions", "checkpoints")})
        elif isinstance(d, str):
            for word in re.split(r"[\s,]+", d):
                word = word.strip().removeprefix("session:").removeprefix("checkpoint:")
                key = "checkpoints" if _HEX.match(word) else "sessions"
                if _ID.match(word) and word not in out[key]:
                    out[key].append(word)
    return out


def read_note(git: Any, commit: str) -> dict[str, Any]:
    try:
        note = git.lookup_note(commit, NOTES_REF)
    except (KeyError, ValueError, Exception):  # pygit2 raises KeyError or GitError
        return {}
    return parse_note(note.message)


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
    git = ctx.repo.git
    merged = merge_notes(read_note(git, commit), note)
    if not merged["sessions"] and not merged["checkpoints"]:
        return merged
    write_text(ctx, commit, json.dumps(merged, sort_keys=True) + "\n", NOTES_REF)
    put_links(ctx, commit, merged)
    return merged


def write_text(ctx: Any, commit: str, text: str, ref: str) -> None:
    """Put ``text`` as the commit's note on ``ref`` (replacing the one there)."""
    import pygit2

    from oxide_git.store.logwrite import IDENTITY

    git = ctx.repo.git
    sig = pygit2.Signature(*IDENTITY, ctx.now_ms // 1000, 0)

    def attempt() -> None:
        try:
            git.create_note(text, sig, sig, commit, ref, True)
        except OSError as e:  # libgit2: "failed to lock file '…/refs/notes/oxide.lock' for writing"
            if "lock" not in str(e):
                raise
            raise refs.Locked from e

    # A lock a killed git left (a `git gc` in its reflog expire) is broken once stale; a live one
    # is waited for: the hooks' notes are written in the background, and were lost meanwhile.
    refs.retry_locked(refs.common_dir(git), [ref], NOTE_LOCK_BUDGET_S, attempt)


def read_text(git: Any, commit: str, ref: str) -> str | None:
    """The commit's note on ``ref`` as text, or None."""
    try:
        return str(git.lookup_note(commit, ref).message)
    except (KeyError, ValueError, Exception):  # pygit2 raises KeyError or GitError
        return None


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
            text = note.message
        except Exception:  # a notes tree from elsewhere: pygit2 raises KeyError or GitError
            continue
        put_links(ctx, str(note.annotated_id), merge_notes(parse_note(text)))
        n += 1
    return n


