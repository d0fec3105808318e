"""The watch process's lifecycle (``watch_daemon``): started once, said when it already runs or
does not run, a start that fails or does not come in time leaves no process, and a watcher that
ignores SIGTERM is killed by `--stop`. Real processes throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oxide_git.core.errors import OxideError
from oxide_git.git import watch_journal as journal
from oxide_git.watch import daemon as watch_daemon
from tests.conftest import make_ctx, oxide, oxide_process


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return not journal._dead(pid)


@pytest.mark.process
def test_a_second_start_and_a_stop_of_nothing_say_so(repo: Path) -> None:
    oxide(repo, "init")
    first = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)
    try:
        assert first["started"] is True
        again = oxide_process(repo, "watch", "--daemon")
        assert again.stderr.strip() == f"git oxide watch is already running (pid {first['pid']})"
    finally:
        out = json.loads(oxide(repo, "watch", "--stop", "--json").stdout)
    assert out == {"pid": first["pid"], "stopped": True, "message": f"git oxide watch stopped (pid {first['pid']})"}
    deadline = time.monotonic() + 10  # its pid file is gone; the interpreter may take a moment to exit
    while _alive(first["pid"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(first["pid"])
    r = oxide(repo, "watch", "--stop")
    assert (r.returncode, r.stderr.strip()) == (0, "git oxide watch is not running")


@pytest.mark.process
def test_a_watcher_that_cannot_write_its_pid_file_did_not_start(repo: Path) -> None:
    oxide(repo, "init")
    (repo / ".git" / "oxide" / journal.PID_FILE).mkdir()  # the child's write fails: it exits
    r = oxide_process(repo, "watch", "--daemon", check=False)
    assert r.returncode == 1
    assert r.stderr.startswith("error: git oxide watch did not start\nhint: see ")
    assert "Traceback" not in r.stderr


def test_a_watcher_not_ready_in_time_is_stopped_not_left_running(repo: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    before = set(_children())
    with pytest.raises(OxideError, match="did not start"):
        watch_daemon.start_daemon(ctx.repo, timeout=0.0)
    started = set(_children()) - before
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in started if _alive(p)]
    assert journal.watcher(ctx.repo) is None


def test_stop_kills_a_watcher_that_ignores_sigterm(repo: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, sys, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                 "print('ready', flush=True)\ntime.sleep(60)"], stdout=subprocess.PIPE)
    try:
        assert stubborn.stdout is not None and stubborn.stdout.readline() == b"ready\n"
        (ctx.repo.oxide_dir / journal.PID_FILE).write_text(json.dumps({"pid": stubborn.pid, "token": "t"}))
        out = watch_daemon.stop(ctx.repo, timeout=0.3)
        assert out["stopped"] is True
        assert stubborn.wait(10) == -9  # SIGKILL, after SIGTERM was ignored
        assert not (ctx.repo.oxide_dir / journal.PID_FILE).exists()
    finally:
        if stubborn.poll() is None:
            stubborn.kill()


def _children() -> list[int]:
    """Processes whose parent is this test process (``/proc``)."""
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.append(int(d))
    return out
