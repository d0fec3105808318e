"""Shared helpers for the benchmarks: timing, interleaving against git, the cached generated tree.

Everything generated lives under ``<repo>/.bench-cache/`` (gitignored), keyed by its size, and is
reused by later runs. Timings are wall-clock medians of real subprocesses (process start included)
unless a row says otherwise; every figure that has a git baseline is measured in the same run,
interleaved with it, so machine noise hits both alike.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".bench-cache"
BIN = Path(sys.executable).parent
GIT_ID = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
_DROP = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
         "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "OXIDE_NOW",
         # A user's Python caches bytecode; without it every `git oxide` start recompiles oxide_git
         # (an editable install: pip precompiled only the dependencies), about 50 ms more per run.
         "PYTHONDONTWRITEBYTECODE")

Step = Sequence[str] | Callable[[], Any]


def env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for benchmarked commands: no inherited GIT_DIR & co, the venv's bin first."""
    e = {k: v for k, v in os.environ.items() if k not in _DROP}
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    e.setdefault("GIT_AUTHOR_NAME", "bench")
    e.setdefault("GIT_AUTHOR_EMAIL", "bench@localhost")
    e.setdefault("GIT_COMMITTER_NAME", "bench")
    e.setdefault("GIT_COMMITTER_EMAIL", "bench@localhost")
    if extra:
        e.update(extra)
    return e


def run(args: Sequence[str], cwd: Path, *, extra_env: Mapping[str, str] | None = None,
        stdin: bytes | None = None) -> bytes:
    """Run a command; raise with its stderr when it fails; return stdout."""
    p = subprocess.run(list(args), cwd=cwd, env=env(extra_env), input=stdin, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} (in {cwd}) exited {p.returncode}: "
                           f"{p.stderr.decode(errors='replace').strip()[-2000:]}")
    return p.stdout


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return run(["git", *GIT_ID, *args], cwd, stdin=stdin)


def oxide_cmd(*args: str) -> list[str]:
    """``git oxide ARGS`` as git runs it (git finds git-oxide on PATH)."""
    return ["git", "oxide", *args]


def time_steps(steps: Sequence[Step], cwd: Path, extra_env: Mapping[str, str] | None = None) -> float:
    """Wall seconds to run the steps in order (commands as subprocesses, or callables)."""
    e = env(extra_env)
    t0 = time.perf_counter()
    for s in steps:
        if callable(s):
            s()
            continue
        p = subprocess.run(list(s), cwd=cwd, env=e, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(s)} exited {p.returncode}: "
                               f"{p.stderr.decode(errors='replace').strip()[-2000:]}")
    return time.perf_counter() - t0


@dataclass
class Contender:
    name: str
    steps: Sequence[Step]
    extra_env: Mapping[str, str] | None = None
    before: Callable[[], None] | None = None  # run untimed before each run


def cpu_seconds(args: Sequence[str], cwd: Path, stdin: bytes = b"",
                extra_env: Mapping[str, str] | None = None) -> float:
    """CPU seconds (user + system) of one process and the processes it waited for (Linux's
    wait4 counts those too): what the machine's load does not inflate."""
    p = subprocess.Popen(list(args), cwd=cwd, env=env(extra_env), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(stdin)
    p.stdin.close()
    p.stdout.read()
    _pid, _status, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return float(ru.ru_utime + ru.ru_stime)


def interleaved(contenders: Sequence[Contender], cwd: Path, reps: int, warmup: int = 1
                ) -> dict[str, list[float]]:
    """Run each contender ``reps`` times, round-robin with a rotating order; the times by name."""
    for _ in range(warmup):
        for c in contenders:
            if c.before:
                c.before()
            time_steps(c.steps, cwd, c.extra_env)
    out: dict[str, list[float]] = {c.name: [] for c in contenders}
    for i in range(reps):
        order = list(contenders[i % len(contenders):]) + list(contenders[:i % len(contenders)])
        for c in order:
            if c.before:
                c.before()
            out[c.name].append(time_steps(c.steps, cwd, c.extra_env))
    return out


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def row(name: str, median_s: float | None, target: str, *, baseline_s: float | None = None,
        met: bool | None = None, value: str | None = None, note: str | None = None,
        samples: Sequence[float] | None = None) -> dict[str, Any]:
    """A result row. ``met`` is decided by the module that knows the target; ``value`` replaces the
    median in the table when the figure is not a time (MB/s, MB)."""
    ratio = (median_s / baseline_s) if (median_s is not None and baseline_s) else None
    r: dict[str, Any] = {"name": name, "median_s": median_s, "baseline_s": baseline_s,
                         "ratio": ratio, "target": target, "met": met}
    if value is not None:
        r["value"] = value
    if note:
        r["note"] = note
    if samples is not None:
        r["samples"] = [round(s, 6) for s in samples]
    return r


def error_row(name: str, target: str, err: BaseException) -> dict[str, Any]:
    r = row(name, None, target, met=False)
    r["error"] = f"{type(err).__name__}: {err}"[:500]
    return r


def sources_key(*modules: str) -> str:
    """A short hash of product source files, to invalidate caches built with older code."""
    h = hashlib.sha1()
    for m in modules:
        h.update((ROOT / "oxide_git" / m).read_bytes())
    return h.hexdigest()[:10]


def fresh_dir(path: Path) -> Path:
    for _ in range(20):  # a detached `git gc --auto` may still be pruning in there
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            break
        time.sleep(0.5)
    path.mkdir(parents=True)
    return path


# -- the generated worktree ------------------------------------------------------------------

WORDS = [
    "def", "class", "return", "import", "self", "value", "result", "data", "config", "path",
    "file", "test", "error", "index", "tree", "commit", "session", "message", "the", "of", "and",
    "to", "in", "for", "with", "from", "None", "True", "False", "if", "else", "while", "yield",
    "async", "await", "lambda", "raise", "except", "try",
]


def _file_body(rng: random.Random, i: int) -> bytes:
    lines = [f"# generated file {i}"]
    for _ in range(rng.randint(5, 40)):
        lines.append(" ".join(rng.choices(WORDS, k=rng.randint(3, 12))))
    return ("\n".join(lines) + "\n").encode()


def tree_layout(files: int) -> tuple[int, int]:
    per_dir = 100
    return max(1, files // per_dir), per_dir


def cached_tree(files: int, log: Callable[[str], None]) -> Path:
    """A repository with ``files`` committed files (dirs of 100), generated once with fast-import."""
    dirs, per_dir = tree_layout(files)
    path = CACHE / f"tree-{dirs * per_dir}"
    done = path / ".git" / "bench-ready"
    if done.exists():
        return path
    log(f"generating a {dirs * per_dir:,}-file tree in {path} (one time)…")
    fresh_dir(path)
    git(path, "init", "-q", "-b", "main")
    rng = random.Random(1234)
    chunks: list[bytes] = []
    for mark in range(1, dirs * per_dir + 1):
        body = _file_body(rng, mark)
        chunks.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(body), body))
    commit = [b"commit refs/heads/main\n",
              b"committer bench <bench@localhost> 1700000000 +0000\n",
              b"data 10\ngenerated\n"]
    mark = 0
    for d in range(dirs):
        for f in range(per_dir):
            mark += 1
            ext = "py" if f % 3 else "txt"
            commit.append(b"M 100644 :%d src/d%04d/f%03d.%s\n" % (mark, d, f, ext.encode()))
    data = b"".join(chunks) + b"".join(commit) + b"\n"
    git(path, "fast-import", "--quiet", stdin=data)
    git(path, "reset", "-q", "--hard", "main")
    git(path, "gc", "-q")
    time.sleep(2.1)  # past the racy-git window, so status does not re-hash "racily clean" files
    git(path, "update-index", "-q", "--really-refresh")
    git(path, "status", "--porcelain")
    done.write_text("ok\n")
    return path


def reset_tree(path: Path) -> None:
    """Back to HEAD: worktree, index, no oxide refs or state (the cached tree is reused)."""
    git(path, "reset", "-q", "--hard", "main")
    git(path, "clean", "-qfdx")
    refs = git(path, "for-each-ref", "--format=delete %(refname)", "refs/oxide/")
    if refs.strip():
        git(path, "update-ref", "--stdin", stdin=refs)
    shutil.rmtree(path / ".git" / "oxide", ignore_errors=True)


def apply_changes(path: Path, files: int, changed: int = 10, untracked: int = 2) -> None:
    """Modify ``changed`` tracked files spread over the tree and add ``untracked`` new files."""
    dirs, per_dir = tree_layout(files)
    for k in range(changed):
        d = (k * 97) % dirs
        f = (k * 31 + 1) % per_dir
        ext = "py" if f % 3 else "txt"
        p = path / "src" / f"d{d:04d}" / f"f{f:03d}.{ext}"
        with open(p, "a") as fh:
            fh.write(f"# bench edit {k}\n")
    for k in range(untracked):
        (path / "src" / f"d{(k * 13) % dirs:04d}" / f"new_{k}.py").write_text(f"print({k})\n")


class TimedOut(RuntimeError):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"stopped after {seconds:.0f} s")
        self.seconds = seconds


def peak_rss_mb(args: Sequence[str], cwd: Path, extra_env: Mapping[str, str] | None = None,
                timeout: float | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one command, via /usr/bin/time -v when present.

    Past ``timeout`` seconds the command (its whole process group) is killed: TimedOut.
    """
    import signal

    timer = shutil.which("time", path="/usr/bin")
    cmd = [timer, "-v", *args] if timer else list(args)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env(extra_env), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err_b = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise TimedOut(time.perf_counter() - t0) from None
    wall = time.perf_counter() - t0
    err = err_b.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {p.returncode}: {err.strip()[-2000:]}")
    if not timer:
        import resource

        return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # upper bound
    for line in err.splitlines():
        if "Maximum resident set size" in line:
            return wall, int(line.rsplit(":", 1)[1]) / 1024
    return wall, float("nan")


# Runs `git oxide ARGS` in this Python with VmHWM (the process's own peak resident memory) written
# to stderr as it exits, however it exits (the console script leaves with os._exit).
_OWN_PEAK = """
import os, sys
_exit = os._exit
def _peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            os.write(2, ("oxide-own-peak-kb " + line.split()[1] + "\\n").encode())
def _leave(code):
    _peak()
    _exit(code)
os._exit = _leave
import atexit
atexit.register(_peak)
sys.argv = ["git-oxide", *sys.argv[1:]]
from oxide_git.entry import main
main()
"""


def own_peak_mb(args: Sequence[str], cwd: Path) -> float:
    """Peak resident memory in MB of the `git oxide` process itself running ``args`` (the
    processes it starts, `git status` among them, not counted: ``peak_rss_mb`` gives the
    largest of all)."""
    p = subprocess.run([sys.executable, "-c", _OWN_PEAK, *args], cwd=cwd, env=env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"git oxide {' '.join(args)} exited {p.returncode}: {err.strip()[-2000:]}")
    peaks = [int(x.split()[1]) for x in err.splitlines() if x.startswith("oxide-own-peak-kb ")]
    if not peaks:
        raise RuntimeError(f"git oxide {' '.join(args)} did not say its peak memory")
    return max(peaks) / 1024
