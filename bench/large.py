"""`make bench-large`: the figures of `make bench` an order of magnitude further (issue 17).

Kept out of CI and out of `make bench`. What it generates is cached in ``.bench-cache/large-*``
(outside the tracked tree) and reused by later runs; the first run of the 1M-file tree takes
minutes and about 1 GB of disk. So far: the checkpoint rows at 10k, 100k and 1M files (10 changed
+ 2 new), each against `git status --porcelain` in the same run, with the checkpoint's peak RSS.

The tree is shaped like a large monorepo rather than `make bench`'s flat one: folders three to
six deep, about 20 files each (1M files: about 50,000 folders), sizes drawn from a long-tailed
distribution, and a `.gitignore` whose `node_modules/` holds many files git never looks at.
The fast-import stream is written as it is generated (a 1M-file stream does not fit in memory
on a small machine).
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import common
from .common import Contender, median, row

Log = Callable[[str], None]
SIZES = (10_000, 100_000, 1_000_000)
PER_DIR = 20
IGNORED = 20_000  # files under node_modules/ (ignored): status and checkpoint must not pay for them


def _log(msg: str) -> None:
    print(f"  [large] {msg}", flush=True)


def layout(files: int) -> list[str]:
    """``files`` paths in folders three to six deep, ``PER_DIR`` to a folder (deterministic)."""
    rng = random.Random(files)
    paths: list[str] = []
    d = 0
    while len(paths) < files:
        depth = rng.randint(3, 6)
        parts = [f"p{rng.randrange(8)}", f"m{rng.randrange(40)}"]
        parts += [f"d{rng.randrange(60)}" for _ in range(depth - 2)]
        folder = "/".join(parts) + f"/x{d}"
        d += 1
        for f in range(min(PER_DIR, files - len(paths))):
            paths.append(f"{folder}/f{f:02d}.{'py' if f % 3 else 'ts'}")
    return paths


def _body(rng: random.Random, i: int) -> bytes:
    n = min(int(rng.lognormvariate(3.2, 1.0)) + 3, 4000)  # lines: a long tail, most files small
    lines = [f"// file {i}"] + [" ".join(rng.choices(common.WORDS, k=8)) for _ in range(n)]
    return ("\n".join(lines) + "\n").encode()


def cached_tree(files: int, log: Log = _log) -> Path:
    path = common.CACHE / f"large-{files}"
    done = path / ".git" / "bench-ready"
    if done.exists():
        return path
    log(f"generating a {files:,}-file tree in {path} (one time, streamed into git fast-import)…")
    common.fresh_dir(path)
    common.git(path, "init", "-q", "-b", "main")
    paths = layout(files)
    rng = random.Random(4321)
    p = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=path, stdin=subprocess.PIPE, env=common.env())
    assert p.stdin is not None
    for mark, _ in enumerate(paths, 1):
        body = _body(rng, mark)
        p.stdin.write(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(body), body))
    p.stdin.write(b"commit refs/heads/main\ncommitter bench <bench@localhost> 1700000000 +0000\n"
                  b"data 10\ngenerated\nM 100644 inline .gitignore\ndata 14\nnode_modules/\n\n")
    for mark, name in enumerate(paths, 1):
        p.stdin.write(b"M 100644 :%d %s\n" % (mark, name.encode()))
    p.stdin.write(b"\n")
    p.stdin.close()
    if p.wait() != 0:
        raise RuntimeError("git fast-import failed")
    common.git(path, "reset", "-q", "--hard", "main")
    nm = path / "node_modules"
    for i in range(IGNORED):
        d = nm / f"pkg{i // 50}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i % 50}.js").write_text(f"module.exports = {i}\n")
    common.git(path, "gc", "-q")
    time.sleep(2.1)  # past the racy-git window
    common.git(path, "update-index", "-q", "--really-refresh")
    common.git(path, "status", "--porcelain")
    done.write_text("ok\n")
    return path


def _changes(path: Path, paths: list[str], changed: int = 10, new: int = 2) -> None:
    for k in range(changed):
        with open(path / paths[(k * 7919) % len(paths)], "a") as f:
            f.write(f"// bench edit {k}\n")
    for k in range(new):
        (path / Path(paths[(k * 104729) % len(paths)]).parent / f"new_{k}.py").write_text(f"print({k})\n")


def bench_checkpoint(files: int, reps: int, log: Log = _log) -> list[dict[str, Any]]:
    tree = cached_tree(files, log)
    common.reset_tree(tree)
    paths = layout(files)
    _changes(tree, paths)
    time.sleep(2.1)
    label = f"{files // 1000}k files, 10 changed + 2 new"
    status = Contender("status", [["git", "status", "--porcelain"]])
    n = [0]

    def another_state() -> None:
        n[0] += 1
        (tree / Path(paths[0]).parent / "new_0.py").write_text(f"print({n[0]})\n")

    cp = Contender("checkpoint", [common.oxide_cmd("checkpoint")], before=another_state)
    log(f"checkpoint vs git status ({label}), {reps} reps interleaved…")
    t = common.interleaved([status, cp], tree, reps, warmup=2)
    st, c = median(t["status"]), median(t["checkpoint"])
    another_state()
    _wall, peak = common.peak_rss_mb(common.oxide_cmd("checkpoint"), tree)
    rows = [
        row(f"git status --porcelain ({label})", st, "baseline", met=None, samples=t["status"]),
        row(f"git oxide checkpoint ({label})", c, "≤ 1.05× git status", baseline_s=st,
            met=c <= 1.05 * st, samples=t["checkpoint"]),
        row(f"checkpoint peak memory ({label})", None, "≤ 100 MB", value=f"{peak:.0f} MB", met=peak <= 100),
    ]
    common.reset_tree(tree)
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    sizes = [int(s) for s in os.environ.get("BENCH_LARGE_SIZES", "").split(",") if s] or \
        ([10_000] if quick else list(SIZES))
    rows: list[dict[str, Any]] = []
    for files in sizes:
        rows += bench_checkpoint(files, 5 if quick or files >= 1_000_000 else 11)
    return rows
