"""Oxide's ref names and atomic ref updates (lock, compare with the expected old value, swap).

Two processes that update the same ref never lose each other's work: the loser sees that the ref
moved, and its caller rebuilds on the new tip. A lock held by another process is waited for within
a budget, then reported as ``LockTimeout``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from oxide_git.core.errors import DiskFull, LockTimeout, OxideError
from oxide_git.git.repo import common_dir_of

if TYPE_CHECKING:
    import pygit2

SESSIONS = "refs/oxide/sessions/"
CHECKPOINTS = "refs/oxide/checkpoints/"
OPLOG = "refs/oxide/oplog/"
MEMORY = "refs/oxide/memory"
TRASH = "refs/oxide/trash/"
OUTGOING = "refs/oxide/outgoing/"  # checkpoints as a push sends them (checkpoint_screen), never fetched
NOTES = "refs/notes/oxide"
AGENT_TRACE_NOTES = "refs/notes/agent-trace"  # Agent Trace records (``trace``)
AI_NOTES = "refs/notes/ai"  # Git AI authorship logs (``trace``)
TRACE_NOTES = (AGENT_TRACE_NOTES, AI_NOTES)

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
    import pygit2

    try:
        ref = repo.references.get(name)
    except (pygit2.GitError, ValueError):
        return None
    if ref is None:
        return None
    return ref.target if isinstance(ref.target, pygit2.Oid) else None


def iter_refs(repo: pygit2.Repository, prefix: str) -> Iterator[tuple[str, pygit2.Oid]]:
    import pygit2

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
    import pygit2

    def attempt() -> None:
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
        except pygit2.GitError as e:
            text = str(e).lower()
            # "failed to make directory": a concurrent `git gc` (pack-refs) removed an empty refs folder
            if "no space left" in text:
                raise DiskFull(repo.path.rstrip("/")) from e
            if "lock" not in text and "exists" not in text and "make directory" not in text:
                raise OxideError(f"cannot update {', '.join(changes)}: {e}") from e
            raise Locked from e

    retry_locked(common_dir(repo), list(changes), budget_s, attempt)


class Locked(Exception):
    """A ref's lock file is held (or its folder vanished under a concurrent pack-refs)."""


def retry_locked(common: Path, names: list[str], budget_s: float | None, attempt: Callable[[], None]) -> None:
    """Run ``attempt`` until it gets its locks: a stale lock is broken, a live one waited for
    within the budget, then reported as LockTimeout."""
    deadline = time.monotonic() + (LOCK_BUDGET_S if budget_s is None else budget_s)
    delay = 0.002
    while True:
        try:
            attempt()
            return
        except Locked as e:
            if _break_stale_locks(common, names):
                continue
            if time.monotonic() > deadline:
                raise LockTimeout(
                    f"{', '.join(sorted(names))} is locked by another process",
                    hint="if no git or git oxide process is running, `git oxide doctor` removes stale locks",
                ) from e
            _pause(delay, delay)
            delay = min(delay * 2, 0.1)


def read_raw(common: Path, name: str) -> bytes | None:
    """The raw id a ref points at, read from its file or ``packed-refs`` as git stores them (no
    pygit2: the session-log write path). A symbolic or unreadable ref is an error."""
    try:
        with open(common / name, "rb") as f:
            text = f.read().strip()
    except (FileNotFoundError, NotADirectoryError):
        return _packed(common, name.encode())
    except IsADirectoryError:
        return None
    except OSError as e:
        raise OxideError(f"cannot read {name}: {e.strerror}") from None
    return _hex_id(text, name)


def packed_refs(common: Path) -> dict[str, bytes]:
    """Every ref of ``packed-refs`` and the raw id it points at (read whole, once: a batch of
    lookups does not scan the file once each)."""
    out: dict[str, bytes] = {}
    try:
        with open(common / "packed-refs", "rb") as f:
            for line in f:
                if line[:1] not in (b"#", b"^") and len(line) > 41:
                    name = line.rstrip(b"\r\n")[41:].decode("utf-8", "surrogateescape")
                    out[name] = _hex_id(line[:40], name)
    except FileNotFoundError:
        pass
    return out


def _packed(common: Path, name: bytes) -> bytes | None:
    """The id ``packed-refs`` gives ``name``: the file searched whole for the line's end (`git gc`
    packs every ref: a store of 100,000 sessions is an 8 MB file, which a loop over its lines took
    tens of milliseconds to scan for each ref read)."""
    try:
        with open(common / "packed-refs", "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    key = b" " + name
    at = data.find(key)
    while at >= 0:
        end = at + len(key)
        start = data.rfind(b"\n", 0, at) + 1
        if data[end:end + 1] in (b"\n", b"\r", b"") and at - start == 40 and data[start:start + 1] != b"#":
            return _hex_id(data[start:at], name.decode())
        at = data.find(key, at + 1)
    return None


def _hex_id(text: bytes, name: str) -> bytes:
    try:
        if len(text) == 40:
            return bytes.fromhex(text.decode("ascii"))
    except ValueError:
        pass
    raise OxideError(f"{name} does not point at an object id", hint="run `git oxide doctor`")


def swap(common: Path, name: str, expected: bytes | None, new: bytes, budget_s: float | None = None) -> None:
    """Move one ref from ``expected`` (None: absent) to ``new`` under git's lock-file protocol (the
    one libgit2 and git use, so each waits for the other). RefMoved when it is elsewhere."""
    path = common / name
    lock = f"{path}.lock"

    def attempt() -> None:
        try:
            os.makedirs(path.parent, exist_ok=True)
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except (FileExistsError, FileNotFoundError) as e:
            raise Locked from e
        try:
            try:
                if read_raw(common, name) != expected:
                    raise RefMoved(name)
                os.write(fd, new.hex().encode() + b"\n")
            finally:
                os.close(fd)
            os.replace(lock, path)
        except BaseException:
            try:
                os.unlink(lock)
            except OSError:
                pass
            raise

    retry_locked(common, [name], budget_s, attempt)


def swap_all(common: Path, moves: list[tuple[str, bytes | None, bytes]]) -> bool:
    """Every ``(name, expected, new)`` of ``moves`` at once, in one `git update-ref --stdin`
    transaction: git locks each ref (the protocol of ``swap``), checks it is at ``expected`` (None:
    absent) and moves them all, or none. False when it did not (a ref elsewhere, a lock held):
    ``swap`` them one by one then. For the many refs of a bulk import: one process for all of them,
    where each ``swap`` reads the ref (and ``packed-refs``, where `git gc` put every ref) again."""
    import subprocess

    zero = b"0" * 40
    stdin = b"".join(b"update %s\0%s\0%s\0" % (name.encode(), new.hex().encode(),
                                                 expected.hex().encode() if expected else zero)
                     for name, expected, new in moves)
    try:  # no hook of the user's sees oxide's refs move (reference-transaction)
        done = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "--git-dir", str(common),
                               "update-ref", "--stdin", "-z"], input=stdin, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return False
    return done.returncode == 0


def common_dir(repo: pygit2.Repository) -> Path:
    """The shared gitdir (objects, refs) of the repository ``repo`` was opened on."""
    return common_dir_of(Path(repo.path))


def _break_stale_locks(common: Path, names: Iterable[str]) -> bool:
    """Remove ref locks older than STALE_LOCK_S: a ref update holds its lock for milliseconds, so
    such a lock was left by a process that died mid-update (git lock files name no owner)."""
    broke = False
    now = time.time()
    for name in names:
        lock = common / f"{name}.lock"
        try:
            if now - lock.stat().st_mtime > STALE_LOCK_S:
                lock.unlink()
                broke = True
        except OSError:
            continue
    return broke


def _pause(least: float, spread: float) -> None:
    """Sleep ``least`` plus a random part of ``spread`` (``random`` is imported only by a writer
    that has to wait)."""
    import random

    time.sleep(least + spread * random.random())


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
            _pause(0.0, 0.005)
        except OSError as e:
            if transient >= 20 or "lockfile" not in str(e):
                raise
            transient += 1
            _pause(0.01, 0.05)
    return fn()
