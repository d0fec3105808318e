"""The resume picker in a real terminal (tmux: a pty, key presses, the screen as the user sees it),
and its plain-list fallback without one."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, make_ctx, oxide

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
A = "0" * 11 + "1" + "a" * 20
B = "0" * 11 + "2" + "b" * 20


def _sessions(repo: Path) -> tuple[str, str]:
    ctx = make_ctx(repo)
    a = Session(id=A, agent="claude", title="fix the parser", worktree="main", branch="main", updated_at=2000)
    b = Session(id=B, agent="codex", title="write docs", worktree="main", branch="docs", updated_at=1000)
    store.append(ctx, a, [Message("user", (Part.text("the tokenizer breaks on tabs"),)),
                          Message("assistant", (Part.text("tabs are now spaces"),))])
    store.append(ctx, b, [Message("user", (Part.text("explain the storage layout"),))])
    checkpoint(ctx, session=a.id)
    return a.id, b.id


class Screen:
    """`git oxide ARGS` running in a tmux pane of 110x36."""

    def __init__(self, repo: Path, tmp: Path, *args: str) -> None:
        self.sock = str(tmp / "tmux.sock")
        env = {k: os.environ[k] for k in ("HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
                                          "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME",
                                          "XDG_CONFIG_HOME")}
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
        env["OXIDE_NOW"] = str(NOW_MS + 60_000)
        env["TERM"] = "xterm-256color"
        cmd = " ".join(["env", *(shlex.quote(f"{k}={v}") for k, v in env.items()), "git", "oxide",
                        *(shlex.quote(a) for a in args)])
        shell = f"cd {shlex.quote(str(repo))} && {cmd}; echo EXIT=$?; sleep 600"
        self._tmux("new-session", "-d", "-x", "110", "-y", "36", "-s", "pick", shell)

    def _tmux(self, *args: str) -> str:
        r = subprocess.run([str(TMUX), "-S", self.sock, "-f", "/dev/null", *args],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"tmux {args[0]} exited {r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "pick")

    def wait(self, needle: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if needle in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} not on screen:\n{screen}")
            time.sleep(0.1)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "pick", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "pick", "-l", text)

    def close(self) -> None:
        subprocess.run([str(TMUX), "-S", self.sock, "kill-server"], capture_output=True)
        deadline = time.monotonic() + 10  # the server goes away asynchronously: a new session on
        while time.monotonic() < deadline:  # the same socket would fail while it is still there
            alive = subprocess.run([str(TMUX), "-S", self.sock, "has-session"], capture_output=True)
            if alive.returncode != 0:
                break
            time.sleep(0.05)


@pytest.fixture
def screen_of(repo: Path, tmp_path: Path) -> Iterator[object]:
    opened: list[Screen] = []

    def start(*args: str) -> Screen:
        s = Screen(repo, tmp_path, *(args or ("resume",)))
        opened.append(s)
        return s

    yield start
    for s in opened:
        s.close()


def _row(screen: str, title: str) -> str:
    return next(line for line in screen.splitlines() if title in line and "ago" in line)


@pytest.mark.process
@needs_tmux
def test_arrows_move_the_highlight_and_the_preview_follows(repo: Path, screen_of) -> None:  # type: ignore[no-untyped-def]
    _sessions(repo)
    s = screen_of()
    screen = s.wait("Preview")
    assert _row(screen, "fix the parser").startswith("> ")  # the newest first, highlighted
    assert "prompt: the tokenizer breaks on tabs" in screen and "last answer: tabs are now spaces" in screen
    assert "checkpoints: 1; newest" in screen and "expires in" in screen
    assert "agent: all (Tab)" in screen and "worktree: this one (^W)" in screen  # filters on screen
    s.keys("Down")
    screen = s.wait("prompt: explain the storage layout")
    assert _row(screen, "write docs").startswith("> ") and not _row(screen, "fix the parser").startswith(">")
    assert "^[[B" not in screen  # an arrow key is a move, not text
    s.keys("Up")
    s.wait("prompt: the tokenizer breaks on tabs")


@pytest.mark.process
@needs_tmux
def test_typing_filters_by_message_text_and_tab_filters_the_agent(repo: Path, screen_of) -> None:  # type: ignore[no-untyped-def]
    _sessions(repo)
    s = screen_of()
    s.wait("Preview")
    s.type("storage layout")  # words of a message, not of a title: the full-text index
    screen = s.wait("1 of 2")
    assert "write docs" in screen and "fix the parser" not in screen
    for _ in "storage layout":
        s.keys("BSpace")
    s.wait("2 of 2")
    s.keys("Tab")  # agent filter: claude
    screen = s.wait("agent: claude (Tab)")
    assert "1 of 2" in screen and "fix the parser" in screen and "write docs" not in screen
    s.type("99")  # a number is text to filter by, shown as such; nothing is picked
    screen = s.wait("filter> 99")
    assert "0 of 2" in screen and "no session matches" in screen
    s.keys("Escape")
    assert "EXIT=0" in s.wait("EXIT=")


@pytest.mark.process
@needs_tmux
def test_enter_offers_the_actions_and_show_runs(repo: Path, screen_of) -> None:  # type: ignore[no-untyped-def]
    _sessions(repo)
    s = screen_of()
    s.wait("Preview")
    s.keys("Down", "Enter")
    screen = s.wait("what now?")
    assert "[r] resume in codex (its agent)" in screen and "resume in claude" in screen
    assert "[s] show it" in screen and "[f] fork it" in screen and "[e] export it" in screen
    s.keys("s")
    screen = s.wait("EXIT=")
    assert "explain the storage layout" in screen and "title:    write docs" in screen


@pytest.mark.process
@needs_tmux
def test_resume_into_another_agent_from_the_menu(repo: Path, screen_of) -> None:  # type: ignore[no-untyped-def]
    _sessions(repo)
    s = screen_of()
    s.wait("Preview")
    s.keys("Enter")  # on "fix the parser" (claude)
    s.wait("what now?")
    s.keys("Down", "Enter")  # the second action: resume in codex
    screen = s.wait("EXIT=")
    assert "EXIT=0" in screen and "codex resume" in screen  # the command that continues it


def test_picker_without_terminal_prints_a_numbered_list(repo: Path) -> None:
    _sessions(repo)
    r = oxide(repo, "resume", check=True)
    assert "  1. " in r.stdout and "fix the parser" in r.stdout
    assert "not a terminal" in r.stderr


@pytest.mark.process
@needs_tmux
def test_undo_on_a_terminal_names_the_operation_and_asks(repo: Path, screen_of) -> None:  # type: ignore[no-untyped-def]
    """Issue 14, item 11: undo says what it will undo and how long ago, and asks first."""
    oxide(repo, "init")
    cp = oxide(repo, "checkpoint", "-m", "good").stdout.strip()
    (repo / "README.md").write_text("later work\n")
    oxide(repo, "rewind", cp[:12], "--code", "--yes")
    s = screen_of("undo")
    screen = s.wait("Go ahead?")
    assert f"This will undo: rewind to {cp[:12]} (made " in screen and "modify README.md" in screen
    s.type("n")
    s.keys("Enter")
    assert "aborted; nothing was changed" in s.wait("EXIT=")
    assert (repo / "README.md").read_text() == "hello\n"
    s.close()
    s = screen_of("undo")
    s.wait("Go ahead?")
    s.type("y")
    s.keys("Enter")
    assert "Undid: rewind to" in s.wait("EXIT=0")
    assert (repo / "README.md").read_text() == "later work\n"
