"""A private copy of the source tree where code can be broken without touching the real one.

Tests run there with ``PYTHONPATH`` naming the copy, so the in-process imports and every
`git oxide` process the tests start (the editable install's path comes later on ``sys.path``)
load the copy's ``oxide_git``: a mutant is seen by subprocesses and hooks too.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make(dest: Path) -> Path:
    """Copy the tracked and untracked-not-ignored files of the tree to ``dest`` (replaced)."""
    if dest.exists():
        shutil.rmtree(dest)
    names = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.split(b"\0")
    for raw in names:
        if not raw:
            continue
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file() or rel.startswith("mutants/"):
            continue  # deleted in the worktree but not yet in the index
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    return dest


def env(tree: Path) -> dict[str, str]:
    """The environment for tests in the copy (no coverage, no bytecode: a mutant is always fresh)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    e["PYTHONPATH"] = str(tree)
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    e["PATH"] = str(Path(sys.executable).parent) + os.pathsep + e.get("PATH", "")
    return e


def pytest_argv(tests: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--no-header",
            "-o", "addopts=--strict-markers", *tests]


def run_tests(tree: Path, tests: list[str], timeout: float) -> tuple[bool, str]:
    """Run ``tests`` in the copy; (passed, output). A run past ``timeout`` counts as failed, and
    its whole process group (watchers, hooks' background drains) is killed."""
    p = subprocess.Popen(pytest_argv(tests), cwd=tree, env=env(tree), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return False, "timeout"
    return p.returncode == 0, out[-4000:]
