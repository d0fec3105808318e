"""Rebuild the SQLite index from ``refs/oxide/*``: only what it has not seen, or everything."""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from . import notes, refs, sessionlog, snapshots
from .context import Context
from .errors import OxideError


@dataclass
class ReindexResult:
    sessions_updated: int = 0
    sessions_removed: int = 0
    messages_indexed: int = 0
    checkpoints_added: int = 0
    checkpoints_removed: int = 0
    links: int = 0
    problems: list[str] | None = None


def _first_difference(git: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree) -> int:
    """The first seq whose bucket differs between two log trees (0 when there is no old tree)."""
    if old is None or sessionlog.MESSAGES_DIR not in old:
        return 0
    if sessionlog.MESSAGES_DIR not in new:
        return 0
    a = git[old[sessionlog.MESSAGES_DIR].id]
    b = git[new[sessionlog.MESSAGES_DIR].id]
    assert isinstance(a, pygit2.Tree) and isinstance(b, pygit2.Tree)
    old_buckets = {e.name: e.id for e in a}
    for entry in b:
        if old_buckets.get(entry.name) != entry.id:
            return int(entry.name or 0) * sessionlog.BUCKET
    return len(b) * sessionlog.BUCKET


def reindex(ctx: Context, *, full: bool = False) -> ReindexResult:
    """Bring the index up to the refs. ``full`` drops every row first."""
    git = ctx.repo.git
    index = ctx._index if ctx._index is not None else ctx.index
    res = ReindexResult(problems=[])
    if full:
        with index.write() as conn:
            for table in ("sessions", "messages", "parts", "checkpoints", "links"):
                conn.execute(f"DELETE FROM {table}")
    tips = index.session_tips()
    seen: set[str] = set()
    for name, oid in refs.iter_refs(git, refs.SESSIONS):
        sid = name[len(refs.SESSIONS):]
        seen.add(sid)
        if tips.get(sid) == str(oid):
            continue
        try:
            log = sessionlog.load_commit(git, oid)
            old_tree = None
            if tips.get(sid):
                try:
                    old_tree = git[tips[sid]].peel(pygit2.Tree)
                except (KeyError, ValueError, pygit2.GitError):
                    old_tree = None
            start = _first_difference(git, old_tree, log.commit.tree)
            puts = dict(sessionlog.iter_messages(git, log.commit.tree, start))
        except OxideError as e:
            res.problems.append(f"{name}: {e.message}")  # type: ignore[union-attr]
            continue
        with index.write() as conn:
            index.put_messages(conn, sid, puts, truncate_at=start)
            index.put_session(conn, log.session, log_commit=str(oid), count=log.count)
        res.sessions_updated += 1
        res.messages_indexed += len(puts)
    gone = set(tips) - seen
    if gone:
        with index.write() as conn:
            for sid in gone:
                index.delete_session(conn, sid)
        res.sessions_removed = len(gone)
    known = index.checkpoint_ids()
    live: set[str] = set()
    new_cps: list[snapshots.Checkpoint] = []
    for name, oid in refs.iter_refs(git, refs.CHECKPOINTS):
        live.add(str(oid))
        if str(oid) in known:
            continue
        commit = git.get(oid)
        if not isinstance(commit, pygit2.Commit):
            res.problems.append(f"{name}: not a commit")  # type: ignore[union-attr]
            continue
        new_cps.append(snapshots.parse_commit(commit, name))
    with index.write() as conn:
        for cp in new_cps:
            index.put_checkpoint(conn, cp)
        for cid in known - live:
            conn.execute("DELETE FROM checkpoints WHERE id=?", (cid,))
    notes_tip = refs.read(git, notes.NOTES_REF)
    if full or index.meta("notes_tip") != (str(notes_tip) if notes_tip else None):
        with index.write() as conn:
            conn.execute("DELETE FROM links")
        res.links = notes.rebuild_links(ctx)
        with index.write() as conn:
            index.put_meta(conn, "notes_tip", str(notes_tip) if notes_tip else None)
    res.checkpoints_added = len(new_cps)
    res.checkpoints_removed = len(known - live)
    return res
