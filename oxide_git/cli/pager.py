"""Long output through a pager on a terminal, as git pages it.

The pager is git's: ``GIT_PAGER``, then ``core.pager``, then ``PAGER``, then ``less``; ``cat`` or
an empty one means none. As git does, ``LESS=FRX`` (quit when it fits on one screen, keep colours,
do not clear the screen) and ``LV=-c`` are set when unset. Nothing is paged when stdout is not a
terminal, under ``--no-pager`` (the command's or ``git oxide --no-pager``), or when git has already
started one (``GIT_PAGER_IN_USE``). Like git, the pager reads our file descriptor 1: everything
the command prints goes through it, and the command waits for it before it exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_disabled = False  # `git oxide --no-pager`


def disable() -> None:
    global _disabled
    _disabled = True


def enable() -> None:
    """Undo ``disable`` (a process that goes on, at a new command)."""
    global _disabled
    _disabled = False


def command(env: dict[str, str] | None = None) -> str | None:
    """The pager git would start here (None: none), whether or not stdout is a terminal."""
    env = dict(os.environ) if env is None else env
    pager = env.get("GIT_PAGER")
    if pager is None:
        pager = _config_pager()
    if pager is None:
        pager = env.get("PAGER")
    if pager is None:
        pager = "less"
    pager = pager.strip()
    return None if pager in ("", "cat") else pager


def _config_pager() -> str | None:
    try:
        done = subprocess.run(["git", "config", "--get", "core.pager"], capture_output=True,
                              text=True, check=False)
    except OSError:
        return None
    return done.stdout.rstrip("\n") if done.returncode == 0 else None


def wanted(no_pager: bool = False) -> bool:
    """Whether output is paged: a terminal, and no one said otherwise."""
    if no_pager or _disabled or os.environ.get("GIT_PAGER_IN_USE"):
        return False
    try:
        return os.isatty(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's runner, a closed one)
        return False


@contextmanager
def paged(no_pager: bool = False) -> Iterator[None]:
    """What is printed inside goes through the pager when ``wanted``."""
    pager = command() if wanted(no_pager) else None
    if pager is None:
        yield
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    env["GIT_PAGER_IN_USE"] = "true"
    sys.stdout.flush()
    try:
        proc = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:  # no shell: print as if there were no pager
        yield
        return
    saved = os.dup(1)
    assert proc.stdin is not None
    os.dup2(proc.stdin.fileno(), 1)
    proc.stdin.close()
    try:
        yield
    except BrokenPipeError:  # the user quit the pager before the end: as git, not an error
        pass
    finally:
        _flush_or_drop()
        os.dup2(saved, 1)  # the pager sees the end of its input
        os.close(saved)
        try:
            proc.wait()
        except KeyboardInterrupt:  # ^C in the pager reaches us too: wait for it to restore the tty
            proc.wait()


def _flush_or_drop() -> None:
    """Flush stdout into the pager; what it no longer reads (it was quit) is dropped."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
        try:
            sys.stdout.flush()
        except (OSError, ValueError):  # pragma: no cover - devnull takes everything
            pass
