"""Rebuild the SQLite index from ``refs/oxide/*``: only what it has not seen, or everything."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pygit2

from . import notes, refs, sessionlog, snapshots
from .context import Context
from .errors import CorruptIndex, OxideError
from .search_index import EPOCH_KEY, new_epoch

if TYPE_CHECKING:
    import sqlite3

    from .index import Index
    from .model import Message

BATCH = 2000
ONE_BY_ONE = 1000  # past this many sessions asked for, one pass over all the refs costs less


@dataclass
class ReindexResult:
    sessions_updated: int = 0
    sessions_removed: int = 0
    messages_indexed: int = 0
    checkpoints_added: int = 0
    checkpoints_removed: int = 0
    links: int = 0
    problems: list[str] | None = None


def _put_messages(index: Index, conn: sqlite3.Connection, sid: str,
                  messages: Iterator[tuple[int, Message]], start: int) -> int:
    """The rows of a log's messages from ``start``, a batch at a time: a log of a million messages
    costs the memory of one batch, not of the log."""
    n = 0
    index.put_messages(conn, sid, {}, truncate_at=start)
    while batch := dict(itertools.islice(messages, BATCH)):
        index.put_messages(conn, sid, batch)
        n += len(batch)
    return n


def reindex(ctx: Context, *, full: bool = False, sessions: Collection[str] | None = None,
            checkpoints: bool = True) -> ReindexResult:
    """Bring the index up to the refs. ``full`` drops every row first. ``sessions``: only these
    (a pull knows what it moved: the store's other 100,000 refs and rows are not read), and the
    checkpoints only when ``checkpoints``."""
    git = ctx.repo.git
    index = ctx._index if ctx._index is not None else ctx.index
    res = ReindexResult(problems=[])
    if full:
        with index.write() as conn:
            for table in ("sessions", "messages", "parts", "checkpoints", "links"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("DELETE FROM search_log")  # and the search index built anew, from the new rows
            index.put_meta(conn, EPOCH_KEY, new_epoch())
    if sessions is None or len(sessions) > ONE_BY_ONE:
        tips = index.session_tips()
        found = ((name[len(refs.SESSIONS):], oid) for name, oid in refs.iter_refs(git, refs.SESSIONS))
    else:
        tips = index.session_tips(sessions)
        found = ((sid, oid) for sid in sorted(sessions)
                 if (oid := refs.read(git, refs.SESSIONS + sid)) is not None)
    seen: set[str] = set()
    for sid, oid in found:
        seen.add(sid)
        if tips.get(sid) != str(oid):
            _update_session(git, index, sid, oid, tips.get(sid), res)
    gone = set(tips) - seen
    if gone:
        with index.write() as conn:
            for sid in gone:
                index.delete_session(conn, sid)
        res.sessions_removed = len(gone)
    if checkpoints:
        _reindex_checkpoints(git, index, res)
    notes_tip = refs.read(git, notes.NOTES_REF)
    if full or index.meta("notes_tip") != (str(notes_tip) if notes_tip else None):
        with index.write() as conn:
            conn.execute("DELETE FROM links")
        res.links = notes.rebuild_links(ctx)
        with index.write() as conn:
            index.put_meta(conn, "notes_tip", str(notes_tip) if notes_tip else None)
    return res  # the search index catches up at the next search: a pull's memory stays bounded


def _update_session(git: pygit2.Repository, index: Index, sid: str, oid: pygit2.Oid, tip: str | None,
                    res: ReindexResult) -> None:
    """The rows of one session's log, from where it differs from the tip the index knew."""
    try:
        log = sessionlog.load_commit(git, oid)
        old_tree = None
        if tip:
            try:
                old_tree = git[tip].peel(pygit2.Tree)
            except (KeyError, ValueError, pygit2.GitError):
                old_tree = None
        start = sessionlog.first_difference(git, old_tree, log.commit.tree)
        with index.write() as conn:  # one transaction: a log that fails half-way changes nothing
            n = _put_messages(index, conn, sid, sessionlog.iter_messages(git, log.commit.tree, start),
                              start)
            index.put_session(conn, log.session, log_commit=str(oid), count=log.count)
    except CorruptIndex:
        raise
    except OxideError as e:
        res.problems.append(f"{refs.SESSIONS}{sid}: {e.message}")  # type: ignore[union-attr]
        return
    res.sessions_updated += 1
    res.messages_indexed += n


def _reindex_checkpoints(git: pygit2.Repository, index: Index, res: ReindexResult) -> None:
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
    res.checkpoints_added = len(new_cps)
    res.checkpoints_removed = len(known - live)
