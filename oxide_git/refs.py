"""Oxide's ref names and atomic ref updates (lock, compare with the expected old value, swap).

Two processes that update the same ref never lose each other's work: the loser sees that the ref
moved, and its caller rebuilds on the new tip. A lock held by another process is waited for within
a budget, then reported as ``LockTimeout``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import pygit2

from .errors import LockTimeout, OxideError
from .repo import common_dir_of

SESSIONS = "refs/oxide/sessions/"
CHECKPOINTS = "refs/oxide/checkpoints/"
OPLOG = "refs/oxide/oplog/"
MEMORY = "refs/oxide/memory"
TRASH = "refs/oxide/trash/"
NOTES = "refs/notes/oxide"

LOCK_BUDGET_S = 10.0
STALE_LOCK_S = 30.0

T = TypeVar("T")


def session_ref(session_id: str) -> str:
    return SESSIONS + session_id


def checkpoint_ref(owner: str, checkpoint_id: str) -> str:
    """``owner`` is a session id, or ``manual`` for checkpoints taken without a session."""
    return f"{CHECKPOINTS}{owner}/{checkpoint_id}"


class RefMoved(Exception):
    """The ref was not at the expected value: rebuild on the new tip and try again."""


def read(repo: pygit2.Repository, name: str) -> pygit2.Oid | None:
    try:
        ref = repo.references.get(name)
    except (pygit2.GitError, ValueError):
        return None
    if ref is None:
        return None
    return ref.target if isinstance(ref.target, pygit2.Oid) else None


def iter_refs(repo: pygit2.Repository, prefix: str) -> Iterator[tuple[str, pygit2.Oid]]:
    for ref in repo.references.iterator():
        name = ref.name
        if name.startswith(prefix) and isinstance(ref.target, pygit2.Oid):
            yield name, ref.target


def update(
    repo: pygit2.Repository,
    changes: dict[str, tuple[pygit2.Oid | None, pygit2.Oid | None]],
    message: str,
    budget_s: float | None = None,
) -> None:
    """Atomically apply ``{ref: (expected_old, new)}``; ``new=None`` deletes.

    Raises RefMoved when a ref is not at its expected value, LockTimeout when a lock stays held.
    """
    deadline = time.monotonic() + (LOCK_BUDGET_S if budget_s is None else budget_s)
    delay = 0.002
    while True:
        try:
            with repo.transaction() as txn:
                for name in sorted(changes):
                    txn.lock_ref(name)
                for name, (old, _new) in changes.items():
                    if read(repo, name) != old:
                        raise RefMoved(name)
                for name, (_old, new) in changes.items():
                    if new is None:
                        txn.remove(name)
                    else:
                        txn.set_target(name, new, message=message)
            return
        except pygit2.GitError as e:
            text = str(e).lower()
            # "failed to make directory": a concurrent `git gc` (pack-refs) removed an empty refs folder
            if "lock" not in text and "exists" not in text and "make directory" not in text:
                raise OxideError(f"cannot update {', '.join(changes)}: {e}") from e
            if _break_stale_locks(repo, changes):
                continue
            if time.monotonic() > deadline:
                raise LockTimeout(
                    f"{', '.join(sorted(changes))} is locked by another process",
                    hint="if no git or git oxide process is running, `git oxide doctor` removes stale locks",
                ) from e
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.1)


def common_dir(repo: pygit2.Repository) -> Path:
    """The shared gitdir (objects, refs) of the repository ``repo`` was opened on."""
    return common_dir_of(Path(repo.path))


def _break_stale_locks(repo: pygit2.Repository, names: Iterable[str]) -> bool:
    """Remove ref locks older than STALE_LOCK_S: a ref update holds its lock for milliseconds, so
    such a lock was left by a process that died mid-update (git lock files name no owner)."""
    broke = False
    now = time.time()
    for name in names:
        lock = common_dir(repo) / f"{name}.lock"
        try:
            if now - lock.stat().st_mtime > STALE_LOCK_S:
                lock.unlink()
                broke = True
        except OSError:
            continue
    return broke


def retry_on_move(fn: Callable[[], T], attempts: int = 1000) -> T:
    """Run ``fn`` until it does not raise RefMoved (another writer got there first).

    Also retried, a few times: libgit2 failing to rename a new loose object into place because a
    concurrent `git gc` removed its (empty) fan-out folder; the write is simply done again.
    """
    transient = 0
    for _ in range(attempts - 1):
        try:
            return fn()
        except RefMoved:
            time.sleep(random.random() * 0.005)
        except OSError as e:
            if transient >= 20 or "lockfile" not in str(e):
                raise
            transient += 1
            time.sleep(0.01 + random.random() * 0.05)
    return fn()
