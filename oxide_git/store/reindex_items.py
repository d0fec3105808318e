"""What a reindex reads of one session's log (session_items) and writes of it into the index
(write_session), in this process or in a worker (reindex_worker)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pygit2

from oxide_git.core.errors import CorruptIndex, OxideError
from oxide_git.git import refs
from oxide_git.store import sessionlog

if TYPE_CHECKING:
    from oxide_git.git.repo import Repo
    from oxide_git.store.index import Index

BATCH = 2000


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


def session_items(repo: Repo, oid: pygit2.Oid, tip: str | None) -> Iterator[Item]:
    """What the index needs of one session's log, read from where it differs from the tip the
    index knew: where its rows start again, then their rows a batch at a time (a log of a million
    messages costs the memory of one batch, not of the log), then the session and its count.
    Stdlib and git only: run here, or in a child process (``reindex_worker``)."""
    from oxide_git.store.index_rows import message_rows

    log = sessionlog.load_commit(repo, oid)
    old_tree = None
    if tip:
        try:
            old_tree = repo.git[tip].peel(pygit2.Tree)
        except (KeyError, ValueError, pygit2.GitError):
            old_tree = None
    start = sessionlog.first_difference(repo, old_tree, log.commit.tree)
    yield ("start", start)
    messages = sessionlog.iter_messages(repo, log.commit.tree, start)
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
