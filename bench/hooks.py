"""Hook latency and watch-assisted checkpoints, each against git itself in the same run.

Rows: `git commit` with the hooks installed vs without (10 and 1,000 stored sessions, a current
session, so a pre-commit checkpoint and a note are made), with oxide disabled, a checkpoint taken
while `watch` keeps a journal vs `git status --porcelain`, and how soon a line appended to a watched
transcript shows in `git oxide show`. The hooks' background work is waited for
between iterations (outside the timing) so one commit's jobs never overlap the next measurement.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
_DROP = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR", "OXIDE_NOW")


def _env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k not in _DROP}
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    for k, v in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "b@localhost"),
                 ("GIT_COMMITTER_NAME", "bench"), ("GIT_COMMITTER_EMAIL", "b@localhost")):
        e.setdefault(k, v)
    return e


def _run(args: list[str], cwd: Path) -> str:
    r = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()[-1000:]}")
    return r.stdout


def _timed(args: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    _run(args, cwd)
    return time.perf_counter() - t


def _repo(root: Path, files: int) -> Path:
    _run(["git", "init", "-q", "-b", "main", str(root)], root.parent)
    for i in range(files):
        d = root / f"d{i // 500:03d}"
        d.mkdir(exist_ok=True)
        (d / f"f{i}.txt").write_text(f"file {i}\n")
    _run(["git", "add", "-A"], root)
    # the automatic gc that 100,000 new loose objects set off would otherwise repack and prune in
    # the background during the measurements (slowing git and, through ~100,000 file events, watch)
    _run(["git", "-c", "gc.autoDetach=false", "commit", "-q", "-m", "initial"], root)
    return root


def _sessions(root: Path, n: int) -> str:
    """``n`` stored sessions (written through the store, as import would); returns the last id."""
    from oxide_git.core.model import Message, Part, Session, session_id_for
    from oxide_git.git.repo import find_repo
    from oxide_git.store import writes as store
    from oxide_git.store.context import Context

    ctx = Context(find_repo(root, environ={}), int(time.time() * 1000), {})
    sid = ""
    for i in range(n):
        sid = session_id_for("claude", f"native-{i}", 1_767_225_600_000 + i)
        s = Session(id=sid, agent="claude", native_id=f"native-{i}", created_at=1_767_225_600_000 + i,
                    cwd=str(root), worktree="main")
        store.append(ctx, s, [Message(role="user", parts=(Part.text(f"prompt {i}"),))])
    store.set_current_session(ctx, sid)
    ctx.close()
    return sid


def _idle(root: Path) -> None:
    from oxide_git.hooks.queue import wait_idle

    wait_idle(root / ".git", 60)


def _commit_pair(hooked: Path, plain: Path, n: int) -> tuple[float, float]:
    """Median wall time of `git commit` in the hooked repo and in the plain one, interleaved."""
    a, b = [], []
    for i in range(n):
        for root, out in ((hooked, a), (plain, b)):
            (root / "change.txt").write_text(f"{i}\n")
            _run(["git", "add", "change.txt"], root)
            out.append(_timed(["git", "commit", "-q", "-m", f"c{i}"], root))
            _idle(root)
    return statistics.median(a), statistics.median(b)


def _row(name: str, median: float, baseline: float | None, target: str) -> dict[str, Any]:
    return {"name": name, "median_s": median, "baseline_s": baseline,
            "ratio": median / baseline if baseline else None, "target": target}


def run(quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    reps = 7 if quick else 21
    tmp = Path(tempfile.mkdtemp(prefix="oxide-bench-hooks-"))
    old_env = dict(os.environ)
    os.environ.update({"HOME": str(tmp), "GIT_CONFIG_GLOBAL": str(tmp / "gitconfig"),
                       "GIT_CONFIG_NOSYSTEM": "1", "CLAUDE_CONFIG_DIR": str(tmp / "claude"),
                       "CODEX_HOME": str(tmp / "codex"), "XDG_DATA_HOME": str(tmp / "xdg")})
    (tmp / "gitconfig").write_text("")
    try:
        plain = _repo(tmp / "plain", 200)
        for count in ((10, 100) if quick else (10, 1000)):
            hooked = _repo(tmp / f"hooked{count}", 200)
            _run(["git", "oxide", "init", "--hooks"], hooked)
            _sessions(hooked, count)
            h, p = _commit_pair(hooked, plain, reps)
            rows.append(_row(f"git commit + hooks, {count} sessions (added)", h - p, p, "< 0.030 s added"))
        _run(["git", "config", "oxide.enabled", "false"], hooked)
        h, p = _commit_pair(hooked, plain, reps)
        rows.append(_row("git commit + hooks, oxide disabled (added)", h - p, p, "< 0.005 s added"))
        rows += _watch_rows(tmp, 20_000 if quick else 100_000, max(3, reps // 3))
    finally:
        os.environ.clear()
        os.environ.update(old_env)
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


_WATCHED = "7f3e2a10-0000-4000-8000-00000000beef"


def _claude_prompt(cwd: Path, text: str) -> str:
    return json.dumps({"type": "user", "cwd": str(cwd), "sessionId": _WATCHED, "uuid": f"u-{text}",
                       "timestamp": "2026-01-01T00:00:00Z",
                       "message": {"role": "user", "content": text}}) + "\n"


def _appended_line_latency(root: Path, transcript: Path, reps: int) -> list[float]:
    """From appending a prompt to a watched Claude transcript until `git oxide show` (run back to
    back, so the figure includes up to one `show`) prints it."""
    out = []
    for i in range(reps):
        text = f"bench prompt {i}"
        with transcript.open("a") as f:
            f.write(_claude_prompt(root, text))
        t = time.perf_counter()
        while True:
            r = subprocess.run(["git", "oxide", "show", _WATCHED, "--json"], cwd=root, env=_env(),
                               capture_output=True, text=True)
            if text in r.stdout:
                break
            if time.perf_counter() - t > 30:
                raise TimeoutError(f"the appended line never showed up: {r.stderr.strip()[-300:]}")
        out.append(time.perf_counter() - t)
        time.sleep(0.3)
    return out


def _watch_rows(tmp: Path, files: int, reps: int) -> list[dict[str, Any]]:
    from oxide_git.git import watch_journal as journal
    from oxide_git.git.repo import find_repo
    from oxide_git.store import snapshots

    root = _repo(tmp / "big", files)
    _run(["git", "oxide", "init"], root)
    _run(["git", "status", "--porcelain"], root)  # warm the index
    transcript = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "bench" / f"{_WATCHED}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(_claude_prompt(root, "first prompt"))  # a session of this repository
    started = json.loads(_run(["git", "oxide", "watch", "--daemon", "--json"], root))
    repo = find_repo(root, environ={})
    try:
        deadline = time.monotonic() + 120
        while not journal.active(repo) and time.monotonic() < deadline:
            time.sleep(0.05)
        cli, inproc, status = [], [], []
        for i in range(reps):
            for k in range(10):
                (root / f"d{k:03d}" / f"f{k * 500}.txt").write_text(f"edit {i}\n")
            time.sleep(0.3)  # let the watcher journal the events
            status.append(_timed(["git", "status", "--porcelain"], root))
            cli.append(_timed(["git", "oxide", "checkpoint", "-m", "bench"], root))
            t = time.perf_counter()
            st = journal.status_from_journal(repo)
            snapshots.take(repo, kind="watch", now_ms=int(time.time() * 1000), status=st, keep=False)
            inproc.append(time.perf_counter() - t)
        s = statistics.median(status)
        latency = _appended_line_latency(root, transcript, reps)
        return [_row(f"watch-assisted `git oxide checkpoint`, {files} files, 10 changed",
                     statistics.median(cli), s, "< 0.3x git status"),
                _row(f"watch-assisted snapshot in-process (journal + take), {files} files",
                     statistics.median(inproc), s, "< 0.3x git status"),
                _row("watched transcript: appended line visible in `git oxide show`",
                     statistics.median(latency), None, "< 1 s")]
    finally:
        _run(["git", "oxide", "watch", "--stop"], root)
        assert started["pid"]


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(json.dumps(r))
