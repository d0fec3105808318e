"""The `watch` process: run a ``watch.Watcher`` here until a signal, or start it as a daemon and
stop it (its pid file, ``watch_journal.PID_FILE``, says which process is the watcher)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

from oxide_git.git import watch_journal as journal
from oxide_git.git.repo import Repo
from oxide_git.store.context import Context


def run(ctx: Context, ready: threading.Event | None = None, answer: Any = None) -> None:
    """Watch in this process until SIGTERM/SIGINT (writes and removes the pid file); ``answer``: see
    ``Watcher`` (the CLI hands ``cli.watch.checkpoint_handler``)."""
    ctx.repo.oxide_dir.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex
    pid_file = ctx.repo.oxide_dir / journal.PID_FILE
    from oxide_git.store import search_index
    from oxide_git.watch.watcher import Watcher

    search_index.in_children()  # this process lives for days: tantivy's writer's memory stays out
    w = Watcher(ctx, token, answer)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: w.stop.set())
        signal.signal(signal.SIGINT, lambda *_: w.stop.set())
    pid_file.write_text(json.dumps({"pid": os.getpid(), "token": token, "started": ctx.now_ms}))
    try:
        w.run(ready)
    finally:
        try:
            if json.loads(pid_file.read_text()).get("token") == token:
                pid_file.unlink()
        except (OSError, ValueError):
            pass


def start_daemon(repo: Repo, timeout: float = 15.0) -> dict[str, Any]:
    running = journal.watcher(repo)
    if running:
        return {"pid": running["pid"], "started": False,
                "message": f"git oxide watch is already running (pid {running['pid']})"}
    repo.oxide_dir.mkdir(parents=True, exist_ok=True)
    with open(repo.oxide_dir / "log", "a") as out:
        proc = subprocess.Popen([sys.executable, "-m", "oxide_git", "watch"], cwd=repo.workdir,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        w = journal.watcher(repo)
        if w and w["pid"] == proc.pid:
            return {"pid": proc.pid, "started": True, "message": f"git oxide watch started (pid {proc.pid})"}
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    if proc.poll() is None:
        proc.terminate()  # said not to have started: it must not start later
    from oxide_git.core.errors import OxideError

    raise OxideError("git oxide watch did not start", hint=f"see {repo.oxide_dir / 'log'}")


def stop(repo: Repo, timeout: float = 15.0) -> dict[str, Any]:
    w = journal.watcher(repo)
    if not w:
        return {"pid": None, "stopped": False, "message": "git oxide watch is not running"}
    pid = int(w["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and journal.watcher(repo):
        time.sleep(0.02)
    if journal.watcher(repo):
        os.kill(pid, signal.SIGKILL)
        (repo.oxide_dir / journal.PID_FILE).unlink(missing_ok=True)
    return {"pid": pid, "stopped": True, "message": f"git oxide watch stopped (pid {pid})"}
