"""`make bench-large`: the figures of `make bench` an order of magnitude further (issue 17).

Kept out of CI and out of `make bench`. What it generates is cached in ``.bench-cache/large-*``
(outside the tracked tree) and reused by later runs; the first run of the 1M-file tree takes
minutes and about 1 GB of disk. Parts (``BENCH_LARGE_PARTS``, all by default): for each tree size
(``BENCH_LARGE_SIZES``, default 10k, 100k, 1M files) ``checkpoint`` (10 changed + 2 new, against
`git status --porcelain`, with its peak memory), ``watch`` (its start, memory, how soon it sees a
change, a checkpoint it answers), ``clone`` (the first checkpoint in a fresh clone), ``rewind``
(`rewind --code` of 10 files); then ``messages`` (``large_store``: stores of 1k to 1M messages),
``import`` (``large_import``: 1,500 sessions, a 2 GB rollout) and ``team`` (``large_remote``:
hooks, push/pull and gc at 100,000 sessions and checkpoints). `python -m bench` draws the rows'
``chart`` points into an SVG next to the results.

The tree is shaped like a large monorepo rather than `make bench`'s flat one: folders three to
six deep, about 20 files each (1M files: about 50,000 folders), sizes drawn from a long-tailed
distribution, and a `.gitignore` whose `node_modules/` holds many files git never looks at.
The fast-import stream is written as it is generated (a 1M-file stream does not fit in memory
on a small machine).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from . import common
from .chart import point
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
    _wall, git_peak = common.peak_rss_mb(["git", "status", "--porcelain"], tree)
    another_state()
    own = common.own_peak_mb(["checkpoint"], tree)
    rows = [
        row(f"git status --porcelain ({label})", st, "baseline", met=None, samples=t["status"]),
        row(f"git oxide checkpoint ({label})", c, "≤ 1.05× git status", baseline_s=st,
            met=c <= 1.05 * st, samples=t["checkpoint"]),
        row(f"checkpoint peak memory ({label})", None, "≤ 100 MB", value=f"{peak:.0f} MB", met=peak <= 100,
            note=f"git status --porcelain alone peaks at {git_peak:.0f} MB (the largest process of "
                 "each counts: a checkpoint without `watch` runs one)"),
        row(f"checkpoint peak memory, the oxide process alone ({label})", None, "≤ 100 MB",
            value=f"{own:.0f} MB", met=own <= 100, note="its `git status` child not counted"),
    ]
    rows[1]["chart"] = point("checkpoint / git status", files, rows[1]["ratio"], 1.05)
    rows[2]["chart"] = point("checkpoint peak memory (MB)", files, peak, 100)
    common.reset_tree(tree)
    return rows


def _timed_watch_start(tree: Path) -> tuple[float, float]:
    """(seconds until ``watch --daemon`` journals, its resident MB then) on ``tree``."""
    from oxide_git.git import watch_journal as journal
    from oxide_git.git.repo import find_repo

    repo = find_repo(tree, environ={})
    t0 = time.perf_counter()
    out = common.run(common.oxide_cmd("watch", "--daemon", "--json"), tree)
    pid = int(json.loads(out)["pid"])
    while not journal.active(repo):
        if time.perf_counter() - t0 > 600:
            raise RuntimeError("watch did not start journaling within 600 s")
        time.sleep(0.02)
    started = time.perf_counter() - t0
    return started, _rss_mb(pid)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _seen_within(tree: Path, paths: list[str], reps: int) -> list[float]:
    """Seconds from writing a file until the watcher's journal names it."""
    from oxide_git.git import watch_journal as journal
    from oxide_git.git.repo import find_repo

    repo = find_repo(tree, environ={})
    out = []
    for i in range(reps):
        rel = str(Path(paths[(i * 15485863) % len(paths)]).parent / f"seen_{i}.py")
        (tree / rel).write_text(f"print({i})\n")
        t0 = time.perf_counter()
        while True:
            got = journal.read(repo)
            if got is not None and rel in got[1]:
                break
            if time.perf_counter() - t0 > 10:
                raise RuntimeError(f"the watcher's journal never named {rel}")
            time.sleep(0.01)
        out.append(time.perf_counter() - t0)
    return out


def bench_watch(files: int, reps: int, log: Log = _log) -> list[dict[str, Any]]:
    """With `watch` running: its start, its memory, how soon it sees a change, and a checkpoint."""
    tree = cached_tree(files, log)
    common.reset_tree(tree)
    paths = layout(files)
    label = f"{files // 1000}k files"
    common.run(common.oxide_cmd("init"), tree)
    status = Contender("status", [["git", "status", "--porcelain"]])
    st0 = median(common.interleaved([status], tree, 3, warmup=1)["status"])
    log(f"watch --daemon on {label}…")
    started, rss = _timed_watch_start(tree)
    try:
        seen = _seen_within(tree, paths, reps)
        _changes(tree, paths)
        time.sleep(0.5)
        n = [0]

        def another_state() -> None:
            n[0] += 1
            (tree / Path(paths[0]).parent / "new_0.py").write_text(f"print({n[0]})\n")
            time.sleep(0.2)  # the watcher journals the event before the checkpoint asks

        cp = Contender("checkpoint", [common.oxide_cmd("checkpoint")], before=another_state)
        log(f"watch-assisted checkpoint vs git status ({label}), {reps} reps interleaved…")
        t = common.interleaved([status, cp], tree, reps, warmup=2)
        from oxide_git.git import watch_journal as journal
        from oxide_git.git.repo import find_repo

        info = journal.watcher(find_repo(tree, environ={}))
        rss_after = _rss_mb(int(info["pid"])) if info else float("nan")
    finally:
        common.run(common.oxide_cmd("watch", "--stop"), tree)
    st, c = median(t["status"]), median(t["checkpoint"])
    rows = [
        row(f"watch --daemon, journaling ({label})", started, "≤ 2× git status", baseline_s=st0,
            met=started <= 2 * st0),
        row(f"watch resident memory ({label})", None, "< 300 MB", value=f"{rss:.0f} MB", met=rss < 300),
        row(f"watch: a new file seen in its journal ({label})", median(seen), "< 1 s",
            met=max(seen) < 1.0, samples=seen),
        row(f"watch-assisted checkpoint ({label}, 10 changed + 2 new)", c, "≤ 0.05× git status",
            baseline_s=st, met=c <= 0.05 * st, samples=t["checkpoint"]),
    ]
    if rss_after == rss_after:  # not NaN
        rows[1]["note"] = f"{rss_after:.0f} MB after the checkpoints"
    rows[3]["chart"] = point("watch-assisted checkpoint / git status", files, rows[3]["ratio"], 0.05)
    rows[3]["watch_s"] = c
    common.reset_tree(tree)
    return rows


def bench_fresh_clone(files: int, log: Log = _log) -> list[dict[str, Any]]:
    """The first checkpoint in a fresh clone against the first `git status` in another fresh clone
    (what a user who just cloned pays either way), and against a status run after it (info)."""
    tree = cached_tree(files, log)
    common.reset_tree(tree)
    paths = layout(files)
    work = common.CACHE / "run"
    work.mkdir(parents=True, exist_ok=True)
    clone = work / "large-clone"
    timed: dict[str, list[float]] = {"checkpoint": [], "first status": [], "status after": []}
    log(f"first checkpoint and first git status, each in a fresh clone ({files // 1000}k files)…")

    def fresh(first: str) -> None:
        if clone.exists():
            shutil.rmtree(clone)
        common.run(["git", "clone", "-q", "--local", str(tree), str(clone)], work)
        try:
            _changes(clone, paths)
            # The checkout leaves gigabytes of dirty pages: written back before the timing, or
            # the first command pays for the kernel's writeback (1M files: 13.2 s against 6.4 s)
            os.sync()
            if first == "checkpoint":
                timed["checkpoint"].append(common.time_steps([common.oxide_cmd("checkpoint")], clone))
                timed["status after"].append(common.time_steps([["git", "status", "--porcelain"]], clone))
            else:
                timed["first status"].append(common.time_steps([["git", "status", "--porcelain"]], clone))
        finally:
            shutil.rmtree(clone, ignore_errors=True)

    for i in range(2 if files >= 1_000_000 else 3):
        for first in (("checkpoint", "status") if i % 2 == 0 else ("status", "checkpoint")):
            fresh(first)
    cp, st, after = (median(timed[k]) for k in ("checkpoint", "first status", "status after"))
    label = f"{files // 1000}k files"
    r = row(f"first checkpoint in a fresh clone ({label}; baseline: the first git status in a fresh "
            "clone)", cp, "≤ 1.5× git status", baseline_s=st, met=cp <= 1.5 * st, samples=timed["checkpoint"])
    r["chart"] = point("first checkpoint in a fresh clone / git status", files, r["ratio"], 1.5)
    return [r, row(f"the same against a git status run after it, in the same clone ({label})", cp, "info",
                   baseline_s=after, samples=timed["status after"])]


def bench_rewind(files: int, reps: int, log: Log = _log) -> list[dict[str, Any]]:
    """`rewind --code` to a checkpoint 10 files away, against git status, and what it wrote."""
    tree = cached_tree(files, log)
    common.reset_tree(tree)
    paths = layout(files)
    label = f"{files // 1000}k files, 10 differing"
    base = common.run(common.oxide_cmd("checkpoint", "--json"), tree)
    cp = json.loads(base)["id"]

    def differ() -> None:
        _changes(tree, paths, changed=10, new=0)

    status = Contender("status", [["git", "status", "--porcelain"]], before=differ)
    rw = Contender("rewind", [common.oxide_cmd("rewind", "--code", "--yes", cp)], before=differ)
    log(f"rewind --code vs git status ({label}), {reps} reps interleaved…")
    t = common.interleaved([status, rw], tree, reps, warmup=1)
    differ()
    before = {p: os.stat(tree / p).st_mtime_ns for p in paths[:2000]}
    out = json.loads(common.run(common.oxide_cmd("rewind", "--code", "--yes", "--json", cp), tree))
    touched = sum(1 for p, m in before.items() if os.stat(tree / p).st_mtime_ns != m)
    written = out.get("written", out.get("files", out.get("changed")))
    differ()
    _wall, peak = common.peak_rss_mb(common.oxide_cmd("rewind", "--code", "--yes", cp), tree)
    differ()
    own = common.own_peak_mb(["rewind", "--code", "--yes", cp], tree)
    common.reset_tree(tree)
    r = row(f"rewind --code ({label})", median(t["rewind"]), "≤ 1.05× git status",
            baseline_s=median(t["status"]), met=median(t["rewind"]) <= 1.05 * median(t["status"]),
            samples=t["rewind"],
            note=f"files written as it reports them: {written if written is not None else '?'}; "
                 f"of the first 2,000 files, {touched} had their mtime changed")
    r["chart"] = point("rewind --code / git status", files, r["ratio"], 1.05)
    return [r, row(f"rewind --code peak memory ({label})", None, "≤ 100 MB", value=f"{peak:.0f} MB",
                   met=peak <= 100, note=f"the oxide process alone: {own:.0f} MB (its `git status` "
                                         "child not counted)")]


PARTS = ("checkpoint", "watch", "clone", "rewind", "messages", "import", "team")


def run(quick: bool) -> list[dict[str, Any]]:
    sizes = [int(s) for s in os.environ.get("BENCH_LARGE_SIZES", "").split(",") if s] or \
        ([10_000] if quick else list(SIZES))
    parts = [p for p in os.environ.get("BENCH_LARGE_PARTS", "").split(",") if p] or list(PARTS)
    rows: list[dict[str, Any]] = []
    steps: list[tuple[str, Callable[[], list[dict[str, Any]]]]] = []
    for files in sizes:
        reps = 5 if quick or files >= 1_000_000 else 11
        if "checkpoint" in parts:
            steps.append((f"checkpoint {files}", partial(bench_checkpoint, files, reps)))
        if "watch" in parts:
            steps.append((f"watch {files}", partial(bench_watch, files, reps)))
        if "clone" in parts:
            steps.append((f"fresh clone {files}", partial(bench_fresh_clone, files)))
        if "rewind" in parts:
            steps.append((f"rewind {files}", partial(bench_rewind, files, reps)))
    if "messages" in parts:
        from . import large_store

        steps.append(("messages", partial(large_store.run, quick)))
    if "import" in parts:
        from . import large_import

        steps.append(("import", partial(large_import.run, quick)))
    if "team" in parts:
        from . import large_remote

        steps.append(("team", partial(large_remote.run, quick)))
    for name, fn in steps:
        try:
            rows += fn()
        except Exception as e:  # a report: one broken figure must not hide the others
            _log(f"{name} failed: {e}")
            rows.append(common.error_row(name, "(failed)", e))
    _flatness(rows)
    return rows


def _flatness(rows: list[dict[str, Any]]) -> None:
    """The watch-assisted checkpoint must be flat in tree size: at 1M within 1.5x its 100k time."""
    by = {r["chart"]["x"]: r["watch_s"] for r in rows if "watch_s" in r}
    if 100_000 in by and 1_000_000 in by:
        k = by[1_000_000] / by[100_000]
        rows.append(row("watch-assisted checkpoint, 1M files against 100k", by[1_000_000], "≤ 1.5×",
                        baseline_s=by[100_000], met=k <= 1.5))
