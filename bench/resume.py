"""Benchmarks of going back: `rewind --code` on the big tree, `resume --format json` streaming."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from . import common
from .common import Contender, median, row
from .store import _KEY_SOURCES, _context, _init_repo, _message, _session, _write_new_session


def _log(msg: str) -> None:
    print(f"[bench.resume] {msg}", file=sys.stderr, flush=True)


def bench_rewind(quick: bool) -> list[dict[str, Any]]:
    """Rewind --code to a checkpoint that differs in 10 files (+2 new) vs `git status --porcelain`."""
    files = 5_000 if quick else 100_000
    reps = 5 if quick else 11
    tree = common.cached_tree(files, _log)
    common.reset_tree(tree)
    cp = common.run(common.oxide_cmd("checkpoint", "-m", "bench base"), tree).decode().strip()
    probe = tree / "src" / "d0001" / "f005.py"  # a file the rewind must not write
    common.apply_changes(tree, files)
    time.sleep(2.1)
    before = os.stat(probe).st_mtime_ns if probe.exists() else None

    def edit() -> None:
        common.apply_changes(tree, files)

    status = Contender("status", [["git", "status", "--porcelain"]])
    rewind = Contender("rewind", [common.oxide_cmd("rewind", cp, "--code", "--yes")])
    _log(f"rewind --code vs git status ({files:,} files), {reps} reps interleaved…")
    times: dict[str, list[float]] = {"status": [], "rewind": []}
    for i in range(reps):
        for c in ((status, rewind) if i % 2 else (rewind, status)):
            times[c.name].append(common.time_steps(c.steps, tree))
            if c is rewind:
                edit()  # the next rewind has the same 10 files to restore (not timed)
    untouched = before is None or os.stat(probe).st_mtime_ns == before
    st, rw = median(times["status"]), median(times["rewind"])
    common.reset_tree(tree)
    return [
        row(f"git oxide rewind --code, 10 files differ ({files // 1000}k files)", rw,
            "≤ 1.5× git status", baseline_s=st, met=rw <= 1.5 * st, samples=times["rewind"],
            note="files outside the 10 not written" if untouched else "an untouched file was written"),
    ]


def _resume_repo(sizes: list[int]) -> tuple[Path, dict[int, str]]:
    path = common.CACHE / f"resume-{'-'.join(map(str, sizes))}-{common.sources_key(*_KEY_SOURCES)}"
    ids_file = path / ".git" / "bench-ids"
    if ids_file.exists():
        ids = dict(line.split() for line in ids_file.read_text().splitlines())
        return path, {int(k): v for k, v in ids.items()}
    for old in common.CACHE.glob("resume-*"):
        if old != path:
            import shutil

            shutil.rmtree(old, ignore_errors=True)
    _init_repo(path)
    now_ms = 1_760_000_000_000
    ctx = _context(path, now_ms)
    ids = {}
    for n in sizes:
        _log(f"building a {n:,}-message session (one time)…")
        s = _session(ctx, n, now_ms + n)
        _write_new_session(ctx, s, [_message(q, now_ms) for q in range(n)], now_ms)
        ids[n] = s.id
    ctx.close()
    ids_file.write_text("".join(f"{k} {v}\n" for k, v in ids.items()))
    return path, ids


def bench_resume(quick: bool) -> list[dict[str, Any]]:
    sizes = [1_000, 5_000] if quick else [10_000, 50_000]
    path, ids = _resume_repo(sizes)
    rows = []
    small, big = sizes
    reps = 5 if quick else 9
    last = Contender("last", [common.oxide_cmd("resume", ids[small], "--format", "json")])
    t = common.interleaved([last], path, reps)
    m = median(t["last"])
    rows.append(row(f"git oxide resume --format json ({small:,} messages)", m, "< 500 ms",
                    met=m < 0.5, samples=t["last"]))
    runs = [common.peak_rss_mb(common.oxide_cmd("resume", ids[big], "--format", "json", "--full"), path)
            for _ in range(3)]  # a median: one run is at the mercy of whatever else the machine does
    wall, rss = median([w for w, _ in runs]), max(r for _, r in runs)
    rows.append(row(f"git oxide resume --format json --full ({big:,} messages)", wall,
                    "< 1 s, < 200 MB", met=wall < 1 and rss < 200, value=f"{wall:.2f} s, {rss:.0f} MB",
                    samples=[w for w, _ in runs]))
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for fn in (bench_rewind, bench_resume):
        try:
            out += fn(quick)
        except Exception as e:  # a benchmark that breaks is a row, not a crash of the run
            out.append(common.error_row(fn.__name__, "-", e))
    return out
