"""`git oxide checkpoint` answered by a running `git oxide watch` over its unix socket (real
processes): the same checkpoint as the command makes itself, a silent fallback on a stale socket,
and a watcher that survives whatever a client sends."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oxide_git.watch import fastpath
from tests.conftest import NOW_MS, git, make_ctx, new_repo, oxide, oxide_process, user_state
from tests.hooks.test_hooks import make_session
from tests.watch.test_watch import wait_for

pytestmark = pytest.mark.process  # a `git oxide watch` daemon and the processes it answers


def run(cwd: Path, *args: str, mode: str, now: int | None = None) -> subprocess.CompletedProcess[str]:
    """`git oxide ARGS` with OXIDE_FASTPATH=mode (only: the watcher must answer; 0: it must not)."""
    env = dict(os.environ, OXIDE_FASTPATH=mode)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if now is not None:
        env["OXIDE_NOW"] = str(now)
    return subprocess.run(["git", "oxide", *args], cwd=cwd, capture_output=True, text=True, env=env)


def served(cwd: Path, *args: str, now: int | None = None) -> subprocess.CompletedProcess[str]:
    """`git oxide ARGS` answered by the watcher. A watcher busy for longer than the client waits
    (a baseline `git status` after a worktree appeared, a loaded machine) is told nothing and
    does nothing (the client would do the work itself), so asking again is safe."""
    for _ in range(50):
        r = run(cwd, *args, mode="only", now=now)
        if r.returncode != fastpath.UNSERVED:
            return r
        time.sleep(0.1)
    return r


def sock_path(repo: Path) -> Path:
    return Path(fastpath.socket_path(str(make_ctx(repo).repo.common_dir)))


def answers(repo: Path) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        fastpath.with_short_path(str(sock_path(repo)), s.connect)
        return True
    except OSError:
        return False
    finally:
        s.close()


def start(repo: Path) -> int:
    from oxide_git.git import watch_journal as journal

    pid = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)["pid"]
    try:
        wait_for(lambda: answers(repo) and journal.active(make_ctx(repo).repo), timeout=60)
    except BaseException:
        oxide(repo, "watch", "--stop", check=False)  # never leave a watcher behind
        log = make_ctx(repo).repo.oxide_dir / "log"
        raise AssertionError(log.read_text() if log.exists() else "no log") from None
    return int(pid)


@pytest.fixture
def watched(repo: Path) -> Iterator[Path]:
    oxide(repo, "init")
    start(repo)
    try:
        yield repo
    finally:
        oxide(repo, "watch", "--stop")


def journaled(repo: Path, path: str) -> None:
    from oxide_git.git import watch_journal as journal

    wait_for(lambda: path in (journal.read(make_ctx(repo).repo) or ({}, set()))[1])


def commit_message(repo: Path, oid: str) -> list[str]:
    return [ln for ln in git(repo, "cat-file", "commit", oid).split("\n\n", 1)[1].splitlines()
            if not ln.startswith("Oxide-Time:")]


_STATES = iter(range(1, 1000))


def same_checkpoint(repo: Path, *args: str) -> None:
    """The watcher's checkpoint is the command's own: run right after it on the same state, the
    command finds that the watcher's checkpoint already holds its tree and parent, and writes
    none (an identical checkpoint is not written twice)."""
    (repo / "state.txt").write_text(f"state {next(_STATES)}\n")  # a state no checkpoint holds yet
    journaled(repo, "state.txt")
    before = user_state(repo)
    a = served(repo, "checkpoint", "--json", *args, now=NOW_MS + 1000)
    b = run(repo, "checkpoint", "--json", *args, mode="0", now=NOW_MS + 2000)
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert a.stderr == b.stderr == ""
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    assert ja["created_at"] == NOW_MS + 1000
    assert jb == ja  # the same checkpoint: same tree, parent, session, message, trailers
    assert git(repo, "show", f"{ja['id']}:state.txt") == (repo / "state.txt").read_text()
    assert git(repo, "rev-parse", ja["ref"]).strip() == ja["id"]
    rows = {r["id"]: r for r in make_ctx(repo).index.checkpoint_rows(ja["session_id"])}
    assert ja["id"] in rows
    assert user_state(repo) == before


def test_checkpoint_through_watch_is_the_commands_checkpoint(repo: Path, tmp_path: Path) -> None:
    sid = make_session(repo)
    (repo / "README.md").write_text("dirty before watch\n")
    (repo / "src" / "app.py").unlink()
    oxide(repo, "init")
    start(repo)
    try:
        (repo / "late.txt").write_text("late\n")
        (repo / "x.log").write_text("ignored\n")
        journaled(repo, "late.txt")
        same_checkpoint(repo, "-m", "through watch")
        same_checkpoint(repo, "--session", sid[:8], "--message=explicit session")
        out = json.loads(served(repo, "checkpoint", "--json").stdout)
        assert out["session_id"] == sid and out["message_id"]
        assert git(repo, "show", f"{out['id']}:late.txt") == "late\n"
        assert "x.log" not in git(repo, "ls-tree", "-r", "--name-only", out["id"])
        # the human form: the id on stdout, the summary on stderr, exactly as the command prints
        # (each after a change: the same state as the previous checkpoint is not written again)
        (repo / "late.txt").write_text("later\n")
        a = served(repo, "checkpoint", "-mplain")
        (repo / "late.txt").write_text("later still\n")
        b = run(repo, "checkpoint", "-mplain", mode="0")
        assert a.stdout.strip() != b.stdout.strip()
        def unid(r: subprocess.CompletedProcess[str]) -> str:  # the id, as abbreviated in the message
            short = next(w for w in r.stderr.split() if r.stdout.strip().startswith(w) and len(w) >= 7)
            return r.stderr.replace(short, "ID")

        assert unid(a) == unid(b)
        # a linked worktree is served by the same watcher, as itself
        wt = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", str(wt), "-b", "side")
        (wt / "wt.txt").write_text("in the worktree\n")
        cp = json.loads(served(wt, "checkpoint", "--json").stdout)
        assert (cp["worktree"], cp["branch"]) == ("wt", "side")
        assert git(repo, "show", f"{cp['id']}:wt.txt") == "in the worktree\n"
        same_checkpoint(wt, "-m", "worktree")
    finally:
        oxide(repo, "watch", "--stop")
    assert not sock_path(repo).exists()


def test_usage_errors_and_failures_are_the_commands_own(watched: Path) -> None:
    for args in (["--bogus"], ["--session", "no-such-session"], ["-m"], ["--kind", "nope"], ["extra"]):
        a = run(watched, "checkpoint", *args, mode="")
        b = run(watched, "checkpoint", *args, mode="0")
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), args
        assert a.returncode != 0
    assert run(watched, "checkpoint", "--bogus", mode="only").returncode == fastpath.UNSERVED
    h = run(watched, "checkpoint", "-h", mode="")
    assert h.returncode == 0 and "Snapshot the whole worktree" in h.stdout


def raw(repo: Path, data: bytes, then_read: bool = True) -> bytes:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    fastpath.with_short_path(str(sock_path(repo)), s.connect)
    try:
        s.sendall(data)
        return s.recv(100) if then_read else b""
    except OSError:
        return b""
    finally:
        s.close()


def test_bad_requests_never_stop_the_watcher(watched: Path) -> None:
    run_dir = sock_path(watched).parent
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(sock_path(watched).lstat().st_mode) == 0o600
    count = len(make_ctx(watched).index.checkpoint_rows(None))
    good = fastpath._request(["-m", "never"], str(watched))
    for data in (b"hello\n", b"x" * 5000, fastpath.MAGIC + b" 99999999999\n",
                 fastpath.MAGIC + b" 10\nshort", fastpath.MAGIC + b" 3\n\0\0\0",
                 fastpath.MAGIC + b" 12\ncheckpoint\0\0", good[:-3]):
        assert raw(watched, data, then_read=not data.endswith(b"short") and data != good[:-3]) \
            in (b"", b"F\n")
    raw(watched, b"", then_read=False)
    assert raw(watched, good) == b"R\n"  # then we hang up without "G": nothing may be done
    body = b"checkpoint\0/\0notanumber\0" + b"\0" * 14
    garbage = fastpath.MAGIC + b" %d\n" % len(body) + body
    assert raw(watched, garbage) in (b"", b"F\n")
    ok = served(watched, "checkpoint", "-m", "still serving")
    assert ok.returncode == 0, ok.stderr
    assert len(make_ctx(watched).index.checkpoint_rows(None)) == count + 1
    log = make_ctx(watched).repo.oxide_dir / "log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")


def test_stale_socket_falls_back_and_is_replaced(repo: Path) -> None:
    oxide(repo, "init")
    pid = start(repo)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not answers(repo))
    assert sock_path(repo).exists()  # what a killed watcher leaves behind
    r = run(repo, "checkpoint", "-m", "no watcher", mode="")
    assert r.returncode == 0 and len(r.stdout.strip()) == 40, r.stderr
    assert run(repo, "checkpoint", mode="only").returncode == fastpath.UNSERVED

    def dead() -> bool:
        try:
            os.kill(pid, 0)
            return False
        except OSError:
            return True

    wait_for(dead)
    start(repo)
    try:
        assert served(repo, "checkpoint", "-m", "new watcher").returncode == 0
    finally:
        oxide(repo, "watch", "--stop")


def test_a_socket_path_too_long_for_af_unix(tmp_path: Path) -> None:
    deep = new_repo(tmp_path / ("d" * 60) / ("e" * 60) / "repo")
    (deep / "a.txt").write_text("a\n")
    git(deep, "add", "a.txt")
    git(deep, "commit", "-q", "-m", "a")
    assert len(str(sock_path(deep))) > 108
    oxide(deep, "init")
    start(deep)
    try:
        (deep / "a.txt").write_text("changed\n")
        journaled(deep, "a.txt")
        cp = json.loads(served(deep, "checkpoint", "--json").stdout)
        assert git(deep, "show", f"{cp['id']}:a.txt") == "changed\n"
    finally:
        oxide(deep, "watch", "--stop")


def test_search_through_watch_prints_what_the_command_prints(watched: Path) -> None:
    make_session(watched, 1, current=False)
    make_session(watched, 2, current=False)
    for args in (["prompt"], ["prompt", "--json"], ["prompt 2", "-n", "1"], ["nothing-like-this"]):
        a = served(watched, "search", *args)
        b = run(watched, "search", *args, mode="0")
        assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
        assert (a.stdout, a.stderr) == (b.stdout, b.stderr)
    hits = json.loads(served(watched, "search", "prompt", "--json").stdout)
    assert sorted(h["snippet"] for h in hits) == ["[prompt] 1", "[prompt] 2"]
    assert len(served(watched, "search", "prompt").stdout.splitlines()) == 3  # a header, two hits
    none = served(watched, "search", "nothing-like-this")
    assert (none.stdout, none.stderr) == ("", "no message matches 'nothing-like-this'\n")
    # a usage error is the command's own, printed by the command: the watcher does not answer it
    assert run(watched, "search", mode="only").returncode == fastpath.UNSERVED
    # a checkpoint after a search still abbreviates as the watcher did before
    (watched / "after.txt").write_text("after\n")
    journaled(watched, "after.txt")
    c = served(watched, "checkpoint")
    assert c.returncode == 0 and "Checkpoint " in c.stderr
