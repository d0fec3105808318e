"""The logs of a big reindex read in child processes while this one writes their rows.

A reindex is Python on one core: reading and decoding each message from git and working out its
index rows is about two thirds of it, SQLite writing the rows the rest. For many sessions (a full
reindex, a first pull of a team's store) ``run`` forks up to two children (``forked.workers``)
and deals the sessions out to them in turn; each child reads its sessions' logs
(``reindex.session_items``: where the rows start again, the rows a batch at a time, the session) and
sends them down a pipe; this process writes each session's rows in one transaction
(``reindex.write_session``), in the sessions' order, as a reindex in one process does.

A log that cannot be read (a hostile or damaged object) is a problem of that session only: the
child says so and goes on, and this process rolls that session's transaction back. A child that
dies, or an error on either side, stops the reindex there: what was written is whole sessions,
and a reindex again finishes the job.
"""

from __future__ import annotations

import functools
import os
import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from oxide_git.core.errors import OxideError
from oxide_git.core.forked import BUFFER, fork, in_child, raise_sent, reap, workers

if TYPE_CHECKING:
    import pygit2

    from oxide_git.git.repo import Repo
    from oxide_git.store.index import Index
    from oxide_git.store.reindex_items import Item, ReindexResult

FORK_FROM = 8  # sessions to read: fewer cost less than a fork (the reindex after an undo, a rm)
Job = tuple[str, "pygit2.Oid", "str | None"]  # a session to read: its id, its log, the tip known


def run(repo: Repo, index: Index, jobs: list[Job], res: ReindexResult) -> None:
    """The sessions ``jobs`` read by child processes (each opens ``repo``'s folders anew) and
    written to ``index`` here, in order."""
    from oxide_git.store.reindex_items import write_session

    n = max(1, min(workers(len(jobs)), len(jobs)))
    forked = [fork(functools.partial(_child, repo=repo, jobs=jobs[i::n])) for i in range(n)]
    pipes = [os.fdopen(rfd, "rb", buffering=BUFFER) for _pid, rfd in forked]
    clean = False
    try:
        for at, (sid, oid, _tip) in enumerate(jobs):
            write_session(index, sid, oid, _items(pipes[at % n]), res)
        clean = True
    except _Stopped as e:  # that session's transaction rolled back: the sessions before it are whole
        if e.item is not None and e.item[0] == "error":
            raise_sent(e.item, "the session logs")
        raise OxideError("the process reading the session logs ended unexpectedly",
                         hint="run `git oxide reindex` again: what was written is kept") from None
    finally:
        reap(forked, pipes, clean)


class _Stopped(Exception):  # not an OxideError: not one session's problem, the reindex stops
    def __init__(self, item: Any) -> None:
        super().__init__()
        self.item = item  # what the child said (an error), or None: it ended mid-item or early


def _items(pipe: BinaryIO) -> Iterator[Item]:
    """One session's items from its child; a log the child could not read raises its OxideError
    (the session's transaction is rolled back), after which the pipe is at the next session."""
    while True:
        try:
            item = pickle.load(pipe)
        except (EOFError, pickle.UnpicklingError):  # no more, or cut short: the child died mid-item
            raise _Stopped(None) from None
        kind = item[0]
        if kind == "problem":
            raise OxideError(item[1])
        if kind not in ("start", "rows", "session"):
            raise _Stopped(item)
        yield item
        if kind == "session":
            return


def _child(pipe: BinaryIO, repo: Repo, jobs: list[Job]) -> None:  # pragma: no cover - the child
    def work() -> None:
        from oxide_git.git.repo import Repo
        from oxide_git.store.reindex_items import session_items

        # its own (the same folders, nothing cached): libgit2's caches, the mapped packs and the
        # object store's open packs stay the parent's
        own = Repo(repo.workdir, repo.git_dir, repo.common_dir)
        for _sid, oid, tip in jobs:
            try:
                for item in session_items(own, oid, tip):
                    pickle.dump(item, pipe, protocol=pickle.HIGHEST_PROTOCOL)
            except OxideError as e:
                pickle.dump(("problem", e.message), pipe)
        pipe.flush()

    in_child(pipe, work)
