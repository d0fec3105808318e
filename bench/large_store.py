"""`make bench-large`, the message rows (issue 17): stores of 1k, 10k, 100k and 1M messages.

Each store is a repository of sessions of ``PER_SESSION`` messages (1M messages: 10,000 sessions),
written through the store's own write path (``logwrite.commit``, then the index rows), with text
drawn from a vocabulary of a few hundred words so that a two-word search hits a realistic share of
messages. Built once per product-source version into ``.bench-cache/large-store-*``.

Rows per size, each against ``git oxide --version`` (the process-start floor) in the same run:
``reindex --full`` (messages per second, and its peak memory), ``search "two words"``,
``list --json``. And the first screen of ``show`` of a 100,000-message session (the first 60
lines its output reaches, as a pager shows them), from the session ``make bench``'s append rows use.
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import common
from .chart import point
from .common import Contender, median, row

Log = Callable[[str], None]
SIZES = (1_000, 10_000, 100_000, 1_000_000)
PER_SESSION = 100
QUERY = "flaky retry"
_KEY_SOURCES = ("store/logwrite.py", "store/logread.py", "git/objects.py", "store/sessionlog.py", "core/codec.py",
                "core/model.py", "store/index.py", "store/index_schema.py", "store/writes.py",
                "store/context.py")

_TEXT = (
    "the test fails when the cache is cold and the retry loop gives up after three attempts so we "
    "should look at the fixture that builds the worktree before each run because it leaves a lock "
    "file behind flaky network timeout parser token stream buffer offset window commit branch merge "
    "rebase conflict patch hunk diff blame index schema migration column table query join filter "
    "sort page cursor limit batch queue worker thread process signal socket pipe file folder path "
    "module package import export function method class field value default option flag config "
    "setting environment variable secret key token redact mask log trace span metric counter gauge "
    "histogram bucket latency throughput memory leak allocation garbage collector heap stack frame "
    "please fix refactor rename extract inline move delete add update check verify assert expect "
    "mock stub fake real integration unit end to end suite coverage mutation survivor killed"
)
_VOCAB = tuple(_TEXT.split(" "))


def _log(msg: str) -> None:
    print(f"  [large-store] {msg}", flush=True)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(_VOCAB, k=words)).capitalize() + "."


def messages(rng: random.Random, n: int, t: int) -> list[Any]:
    """``n`` messages of one session: prompts, answers with a tool call, tool results."""
    from oxide_git.core.model import Message, Part

    out = []
    for i in range(n):
        at = t + i * 1000
        if i % 3 == 0:
            out.append(Message("user", (Part.text(_text(rng, rng.randint(8, 60))),), created_at=at,
                               native_id=f"u-{i}"))
        elif i % 3 == 1:
            out.append(Message("assistant", (
                Part.text(_text(rng, rng.randint(20, 120))),
                Part.tool_call(f"call_{i}", "Bash",
                               {"command": f"pytest -q tests/test_{rng.choice(_VOCAB)}.py"}),
            ), created_at=at, native_id=f"a-{i}", model="claude-opus-4-6",
                usage={"input_tokens": 1200 + i, "output_tokens": 90}))
        else:
            out.append(Message("user", (Part.tool_result(f"call_{i - 1}", _text(rng, rng.randint(10, 200))),),
                               created_at=at, native_id=f"t-{i}"))
    return out


def cached_store(n_messages: int, log: Log = _log) -> Path:
    """A repository whose store holds ``n_messages`` in sessions of ``PER_SESSION``."""
    from .store import _context, _init_repo, _prune, _session, write_sessions

    key = common.sources_key(*_KEY_SOURCES)
    path = common.CACHE / f"large-store-{n_messages}-{key}"
    ready = path / ".git" / "bench-ready"
    if ready.exists():
        return path
    count = max(1, n_messages // PER_SESSION)
    log(f"building a store of {n_messages:,} messages in {count:,} sessions (one time)…")
    t0 = time.perf_counter()
    _prune(f"large-store-{n_messages}-", path)
    _init_repo(path)
    now_ms = 1_760_000_000_000
    ctx = _context(path, now_ms)
    base = _session(ctx, 0, now_ms)
    rng = random.Random(n_messages)

    def sessions() -> Iterator[tuple[Any, list[Any]]]:
        for i in range(count):
            t = now_ms - i * 3_600_000
            yield (replace(base, id=f"{t:012x}{i:020d}", native_id=f"native-{i}",
                           title=f"session {i}: {_text(rng, 6)}", created_at=t,
                           updated_at=t + PER_SESSION * 1000),
                   messages(rng, PER_SESSION, t))

    def progress(done: int) -> None:
        if done % 1_000 == 0:
            log(f"  {done * PER_SESSION:,} messages… ({time.perf_counter() - t0:.0f} s)")

    write_sessions(ctx, sessions(), 100, progress)
    ctx.close()
    common.git(path, "gc", "-q")
    ready.write_text("ok\n")
    log(f"  built in {time.perf_counter() - t0:.0f} s")
    return path


def first_screen(args: list[str], cwd: Path, lines: int = 60) -> float:
    """Seconds until ``args`` has printed ``lines`` lines (what a pager shows first); then it is
    stopped, as a pager's quit stops it."""
    t0 = time.perf_counter()
    p = subprocess.Popen(args, cwd=cwd, env=common.env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdout is not None
    got = 0
    for _ in p.stdout:
        got += 1
        if got >= lines:
            break
    dt = time.perf_counter() - t0
    p.kill()
    p.wait()
    if got < lines:
        raise RuntimeError(f"{' '.join(args)} printed {got} lines, expected at least {lines}")
    return dt


def sqlite_floor(path: Path) -> float:
    """Messages per second that SQLite alone takes to write the rows ``reindex`` writes: the same
    ``messages`` and ``parts`` rows (read from the store's index), into a fresh index of the same
    schema (the search log's triggers included), in one transaction, nothing read from git or
    decoded, and no search index built."""
    import sqlite3
    import tempfile

    from oxide_git.store.index_schema import create_schema

    src = sqlite3.connect(path / ".git" / "oxide" / "index.db")
    msgs = src.execute("SELECT session_id, seq, id, role, created_at, native_id, compacted, is_compaction, "
                       "text, model, real FROM messages").fetchall()
    parts = src.execute("SELECT session_id, seq, idx, type, call_id, name, is_error FROM parts").fetchall()
    src.close()
    with tempfile.TemporaryDirectory(dir=common.CACHE) as d:
        dst = Path(d) / "index.db"
        create_schema(dst)
        db = sqlite3.connect(dst, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        t0 = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO messages VALUES (?,?,?,?,?,?,?,?,?,?,?)", msgs)
        db.executemany("INSERT INTO parts VALUES (?,?,?,?,?,?,?)", parts)
        db.execute("COMMIT")
        dt = time.perf_counter() - t0
        db.close()
    return len(msgs) / dt


def bench_size(n: int, reps: int, log: Log = _log) -> list[dict[str, Any]]:
    path = cached_store(n, log)
    label = f"{n:,} messages, {max(1, n // PER_SESSION):,} sessions"
    floor = Contender("version", [common.oxide_cmd("--version")])
    search = Contender("search", [common.oxide_cmd("search", QUERY)])
    lst = Contender("list", [common.oxide_cmd("list", "--json")])
    log(f"search / list --json vs --version ({label}), {reps} reps interleaved…")
    t = common.interleaved([floor, search, lst], path, reps, warmup=2)
    v = median(t["version"])
    full = Contender("reindex", [common.oxide_cmd("reindex", "--full")])
    rreps = 3 if n >= 1_000_000 else 5
    log(f"reindex --full ({label}), {rreps} reps…")
    r = common.interleaved([full], path, rreps, warmup=0)
    rt = median(r["reindex"])
    _wall, peak = common.peak_rss_mb(common.oxide_cmd("reindex", "--full"), path)
    rate = n / rt
    floor_rate = sqlite_floor(path)
    rows = [
        row(f"git oxide --version ({label})", v, "baseline", samples=t["version"]),
        row(f"search \"{QUERY}\" ({label})", median(t["search"]), "≤ 1.5× git oxide --version",
            baseline_s=v, met=median(t["search"]) <= 1.5 * v, samples=t["search"]),
        row(f"list --json ({label})", median(t["list"]), "≤ 2× git oxide --version", baseline_s=v,
            met=median(t["list"]) <= 2 * v, samples=t["list"]),
        row(f"reindex --full ({label})", rt, "≥ 100,000 messages/s", value=f"{rate:,.0f} msg/s",
            met=rate >= 100_000, samples=r["reindex"]),
        row(f"SQLite alone, the same rows into a fresh index ({label})", None, "floor of reindex",
            value=f"{floor_rate:,.0f} msg/s", met=None,
            note="the rows reindex --full writes (and the search log their triggers fill), in one "
                 "transaction, nothing read from git; the search index it then builds is not in it"),
        row(f"reindex --full peak memory ({label})", None, "≤ 100 MB", value=f"{peak:.0f} MB",
            met=peak <= 100),
    ]
    rows += bench_watch_search(path, label, reps)
    rows[1]["chart"] = point("search / git oxide --version", n, rows[1]["ratio"], 1.5)
    rows[2]["chart"] = point("list --json / git oxide --version", n, rows[2]["ratio"], 2.0)
    rows[3]["chart"] = point("reindex --full (messages/s)", n, rate, 100_000)
    rows[4]["chart"] = point("SQLite alone (messages/s), reindex's floor", n, floor_rate)
    rows[5]["chart"] = point("reindex --full peak memory (MB)", n, peak, 100)
    return rows


def bench_watch_search(path: Path, label: str, reps: int) -> list[dict[str, Any]]:
    """``search`` with `watch` running: the command (answered over the watcher's socket) against
    ``--version``, and the socket's own round trip (connect, ask, answer) measured in this process."""
    from oxide_git.git import watch_journal as journal
    from oxide_git.git.repo import find_repo
    from oxide_git.watch import fastpath

    home = common.fresh_dir(common.CACHE / "run" / "watch-home")  # no agent store to import
    extra = {"HOME": str(home), "XDG_DATA_HOME": str(home / "xdg"), "XDG_CONFIG_HOME": str(home / "cfg"),
             "CODEX_HOME": str(home / "codex"), "CLAUDE_CONFIG_DIR": str(home / "claude")}
    common.run(common.oxide_cmd("watch", "--daemon"), path, extra_env=extra)
    saved, asking = dict(os.environ), common.env(extra)
    os.environ.clear()
    os.environ.update(asking)  # this process asks the watcher as the command would
    try:
        repo = find_repo(path, environ={})
        t0 = time.perf_counter()
        while not journal.active(repo) and time.perf_counter() - t0 < 300:
            time.sleep(0.05)
        # and until it answers a search: its first one waits for the start-up's work (a watcher
        # busy for over half a second is not asked, and OXIDE_FASTPATH=only then fails)
        while fastpath.ask([QUERY], str(path), "search") is None and time.perf_counter() - t0 < 300:
            time.sleep(0.2)
        floor = Contender("version", [common.oxide_cmd("--version")], extra)
        search = Contender("search", [common.oxide_cmd("search", QUERY)], {**extra, "OXIDE_FASTPATH": "only"})
        t = common.interleaved([floor, search], path, reps, warmup=2)
        trips = []
        for _ in range(reps + 2):
            t1 = time.perf_counter()
            answer = fastpath.ask([QUERY], str(path), "search")
            trips.append(time.perf_counter() - t1)
            if answer is None or answer[0] != 0:
                raise RuntimeError("the watcher did not answer the search")
        trips = trips[2:]
    finally:
        os.environ.clear()
        os.environ.update(saved)
        common.run(common.oxide_cmd("watch", "--stop"), path, extra_env=extra)
    v, sm, trip = median(t["version"]), median(t["search"]), median(trips)
    return [
        row(f"search with watch running, the command ({label})", sm, "≤ 1.5× git oxide --version",
            baseline_s=v, met=sm <= 1.5 * v, samples=t["search"]),
        row(f"search with watch running, over its socket ({label})", trip, "≤ 10 ms", met=trip <= 0.010,
            samples=trips, note="connect, ask, answer: what the command adds to its own start"),
    ]


def bench_show(reps: int, log: Log = _log) -> list[dict[str, Any]]:
    from .store import _sessions_repo

    sizes = [1_000, 10_000, 100_000]
    path, ids = _sessions_repo(sizes, log)
    sid = ids[100_000]
    floor = Contender("version", [common.oxide_cmd("--version")])
    show_t: list[float] = []
    vs: list[float] = []
    log(f"show of a 100,000-message session, first screen, {reps} reps…")
    for i in range(reps + 1):
        v = common.time_steps(floor.steps, path)
        s = first_screen(common.oxide_cmd("show", sid), path)
        if i:
            vs.append(v)
            show_t.append(s)
    return [row("show, 100,000-message session: first screen (60 lines)", median(show_t),
                "≤ 3× git oxide --version", baseline_s=median(vs), met=median(show_t) <= 3 * median(vs),
                samples=show_t)]


def run(quick: bool) -> list[dict[str, Any]]:
    sizes = [int(s) for s in os.environ.get("BENCH_LARGE_MESSAGES", "").split(",") if s] or \
        ([1_000, 10_000] if quick else list(SIZES))
    rows: list[dict[str, Any]] = []
    for n in sizes:
        rows += bench_size(n, 5 if quick or n >= 1_000_000 else 9)
    rows += bench_show(3 if quick else 7)
    return rows
