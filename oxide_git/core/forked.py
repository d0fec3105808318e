"""Children forked to do a share of a run (an import's parsing, a reindex's reading): when to
fork, how many, each one's pipe (widened: a batch of megabytes crosses it at once), what it sends
when it fails, and its end. What they do and send is ``import_worker``'s and ``reindex_worker``'s.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from oxide_git.core.errors import OxideError

BUFFER = 1 << 20  # the pipes' buffers in both processes


def available(own_threads: int = 0) -> bool:
    """Forking is only safe in a process that runs no other thread (the `watch` daemon does);
    ``own_threads``: the caller's, which it stops before forking."""
    return hasattr(os, "fork") and threading.active_count() == 1 + own_threads


def workers(jobs: int) -> int:
    """How many children parse a run of ``jobs`` small files: two when this process may run on two
    cores or more, else one (and one when there are fewer than eight files: four each is the least
    worth a fork). Parsing a user's whole history takes about as long as storing it: with one
    child this process waited for it; with two, this process's main thread is the slower part
    (busy 91% of the run), so a third would only hold memory."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, jobs // 4, 2))


def reap(children: list[tuple[int, int]], pipes: list[Any], clean: bool) -> None:
    """The ``children`` (pid, pipe) waited for, killed first unless their run ended ``clean`` (stopped
    early, or failed: they may still be at work); then, their ends closed, ``pipes``."""
    for pid, _rfd in children:
        if not clean:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    for pipe in pipes:
        pipe.close()


def fork(child: Callable[[BinaryIO], None]) -> tuple[int, int]:
    """A child process running ``child(pipe)`` (it never returns); its pid and the pipe's read end."""
    rfd, wfd = os.pipe()
    _widen(wfd)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its work is checked through what the parent stores
        os.close(rfd)
        child(os.fdopen(wfd, "wb", buffering=BUFFER))
    os.close(wfd)
    return pid, rfd


def _widen(fd: int) -> None:
    """A pipe holds 64 KB: a batch of megabytes would cross it in a hundred round trips between
    the two processes. Linux lets a pipe grow to ``/proc/sys/fs/pipe-max-size`` (1 MB by default)."""
    try:
        import fcntl

        with open("/proc/sys/fs/pipe-max-size") as f:
            size = int(f.read())
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), min(size, 1 << 24))
    except (OSError, ValueError, ImportError):
        pass  # elsewhere, or not allowed: the default size works, more slowly


def raise_sent(item: Any, what: str) -> None:
    """What an ``("error", ...)`` item says, raised here."""
    _, message, hint, detail = item
    if detail is None:
        raise OxideError(message, hint=hint)
    raise RuntimeError(f"in the process parsing {what}: {detail}")


def in_child(pipe: BinaryIO, work: Callable[[], None]) -> None:  # pragma: no cover - the child
    """``work()``, then the child ends: an error is sent to the parent, which raises (and logs) it."""
    code = 1
    try:
        work()
        code = 0
    except OxideError as e:
        pickle.dump(("error", e.message, e.hint, None), pipe)
    except BaseException as e:
        import traceback

        pickle.dump(("error", str(e), None, traceback.format_exc()), pipe)
    finally:
        try:
            pipe.flush()
        finally:
            os._exit(code)
