"""Isolation for every test: HOME, git config and the agents' folders point at temporary places."""

from __future__ import annotations

import contextlib
import io
import json
import locale
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REAL_HOME = os.path.expanduser("~")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig-test"
    gitconfig.write_text("")
    template = home / "git-template"
    template.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(template))
    for k, v in {
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_NAME": "Test Committer",
        "GIT_COMMITTER_EMAIL": "committer@example.com",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "COPILOT_HOME": str(home / ".copilot"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }.items():
        monkeypatch.setenv(k, v)
    for k in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR", "OXIDE_NOW",
              "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "GEMINI_CLI_HOME", "QWEN_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "CLINE_PROVIDER_SETTINGS_PATH"):
        monkeypatch.delenv(k, raising=False)  # Cline's store: under the test's HOME
    try:
        import pygit2

        for level in (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG,
                      pygit2.enums.ConfigLevel.SYSTEM):
            pygit2.settings.search_path[level] = str(home)
    except ImportError:  # pragma: no cover
        pass
    return home


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run the real git CLI and return its stdout."""
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {r.stderr}")
    return r.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real repository with one commit: README.md and src/app.py."""
    return new_repo(tmp_path / "repo")


def new_repo(root: Path) -> Path:
    """The ``repo`` fixture's repository, at ``root`` (for tests that need several)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def make_ctx(path: Path, now_ms: int = NOW_MS):  # type: ignore[no-untyped-def]
    """An operation context on the repository at ``path`` with a pinned clock."""
    from oxide_git.git.repo import find_repo
    from oxide_git.store.context import Context

    return Context(find_repo(path), now_ms, dict(os.environ))


def oxide(cwd: Path, *args: str, check: bool = True, input: str | None = None,
          process: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `git oxide ARGS` in ``cwd``: in this process (``in_process``), or with ``process=True``
    (or OXIDE_TEST_PROCESSES=1 for every call) as the real command git finds on PATH."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if process or os.environ.get("OXIDE_TEST_PROCESSES") == "1":
        r = subprocess.run(["git", "oxide", *args], cwd=cwd, capture_output=True, text=True, env=env,
                           input=input)
    else:
        r = in_process(cwd, list(args), env, input)
    if check and r.returncode != 0:
        raise AssertionError(f"git oxide {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def oxide_process(cwd: Path, *args: str, check: bool = True, input: str | None = None
                  ) -> subprocess.CompletedProcess[str]:
    """``oxide`` as a real process: where the process is the point (its start, its end, its
    signals, a hook or an agent that runs it)."""
    return oxide(cwd, *args, check=check, input=input, process=True)


_GIT_EXEC_PATH: list[str] = []
_SIGNALS = [getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGCHLD", "SIGUSR1")
            if hasattr(signal, n)]


def in_process(cwd: Path, args: list[str], env: dict[str, str], input: str | None
               ) -> subprocess.CompletedProcess[str]:
    """`git oxide ARGS` run by the console script's own code (``entry.run``, fast paths and click
    alike) in this process, as git would start it: ``cwd``, ``env`` plus what git adds (its exec
    path), ``sys.argv`` as the script sees it, stdin from ``input`` (else empty), and file
    descriptors 0, 1 and 2 on files, so that ``os.write``, ``sys.stdout.buffer`` and the git
    processes it starts are captured as a process's would be. Its exit code is what the
    interpreter makes of ``sys.exit``'s argument; an exception it lets out is printed as a
    traceback, exit code 1. Afterwards this process is as before: cwd, environment, argv,
    streams, signal handlers; the threads it started and did not leave as daemons are joined (as
    at a process's exit); ``entry.run`` drops what the process's end would have dropped."""
    from oxide_git import entry

    if not _GIT_EXEC_PATH:
        _GIT_EXEC_PATH.append(subprocess.run(["git", "--exec-path"], capture_output=True, text=True,
                                             check=True).stdout.strip())
    env = dict(env, GIT_EXEC_PATH=_GIT_EXEC_PATH[0])
    env["PATH"] = _GIT_EXEC_PATH[0] + os.pathsep + env["PATH"]
    saved = (os.getcwd(), dict(os.environ), sys.argv, sys.stdin, sys.stdout, sys.stderr,
             {s: signal.getsignal(s) for s in _SIGNALS})
    threads = set(threading.enumerate())
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    code: object = 1
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(tempfile.TemporaryFile()) for _ in range(3)]
        files[0].write((input or "").encode())
        files[0].seek(0)
        fds = [os.dup(fd) for fd in (0, 1, 2)]
        try:
            for fd, f in enumerate(files):
                os.dup2(f.fileno(), fd)
            sys.stdin = stack.enter_context(open(0, encoding="utf-8", errors="surrogateescape", closefd=False))
            sys.stdout = stack.enter_context(open(1, "w", encoding="utf-8", errors="surrogateescape",
                                                  closefd=False))
            sys.stderr = stack.enter_context(open(2, "w", encoding="utf-8", errors="backslashreplace",
                                                  closefd=False))
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(env)
            sys.argv = [str(Path(sys.executable).parent / "git-oxide"), *args]
            try:
                code, _quick = entry.run(args, own_process=False)
            except SystemExit as e:
                code = e.code
            except BaseException:
                traceback.print_exc()
                code = 1
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)  # what the interpreter does with sys.exit("text")
                code = 1
            for t in set(threading.enumerate()) - threads:
                if not t.daemon:
                    t.join()  # as the interpreter does before a process ends
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
        finally:
            for fd, saved_fd in enumerate(fds):
                os.dup2(saved_fd, fd)
                os.close(saved_fd)
            os.chdir(saved[0])
            os.environ.clear()
            os.environ.update(saved[1])
            sys.argv, sys.stdin, sys.stdout, sys.stderr = saved[2:6]
            for s, handler in saved[6].items():
                if handler is not None:
                    signal.signal(s, handler)
        out, err = (_text(f) for f in files[1:])
    return subprocess.CompletedProcess(["git", "oxide", *args], (code or 0) & 0xFF, out, err)


def _text(f: Any) -> str:
    """What ``f`` holds, read as ``subprocess.run(text=True)`` reads a pipe (newlines made \\n)."""
    f.seek(0)
    return io.TextIOWrapper(io.BytesIO(f.read()), encoding=locale.getpreferredencoding(False)).read()


def user_state(root: Path) -> tuple[str, str, str, bytes, str]:
    """Everything of the user's that git oxide must never change."""
    gitdir = Path(git(root, "rev-parse", "--git-dir").strip())
    if not gitdir.is_absolute():
        gitdir = root / gitdir
    index = gitdir / "index"
    return (
        git(root, "status", "--porcelain", "--untracked-files=all"),
        git(root, "ls-files", "-s"),
        git(root, "stash", "list"),
        index.read_bytes() if index.exists() else b"",
        git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags", "refs/stash")
        + git(root, "rev-parse", "HEAD", check=False),
    )


def fsck_clean(root: Path) -> None:
    r = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
    bad = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith(("error", "missing", "broken"))]
    assert not bad, bad


def wait_for(fn: Callable[[], Any], timeout: float = 20.0) -> Any:
    """``fn()`` once it is true (polled every 50 ms), or an AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError("timed out")


def configure_opencode_model(model: str = "fake/fake-model") -> Path:
    """Give the isolated HOME's OpenCode a model (``"model"`` of its global opencode.json), as a
    user does before a session of another agent can be written into it (issue 37)."""
    conf = Path(os.environ["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(json.dumps({"model": model}))
    return conf
