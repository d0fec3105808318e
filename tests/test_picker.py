"""The resume picker in a real pseudo-terminal, and its plain-list fallback without one."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

from oxide_git import store
from oxide_git.checkpoint import checkpoint
from oxide_git.model import Message, Part, Session

from .conftest import NOW_MS, make_ctx, oxide


def _sessions(repo: Path) -> tuple[str, str]:
    ctx = make_ctx(repo)
    a = Session(id="0" * 11 + "1" + "a" * 20, agent="claude", title="fix the parser", worktree="main",
                branch="main", updated_at=2000)
    b = Session(id="0" * 11 + "2" + "b" * 20, agent="codex", title="write docs", worktree="main",
                branch="docs", updated_at=1000)
    store.append(ctx, a, [Message("user", (Part.text("the tokenizer breaks on tabs"),))])
    store.append(ctx, b, [Message("user", (Part.text("explain the storage layout"),))])
    checkpoint(ctx, session=a.id)
    return a.id, b.id


def _read_until(fd: int, needle: bytes, timeout: float = 20) -> bytes:
    buf = b""
    deadline = time.monotonic() + timeout
    while needle not in buf:
        if time.monotonic() > deadline:
            raise AssertionError(f"{needle!r} not seen in {buf.decode(errors='replace')}")
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return buf


def test_picker_filters_and_picks_in_a_terminal(repo: Path) -> None:
    _a, b = _sessions(repo)
    pid, fd = pty.fork()
    if pid == 0:  # child: the real command on a terminal
        os.chdir(repo)
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
        os.environ["OXIDE_NOW"] = str(NOW_MS + 60_000)
        os.execvp("git", ["git", "oxide", "resume"])
    screen = _read_until(fd, b"filter [")
    assert b"fix the parser" in screen and b"write docs" in screen
    assert b"checkpoint " in screen and b"expires in" in screen  # the preview shows the expiry
    os.write(fd, b"storage layout\r")  # type to filter through the full-text index
    screen = _read_until(fd, b"filter [storage layout]")
    listed = screen.split(b"filter [storage layout]")[0].rsplit(b"filter [", 1)[-1]
    assert b"write docs" in listed and b"fix the parser" not in listed
    os.write(fd, b"1\r")
    out = _read_until(fd, b"hint:")
    assert b.encode() in out
    os.waitpid(pid, 0)


def test_picker_without_terminal_prints_a_numbered_list(repo: Path) -> None:
    _sessions(repo)
    r = oxide(repo, "resume", check=True)
    assert "  1. " in r.stdout and "fix the parser" in r.stdout
    assert "not a terminal" in r.stderr
