"""The soak's loops: everything a day of work does to one repository, and SIGKILLs among it.

- ``WatchKeeper``: the `watch` daemon, killed now and then and started again; its memory sampled.
- ``commits``: commits with the hooks installed every few seconds, an amend and a rebase now and then.
- ``worktree2``: checkpoint, ``rewind --code`` and ``undo`` in a loop on the second worktree, each
  result checked against the files on disk; checkpoints and rewinds killed at random.
- ``maintenance``: ``git gc --auto`` and ``git oxide gc`` every minute; a ``git gc`` killed mid-repack.
- ``share``: ``push`` to the bare remote (killed now and then) and ``pull`` into the clone.
- ``imports``: a catch-up ``git oxide import`` beside the daemon, killed half the time.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..gitlocks import clear_killed_gc_locks
from .world import World


def disk_tree(world: World, wt: Path) -> str:
    """The tree of what is on disk in ``wt`` (tracked and untracked, as a checkpoint takes it)."""
    e = {**world.env, "GIT_INDEX_FILE": str(world.base / f"scratch-index-{threading.get_ident()}")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=wt, env=e, check=True, capture_output=True)
    subprocess.run(["git", "add", "-A"], cwd=wt, env=e, check=True, capture_output=True)
    return subprocess.run(["git", "write-tree"], cwd=wt, env=e, capture_output=True, text=True,
                          check=True).stdout.strip()


@dataclass
class Acked:
    """What the soak was told happened, for the checks."""

    checkpoints: dict[str, str] = field(default_factory=dict)  # id -> tree on disk
    commits: list[str] = field(default_factory=list)
    pushed: dict[str, str] = field(default_factory=dict)  # session ref -> oid the remote took
    lock: threading.Lock = field(default_factory=threading.Lock)


class WatchKeeper:
    def __init__(self, world: World) -> None:
        self.world = world
        self.pid: int | None = None
        self.born = 0.0
        self.baseline: float | None = None  # RSS a minute after start of the current daemon
        self.growth = 0.0  # the most any daemon grew after its first minute

    def start(self) -> None:
        r = self.world.ox(self.world.repo, "watch", "--daemon", "--json")
        if r.returncode != 0:
            self.world.tally.problem(f"watch did not start: {r.stderr.strip()}")
            return
        self.pid = int(json.loads(r.stdout)["pid"])
        self.born = time.monotonic()
        self.baseline = None
        self.world.tally.op("watch starts")

    def rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except (OSError, TypeError):
            return None
        return None

    def sample(self) -> None:
        rss = self.rss_mb()
        if rss is None:
            return
        self.world.tally.memory.append((self.world.minute(), rss))
        if time.monotonic() - self.born > 60:
            if self.baseline is None:
                self.baseline = rss
            self.growth = max(self.growth, rss - self.baseline)

    def loop(self) -> None:
        w = self.world
        self.start()
        next_kill = time.monotonic() + w.rng.uniform(90, 240)
        while w.loop_step("watch"):
            w.nap(5)
            self.sample()
            if self.pid is not None and not Path(f"/proc/{self.pid}").exists():
                w.tally.problem(f"the watch daemon (pid {self.pid}) died on its own")
                self.start()
            if time.monotonic() > next_kill and not w.pause.is_set():
                assert self.pid is not None
                w.kill_group(self.pid)
                w.tally.kill("watch daemon")
                w.nap(w.rng.uniform(0, 3))
                self.start()
                next_kill = time.monotonic() + w.rng.uniform(90, 240)

    def stop(self) -> None:
        self.world.ox(self.world.repo, "watch", "--stop")


def commits(world: World, acked: Acked) -> None:
    w, repo = world, world.repo
    n = 0
    while w.loop_step("commits"):
        n += 1
        for i in range(w.rng.randint(1, 3)):
            f = repo / "src" / f"d{(n + i) % 10}" / f"f{w.rng.randrange(200)}.py"
            f.write_text(f"x = {n}\n" * w.rng.randint(1, 50))
        try:
            w.git(repo, "add", "-A")
            if n % 10 == 0:
                w.git(repo, "commit", "-q", "--amend", "--no-edit")
                w.tally.op("amends")
            elif n % 15 == 0 and len(acked.commits) >= 3:
                w.git(repo, "commit", "-q", "-m", f"commit {n}")
                w.git(repo, "rebase", "-q", "--force-rebase", "HEAD~3")
                w.tally.op("rebases")
            else:
                w.git(repo, "commit", "-q", "-m", f"commit {n}")
                w.tally.op("commits")
            with acked.lock:
                acked.commits.append(w.git(repo, "rev-parse", "HEAD").strip())
        except RuntimeError as e:
            w.tally.problem(f"commit {n}: {e}")
        w.nap(w.rng.uniform(2, 5))


def worktree2(world: World, acked: Acked) -> None:
    w, wt = world, world.wt2
    mine: list[tuple[str, str]] = []  # this worktree's acknowledged checkpoints
    n = 0
    while w.loop_step("worktree2"):
        n += 1
        for i in range(w.rng.randint(1, 20)):
            (wt / "src" / f"d{i % 10}" / f"f{w.rng.randrange(200)}.py").write_text(f"wt2 {n} {i}\n" * 10)
        if w.rng.random() < 0.3:
            (wt / f"new-{n}.txt").write_text(f"new {n}\n")
        want = disk_tree(w, wt)
        if w.rng.random() < 0.15:
            w.killed_run("checkpoint", ["git", "oxide", "checkpoint", "-m", f"killed {n}"], wt, 0.6)
        r = w.ox(wt, "checkpoint", "-m", f"wt2 {n}", "--json")
        w.tally.op("checkpoints")
        if r.returncode != 0:
            w.tally.problem(f"checkpoint {n} failed: {r.stderr.strip()}")
        else:
            cp = json.loads(r.stdout)
            if cp["tree"] != want:
                w.tally.lose(f"checkpoint {cp['id'][:12]} holds {cp['tree'][:12]}, the disk was {want[:12]}")
            with acked.lock:
                acked.checkpoints[cp["id"]] = cp["tree"]
            mine.append((cp["id"], cp["tree"]))
        if n % 4 == 0 and len(mine) > 2:
            rewind_and_undo(w, wt, mine, want)
        w.nap(w.rng.uniform(1, 4))


def rewind_and_undo(w: World, wt: Path, mine: list[tuple[str, str]], before: str) -> None:
    target, tree = w.rng.choice(mine[:-1])
    if w.rng.random() < 0.25:
        killed, _ = w.killed_run("rewind", ["git", "oxide", "rewind", target, "--code", "--yes"], wt, 1.0)
        if killed and disk_tree(w, wt) != before:  # files were written: the state before is kept
            back = [c for c in json.loads(w.ox(wt, "checkpoints", "--json").stdout)
                    if c["tree"] == before and c["kind"] == "before-rewind"]
            if not back:
                w.tally.lose(f"a killed rewind left no before-rewind checkpoint of {before[:12]}")
                return
            w.ox(wt, "rewind", back[0]["id"], "--code", "--yes")
            if disk_tree(w, wt) != before:
                w.tally.lose("rewinding back to the before-rewind checkpoint did not restore the files")
                return
        elif not killed:
            w.ox(wt, "undo", "--yes")
    r = w.ox(wt, "rewind", target, "--code", "--yes")
    w.tally.op("rewinds")
    if r.returncode != 0:
        w.tally.problem(f"rewind to {target[:12]} failed: {r.stderr.strip()}")
        return
    if disk_tree(w, wt) != tree:
        w.tally.lose(f"rewind to {target[:12]} left other files than its tree {tree[:12]}")
    r = w.ox(wt, "undo", "--yes")
    w.tally.op("undos")
    if r.returncode != 0:
        w.tally.problem(f"undo failed: {r.stderr.strip()}")
    elif disk_tree(w, wt) != before:
        w.tally.lose(f"undo of a rewind did not bring back {before[:12]}")


def maintenance(world: World) -> None:
    w = world
    while w.loop_step("maintenance"):
        w.nap(60)
        if w.stop.is_set():
            return
        if w.rng.random() < 0.3:
            w.killed_run("git gc", ["git", "gc", "-q"], w.repo, 3.0)
            clear_killed_gc_locks(w.repo / ".git")
        _clear_stale_ref_locks(w.repo / ".git")
        r = w.run(["git", "gc", "--auto", "-q"], w.repo)
        w.tally.op("git gc --auto")
        if r.returncode != 0:
            w.tally.problem(f"git gc --auto: {r.stderr.strip()}")
        if w.rng.random() < 0.3:
            w.killed_run("git oxide gc", ["git", "oxide", "gc"], w.repo, 1.0)
        r = w.ox(w.repo, "gc")
        w.tally.op("git oxide gc")
        if r.returncode != 0:
            w.tally.problem(f"git oxide gc: {r.stderr.strip()}")


def _clear_stale_ref_locks(gitdir: Path, older_than_s: float = 30.0) -> None:
    """What a user does when git says a ref lock exists and no git runs: a `git gc` killed in its
    `reflog expire` leaves the lock of a ref and of its reflog (a linked worktree's HEAD and its
    logs/HEAD among them), and every later gc, or commit, fails on it. A live git holds a ref
    lock for milliseconds: only older ones are removed."""
    now = time.time()
    for lock in [*gitdir.glob("worktrees/*/*.lock"), *gitdir.glob("worktrees/*/logs/**/*.lock"),
                 *gitdir.glob("*.lock"), *(gitdir / "refs").rglob("*.lock"), *(gitdir / "logs").rglob("*.lock")]:
        try:
            if now - lock.stat().st_mtime > older_than_s:
                lock.unlink()
        except OSError:
            pass


def share(world: World, acked: Acked) -> None:
    w = world
    while w.loop_step("share"):
        w.nap(w.rng.uniform(15, 30))
        if w.stop.is_set():
            return
        if w.rng.random() < 0.25:
            w.killed_run("push", ["git", "oxide", "push"], w.repo, 1.5)
            for lock in w.bare.rglob("*.lock"):  # a local remote's receive-pack died with it
                lock.unlink(missing_ok=True)
        r = w.ox(w.repo, "push")
        w.tally.op("pushes")
        if r.returncode != 0:
            w.tally.problem(f"push: {r.stderr.strip()}")
        else:
            remote = w.git(w.bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide/sessions/")
            with acked.lock:
                acked.pushed.update(dict(ln.split() for ln in remote.splitlines()))
        r = w.ox(w.clone, "pull")
        w.tally.op("pulls")
        if r.returncode != 0 or "warning" in r.stderr:
            w.tally.problem(f"pull: {r.stderr.strip()}")


def imports(world: World) -> None:
    w = world
    while w.loop_step("imports"):
        w.nap(w.rng.uniform(20, 50))
        if w.stop.is_set():
            return
        if w.rng.random() < 0.5:
            w.killed_run("import", ["git", "oxide", "import", "-q"], w.repo, 2.0)
        else:
            r = w.ox(w.repo, "import", "-q")
            w.tally.op("imports")
            if r.returncode != 0:
                w.tally.problem(f"import: {r.stderr.strip()}")
