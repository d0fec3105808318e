"""Issue 38 item 3: `show` on a terminal pages as git does; a pipe is never paged."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oxide_git.cli.pager import command
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store
from tests.conftest import git, make_ctx, oxide

SID = "019c49c68c4c" + "a" * 20


def _session(repo: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    s = Session(id=SID, agent="claude", native_id="n1", worktree=ctx.repo.worktree_id)
    store.append(ctx, s, [Message("user", (Part.text("page me please"),)),
                          Message("assistant", (Part.text("paged answer"),))])
    ctx.close()


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("LESS", None)
    env.pop("GIT_PAGER_IN_USE", None)
    # The pager: it records that it ran, with what environment, and what it read.
    env["GIT_PAGER"] = f"env > {tmp}/pager.env; cat > {tmp}/paged.txt"
    env.update(extra)
    return env


def _on_a_terminal(repo: Path, env: dict[str, str], *args: str, git_options: tuple[str, ...] = ()
                   ) -> tuple[int, str]:
    """`git oxide ARGS` with its stdin, stdout and stderr on a real pseudo-terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(["git", *git_options, "oxide", *args], cwd=repo, env=env, stdin=slave, stdout=slave,
                            stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other side is closed: every process holding it has exited
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.wait(timeout=30), seen.decode("utf-8", "replace")


@pytest.mark.process
def test_show_on_a_terminal_goes_through_the_pager(repo: Path, tmp_path: Path) -> None:
    _session(repo)
    rc, screen = _on_a_terminal(repo, _env(tmp_path), "show", SID[:12])
    assert rc == 0, screen
    paged = (tmp_path / "paged.txt").read_text()
    assert "page me please" in paged and "paged answer" in paged
    assert "page me please" not in screen  # it went to the pager, not around it
    env = (tmp_path / "pager.env").read_text().splitlines()
    assert "LESS=FRX" in env and "GIT_PAGER_IN_USE=true" in env


@pytest.mark.parametrize(("git_options", "args"), [((), ("show", "--no-pager")), ((), ("-P", "show")),
                                                     (("--no-pager",), ("show",))])
@pytest.mark.process
def test_no_pager_prints_to_the_terminal(repo: Path, tmp_path: Path, git_options: tuple[str, ...],
                                         args: tuple[str, ...]) -> None:
    """`show --no-pager`, `git oxide -P show`, and git's own `git --no-pager oxide show`."""
    _session(repo)
    rc, screen = _on_a_terminal(repo, _env(tmp_path), *args, SID[:12], git_options=git_options)
    assert rc == 0, screen
    assert "page me please" in screen
    assert not (tmp_path / "pager.env").exists()


@pytest.mark.process
def test_a_pipe_is_never_paged(repo: Path, tmp_path: Path) -> None:
    _session(repo)
    r = subprocess.run(["git", "oxide", "show", SID[:12]], cwd=repo, env=_env(tmp_path),
                       capture_output=True, text=True, check=True)
    assert "page me please" in r.stdout
    assert not (tmp_path / "pager.env").exists()


@pytest.mark.process
def test_a_pager_quit_early_is_not_an_error(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    s = Session(id=SID, agent="claude", native_id="n1", worktree=ctx.repo.worktree_id)
    store.append(ctx, s, [Message("user", (Part.text(f"line {i} " + "x" * 200),)) for i in range(3000)])
    ctx.close()
    rc, screen = _on_a_terminal(repo, _env(tmp_path, GIT_PAGER="head -c 10 >/dev/null"), "show", SID[:12])
    assert rc == 0, screen
    assert "error" not in screen and "Traceback" not in screen


def test_which_pager_git_would_use(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    env = {"PAGER": "more"}
    assert command(env) == "more"
    git(repo, "config", "core.pager", "most")
    assert command(env) == "most"  # core.pager before PAGER
    assert command({**env, "GIT_PAGER": "less -S"}) == "less -S"  # GIT_PAGER before both
    assert command({"GIT_PAGER": "cat"}) is None and command({"GIT_PAGER": ""}) is None
    git(repo, "config", "--unset", "core.pager")
    assert command({}) == "less"
