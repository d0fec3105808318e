"""Rebuild the SQLite index from ``refs/oxide/*``: only what it has not seen, or everything."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pygit2

from oxide_git.core import forked
from oxide_git.core.errors import CorruptIndex, OxideError
from oxide_git.git import refs
from oxide_git.store import notes, reindex_worker, sessionlog, snapshots
from oxide_git.store.context import Context
from oxide_git.store.search_index import EPOCH_KEY, new_epoch

if TYPE_CHECKING:
    from oxide_git.store.index import Index

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


Item = tuple[Any, ...]  # ("start", seq), ("rows", seqs, rows) ..., ("session", session, count)


def session_items(git: pygit2.Repository, oid: pygit2.Oid, tip: str | None) -> Iterator[Item]:
    """What the index needs of one session's log, read from where it differs from the tip the
    index knew: where its rows start again, then their rows a batch at a time (a log of a million
    messages costs the memory of one batch, not of the log), then the session and its count.
    Stdlib and git only: run here, or in a child process (``reindex_worker``)."""
    from oxide_git.store.index_rows import message_rows

    log = sessionlog.load_commit(git, oid)
    old_tree = None
    if tip:
        try:
            old_tree = git[tip].peel(pygit2.Tree)
        except (KeyError, ValueError, pygit2.GitError):
            old_tree = None
    start = sessionlog.first_difference(git, old_tree, log.commit.tree)
    yield ("start", start)
    messages = sessionlog.iter_messages(git, log.commit.tree, start)
    while batch := dict(itertools.islice(messages, BATCH)):
        yield ("rows", sorted(batch), message_rows(batch))
    yield ("session", log.session, log.count)


def write_session(index: Index, sid: str, oid: pygit2.Oid, items: Iterator[Item], res: ReindexResult) -> None:
    """The rows ``items`` (``session_items``) stand for, in one transaction: a log that fails half-way
    (an OxideError from the items) changes nothing and is named in ``res.problems``."""
    n = 0
    try:
        with index.write() as conn:
            for item in items:
                if item[0] == "start":
                    index.put_messages(conn, sid, {}, truncate_at=item[1])
                elif item[0] == "rows":
                    index.put_rows(conn, sid, item[1], item[2])
                    n += len(item[1])
                else:
                    index.put_session(conn, item[1], log_commit=str(oid), count=item[2])
    except CorruptIndex:
        raise
    except OxideError as e:
        res.problems.append(f"{refs.SESSIONS}{sid}: {e.message}")  # type: ignore[union-attr]
        return
    res.sessions_updated += 1
    res.messages_indexed += n


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
    todo: list[tuple[str, pygit2.Oid, str | None]] = []
    for sid, oid in found:
        seen.add(sid)
        if tips.get(sid) != str(oid):
            todo.append((sid, oid, tips.get(sid)))
    if len(todo) >= reindex_worker.FORK_FROM and forked.available():
        reindex_worker.run(ctx.repo.git.path, index, todo, res)
    else:
        for sid, oid, tip in todo:
            write_session(index, sid, oid, session_items(git, oid, tip), res)
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


def _reindex_checkpoints(git: pygit2.Repository, index: Index, res: ReindexResult) -> None:
    known = index.checkpoint_ids()
    live: set[str] = set()
    new_cps: list[snapshots.Checkpoint] = []
    for name, oid in refs.iter_refs(git, refs.CHECKPOINTS):
        # its id is the commit's, or the one its name says when it is a pulled twin of it
        ids = {str(oid), name.rsplit("/", 1)[-1]}
        live |= ids
        if not ids.isdisjoint(known):
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
