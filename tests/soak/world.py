"""The soak's world: one repository with a second worktree, a bare remote and a clone of it, an
isolated HOME (git config, the agents' stores), and the processes started in it.

Every process is started here (``World.run`` / ``World.spawn``) in a process group of its own, so
that a kill takes what it started too, and so that the end of the soak can say that none is left.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent.parent


@dataclass
class Tally:
    """What the soak did, for the table: counters and the watch daemon's memory over time."""

    ops: Counter[str] = field(default_factory=Counter)
    kills: Counter[str] = field(default_factory=Counter)
    losses: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    memory: list[tuple[float, float]] = field(default_factory=list)  # (minutes, watch RSS MB)
    checks: list[tuple[float, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def op(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.ops[name] += n

    def kill(self, name: str) -> None:
        with self.lock:
            self.kills[name] += 1

    def lose(self, what: str) -> None:
        with self.lock:
            self.losses.append(what)
        print(f"  LOSS: {what}", flush=True)

    def problem(self, what: str) -> None:
        with self.lock:
            self.problems.append(what)
        print(f"  problem: {what}", flush=True)


class World:
    def __init__(self, minutes: float, seed: int, base: Path | None = None) -> None:
        self.minutes = minutes
        self.rng = random.Random(seed)
        self.base = Path(tempfile.mkdtemp(prefix="oxide-soak-", dir=base))
        self.home = self.base / "home"
        self.repo = self.base / "repo"
        self.wt2 = self.base / "wt2"
        self.bare = self.base / "shared.git"
        self.clone = self.base / "clone"
        self.tally = Tally()
        self.started = time.monotonic()
        self.stop = threading.Event()
        self.pause = threading.Event()  # set while the checks run: loops finish their step and wait
        self.idle: dict[str, threading.Event] = {}
        self._procs: set[int] = set()
        self._took: dict[str, float] = {}  # how long an unkilled run of each killed command took
        self._plock = threading.Lock()
        self.env = self._env()

    # -- environment ------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("GIT_", "CLAUDE_", "CODEX_", "XDG_", "OXIDE_"))}
        self.home.mkdir(parents=True)
        (self.home / ".gitconfig").write_text("[user]\n\tname = Soak\n\temail = soak@localhost\n"
                                              "[init]\n\tdefaultBranch = main\n[gc]\n\tautoDetach = false\n")
        e.update(HOME=str(self.home), GIT_CONFIG_GLOBAL=str(self.home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
                 CLAUDE_CONFIG_DIR=str(self.home / ".claude"), CODEX_HOME=str(self.home / ".codex"),
                 XDG_DATA_HOME=str(self.home / ".local" / "share"), XDG_CONFIG_HOME=str(self.home / ".config"),
                 PATH=f"{BIN}{os.pathsep}{e.get('PATH', '')}", PYTHONPATH=str(ROOT))
        return e

    def minute(self) -> float:
        return (time.monotonic() - self.started) / 60

    # -- processes --------------------------------------------------------------------------
    def spawn(self, args: list[str], cwd: Path) -> subprocess.Popen[str]:
        p = subprocess.Popen(args, cwd=cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        with self._plock:
            self._procs.add(p.pid)
        return p

    def finish(self, p: subprocess.Popen[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_group(p.pid)
            out, err = p.communicate()
            self.tally.problem(f"{' '.join(map(str, p.args))} hung for {timeout} s and was killed")  # type: ignore[arg-type]
        with self._plock:
            self._procs.discard(p.pid)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def run(self, args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return self.finish(self.spawn(args, cwd), timeout)

    def ox(self, cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return self.run(["git", "oxide", *args], cwd, timeout)

    def git(self, cwd: Path, *args: str) -> str:
        r = self.run(["git", *args], cwd)
        if r.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} in {cwd}: {r.stderr.strip()}")
        return r.stdout

    def kill_group(self, pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def killed_run(self, name: str, args: list[str], cwd: Path, within: float) -> tuple[bool, str]:
        """Run ``args`` and SIGKILL it (and what it started) at a random moment of its run (of
        ``within`` seconds until one run of it finished unkilled); (was it killed, its stdout)."""
        took = self._took.get(name, within)
        t0 = time.monotonic()
        p = self.spawn(args, cwd)
        self.tally.op(f"kill attempts ({name})")
        try:
            p.wait(timeout=self.rng.uniform(0.0, took * 0.95))
            killed = False
            self._took[name] = time.monotonic() - t0
        except subprocess.TimeoutExpired:
            self.kill_group(p.pid)
            killed = True
            self.tally.kill(name)
        r = self.finish(p)
        return killed, r.stdout

    def leftovers(self) -> list[str]:
        """Processes still running that the soak started (or that run in its folders)."""
        out = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) == os.getpid():
                continue
            try:
                cwd = os.readlink(d / "cwd")
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if state != "Z" and (cwd.startswith(str(self.base)) or str(self.base) in cmd):
                out.append(f"{d.name} {cmd.strip()[:120]}")
        return out

    # -- waiting for the checks --------------------------------------------------------------
    def loop_step(self, name: str) -> bool:
        """Called by a loop between steps: False when the soak is over; waits while paused."""
        ev = self.idle.setdefault(name, threading.Event())
        while self.pause.is_set() and not self.stop.is_set():
            ev.set()
            time.sleep(0.1)
        ev.clear()
        return not self.stop.is_set()

    def nap(self, seconds: float) -> None:
        self.stop.wait(seconds)

    def quiesce(self, timeout: float = 300) -> None:
        """Pause every loop and wait until each has finished its step."""
        self.pause.set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(ev.is_set() for ev in self.idle.values()):
                return
            time.sleep(0.1)
        busy = [n for n, ev in self.idle.items() if not ev.is_set()]
        self.tally.problem(f"loops still busy after {timeout} s: {busy}")

    def resume(self) -> None:
        self.pause.clear()

    def cleanup(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
