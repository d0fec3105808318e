"""Which ref locks a live git oxide process holds, so that only a dead process's lock is broken.

Git's lock files (``<ref>.lock``) name no owner: the file becomes the ref. A lock left by a
process that died mid-update must be broken (``refs`` does, after ``STALE_LOCK_S``), and one held
by a live process that only stalled (suspended with Ctrl-Z, starved on a loaded host) must not
be: its owner would later rename its lock over the ref that the breaker's own update had moved,
and one of the two updates would be lost.

So every oxide writer holds a shared ``flock`` on its ref's stripe (a file of
``<git-common-dir>/oxide/locks/``) from before it creates the lock until it has renamed or
removed it, and a breaker takes the stripe exclusively without waiting, and breaks only when it
gets it. The kernel drops a dead process's ``flock``, so its lock stays breakable; a live writer's
never is. Git's own processes take no stripe: their locks are judged by age alone, as before.
"""

from __future__ import annotations

import fcntl
import os
import threading
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

STRIPES = 64  # files, each shared by the refs whose name hashes to it
_guard = threading.Lock()
# (pid, common dir, stripe) -> [its open file, how many holders in this process share its flock].
# The pid: a forked child opens its own (a flock is the open file's, and a child releasing an
# inherited one would release its parent's). A file is closed when its last holder is done.
_open: dict[tuple[int, str, int], list[int]] = {}


def stripe(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "surrogateescape")) % STRIPES


def _open_stripe(common: Path, n: int) -> int | None:
    folder = common / "oxide" / "locks"
    try:
        os.makedirs(folder, exist_ok=True)
        return os.open(folder / f"{n:02d}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        return None  # a read-only repository: whoever writes its refs there is not us


@contextmanager
def holding(common: Path, names: Iterable[str]) -> Iterator[None]:
    """Hold the stripes of ``names`` (shared with other writers, taken in a fixed order) while the
    block creates, renames or removes their lock files."""
    pid, where = os.getpid(), str(common)
    keys = [(pid, where, n) for n in sorted({stripe(x) for x in names})]
    taken: list[tuple[int, str, int]] = []
    try:
        for key in keys:
            with _guard:
                got = _open.get(key)
                if got is None:
                    fd = _open_stripe(common, key[2])
                    if fd is None:
                        continue
                    fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while a breaker judges a lock
                    got = _open[key] = [fd, 0]
                got[1] += 1
            taken.append(key)
        yield
    finally:
        for key in reversed(taken):
            with _guard:
                got = _open[key]
                got[1] -= 1
                if not got[1]:
                    del _open[key]
                    os.close(got[0])  # releases the flock


@contextmanager
def breaking(common: Path, name: str) -> Iterator[bool]:
    """Whether no live git oxide process is inside an update of a ref of ``name``'s stripe; when
    none is, the stripe is held exclusively for the block (so none starts one while a lock is
    judged and broken). This process's own hold does not count (it is the one that waits)."""
    key = (os.getpid(), str(common), stripe(name))
    with _guard:
        mine = _open.get(key)
    fd = mine[0] if mine else _open_stripe(common, key[2])
    if fd is None:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if mine:  # a failed conversion may have dropped the shared hold (flock(2))
                fcntl.flock(fd, fcntl.LOCK_SH)
            yield False
            return
        try:
            yield True
        finally:
            if mine:
                fcntl.flock(fd, fcntl.LOCK_SH)
    finally:
        if not mine:
            os.close(fd)
