"""A ref lock older than STALE_LOCK_S is broken only when its owner is dead: a live writer that
stalled (suspended, starved) keeps it, and the update that waits on it times out and changes
nothing. Real processes: the owner is a child holding the lock as ``refs.swap`` does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oxide_git import lock_owners, refs
from oxide_git.doctor import diagnose
from oxide_git.errors import LockTimeout

from .conftest import git, make_ctx, oxide

REF = "refs/oxide/sessions/0123456789abcdef"

# A writer inside an update: it holds the ref's stripe and its lock file, then stalls.
_OWNER = """
import sys, time
from pathlib import Path
from oxide_git import lock_owners
common, name = Path(sys.argv[1]), sys.argv[2]
with lock_owners.holding(common, [name]):
    (common / (name + ".lock")).write_text("")
    print("held", flush=True)
    time.sleep(600)
"""


def _aged(path: Path) -> None:
    old = time.time() - refs.STALE_LOCK_S - 5
    os.utime(path, (old, old))


@pytest.fixture
def owner(repo: Path) -> Iterator[subprocess.Popen[str]]:
    oxide(repo, "init")
    common = repo / ".git"
    (common / REF).parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.Popen([sys.executable, "-c", _OWNER, str(common), REF], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        _aged(common / f"{REF}.lock")
        yield p
    finally:
        p.kill()
        p.wait()


def test_a_stalled_live_writer_keeps_its_old_lock_and_a_dead_ones_is_broken(repo: Path, owner: subprocess.Popen[str]) -> None:
    common = repo / ".git"
    head = bytes.fromhex(git(repo, "rev-parse", "HEAD").strip())
    lock = common / f"{REF}.lock"
    os.kill(owner.pid, signal.SIGSTOP)  # suspended (Ctrl-Z) inside its update
    with pytest.raises(LockTimeout):
        refs.swap(common, REF, None, head, budget_s=0.3)
    assert lock.exists() and refs.read_raw(common, REF) is None  # nothing moved, its lock kept
    owner.kill()
    owner.wait()  # dead: the kernel dropped its stripe
    refs.swap(common, REF, None, head, budget_s=2)
    assert not lock.exists() and refs.read_raw(common, REF) == head


def test_doctor_reports_and_removes_only_a_dead_writers_lock(repo: Path, owner: subprocess.Popen[str]) -> None:
    lock = repo / ".git" / f"{REF}.lock"

    def stale() -> list[str]:
        return [f["message"] for f in diagnose(make_ctx(repo), fix=True)["findings"]
                if "stale lock" in f["message"]]

    assert stale() == [] and lock.exists()  # old, but its writer lives
    owner.kill()
    owner.wait()
    assert stale() == [f"stale lock file {REF}.lock"] and not lock.exists()


def test_a_process_holding_a_stripe_itself_can_still_break_a_dead_writers_lock(repo: Path) -> None:
    """The waiting writer holds the stripe (shared) while it retries: its own hold must not stop
    it from breaking, and it keeps holding the stripe after."""
    common = repo / ".git"
    with lock_owners.holding(common, [REF]):
        with lock_owners.breaking(common, REF) as free:
            assert free
        probe = subprocess.run([sys.executable, "-c", (
            "import sys; from pathlib import Path; from oxide_git import lock_owners\n"
            "with lock_owners.breaking(Path(sys.argv[1]), sys.argv[2]) as free: print(free)"),
            str(common), REF], capture_output=True, text=True, check=True)
        assert probe.stdout.strip() == "False"  # still held, by us, against another breaker
