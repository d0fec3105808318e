"""Rebuild the SQLite index from ``refs/oxide/*``: only what it has not seen, or everything."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Protocol

import pygit2

from oxide_git.core import forked
from oxide_git.git import refs
from oxide_git.store import notes, reindex_worker, snapshots
from oxide_git.store.reindex_items import BATCH as BATCH
from oxide_git.store.reindex_items import Item as Item
from oxide_git.store.reindex_items import ReindexResult as ReindexResult
from oxide_git.store.reindex_items import session_items as session_items
from oxide_git.store.reindex_items import write_session as write_session
from oxide_git.store.search_index import EPOCH_KEY, new_epoch

if TYPE_CHECKING:
    from oxide_git.git.repo import Repo
    from oxide_git.store.index import Index

ONE_BY_ONE = 1000  # past this many sessions asked for, one pass over all the refs costs less


class Store(Protocol):
    """What a reindex reads and writes: a repository and its index (a ``store.context.Context``,
    which rebuilds a missing index through ``reindex``)."""

    @property
    def repo(self) -> Repo: ...

    @property
    def index(self) -> Index: ...


def reindex(ctx: Store, *, full: bool = False, sessions: Collection[str] | None = None,
            checkpoints: bool = True) -> ReindexResult:
    """Bring the index up to the refs. ``full`` drops every row first. ``sessions``: only these
    (a pull knows what it moved: the store's other 100,000 refs and rows are not read), and the
    checkpoints only when ``checkpoints``."""
    git = ctx.repo.git
    index = ctx.index  # the context's own, while it rebuilds it too
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
        reindex_worker.run(ctx.repo, index, todo, res)
    else:
        for sid, oid, tip in todo:
            write_session(index, sid, oid, session_items(ctx.repo, oid, tip), res)
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
