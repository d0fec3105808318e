"""The store's figures: checkpoint vs git status and vs the shadow-index method, the first
checkpoint in a fresh clone, appending to long sessions, `git oxide list --json`, and the commands a
user types (`list`, `show`, `search`, `status`: each under 150 ms, an interactive command's budget).

Targets (issue 2, "Speed"): checkpoint ≤ 1.5× `git status --porcelain` and below
`git add -A && git write-tree` on a warm private index; first checkpoint in a fresh clone < 3×
git status in that clone; one append < 20 ms and flat from 1k to 100k messages; `list --json`
with 10,000 sessions < 150 ms wall, process start included.
"""

from __future__ import annotations

import itertools
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from . import common
from .common import Contender, median, row

Log = Callable[[str], None]


def _log(msg: str) -> None:
    print(f"  [store] {msg}", flush=True)


# -- checkpoint --------------------------------------------------------------------------------

def bench_checkpoint(quick: bool, log: Log = _log) -> list[dict[str, Any]]:
    files = 5_000 if quick else 100_000
    reps = 5 if quick else 15
    tree = common.cached_tree(files, log)
    label = f"{files // 1000}k files, 10 changed + 2 new"
    common.reset_tree(tree)
    common.apply_changes(tree, files)
    time.sleep(2.1)  # the edits leave git's racy window, as in real use between two prompts
    private = tree / ".git" / "bench-private-index"
    shutil.copyfile(tree / ".git" / "index", private)
    status = Contender("status", [["git", "status", "--porcelain"]])
    new_file = next((tree / "src").glob("d*/new_0.py"))
    reps_done = [0]

    def another_state() -> None:
        # A checkpoint of a state already checkpointed is not written again (it prints the old
        # id): each timed one sees one of the new files with other content, as after a prompt.
        reps_done[0] += 1
        new_file.write_text(f"print({reps_done[0]})\n")

    cp = Contender("checkpoint", [common.oxide_cmd("checkpoint")], before=another_state)
    shadow = Contender("add-A", [["git", "add", "-A"], ["git", "write-tree"]],
                       {"GIT_INDEX_FILE": str(private)})
    log(f"checkpoint vs git status vs add -A ({label}), {reps} reps interleaved…")
    t = common.interleaved([status, cp, shadow], tree, reps, warmup=2)
    st, c, sh = median(t["status"]), median(t["checkpoint"]), median(t["add-A"])
    rows = [
        row(f"git status --porcelain ({label})", st, "baseline", met=None, samples=t["status"]),
        row(f"add -A + write-tree, warm private index ({label})", sh, "baseline (shadow-repo method)",
            baseline_s=st, met=None, samples=t["add-A"]),
        row(f"git oxide checkpoint ({label})", c, "≤ 1.5× git status", baseline_s=st,
            met=c <= 1.5 * st, samples=t["checkpoint"]),
        row("git oxide checkpoint vs add -A method", c, "< add -A + write-tree", baseline_s=sh,
            met=c < sh),
    ]
    common.reset_tree(tree)
    return rows


def bench_first_checkpoint(quick: bool, log: Log = _log) -> list[dict[str, Any]]:
    files = 5_000 if quick else 100_000
    clones = 3
    tree = common.cached_tree(files, log)
    common.reset_tree(tree)
    work = common.CACHE / "run"
    work.mkdir(parents=True, exist_ok=True)
    cps: list[float] = []
    sts: list[float] = []
    log(f"first checkpoint in {clones} fresh clones ({files:,} files)…")
    for i in range(clones):
        clone = work / f"clone-{i}"
        if clone.exists():
            shutil.rmtree(clone)
        common.run(["git", "clone", "-q", "--local", str(tree), str(clone)], work)
        try:
            common.apply_changes(clone, files)
            # Checkpoint first: it reads the clone's index without writing it (--no-optional-locks),
            # so the git status after it starts from the same, never-refreshed index.
            cps.append(common.time_steps([common.oxide_cmd("checkpoint")], clone))
            sts.append(common.time_steps([["git", "status", "--porcelain"]], clone))
        finally:
            shutil.rmtree(clone, ignore_errors=True)
    c, st = median(cps), median(sts)
    return [
        row(f"first git status in a fresh clone ({files // 1000}k files)", st, "baseline",
            samples=sts),
        row(f"first checkpoint in a fresh clone ({files // 1000}k files)", c, "< 3× git status",
            baseline_s=st, met=c < 3 * st, samples=cps),
    ]


# -- session logs ---------------------------------------------------------------------------------

_KEY_SOURCES = ("store/logwrite.py", "store/logread.py", "git/objects.py", "store/sessionlog.py", "core/codec.py",
                "core/model.py", "store/index.py", "store/index_schema.py", "store/writes.py",
                "store/context.py")


def _message(i: int, now_ms: int) -> Any:
    from oxide_git.core.model import Message, Part

    if i % 3 == 0:
        return Message("user", (Part.text(f"Please look at module {i} and fix the failing test; "
                                          "keep the public API unchanged. " * 2),),
                       created_at=now_ms, native_id=f"u-{i}")
    if i % 3 == 1:
        return Message("assistant", (
            Part.text(f"I'll inspect src/mod_{i}.py first. " + "The function returns early. " * 8),
            Part.tool_call(f"call_{i}", "Read", {"file_path": f"/work/project/src/mod_{i}.py"}),
        ), created_at=now_ms, native_id=f"a-{i}", model="claude-opus-4-6",
            usage={"input_tokens": 1200, "output_tokens": 90})
    return Message("user", (Part.tool_result(f"call_{i - 1}", "line\n" * 60),),
                   created_at=now_ms, native_id=f"t-{i}")


def _context(path: Path, now_ms: int) -> Any:
    from oxide_git.git.repo import find_repo
    from oxide_git.store.context import Context

    return Context(find_repo(path), now_ms, {})


def _session(ctx: Any, n: int, now_ms: int) -> Any:
    from oxide_git.core.model import Session

    return Session(id=f"{now_ms:012x}{n:020d}"[-32:], agent="claude", native_id=f"bench-{n}",
                   title=f"bench session of {n} messages", created_at=now_ms, updated_at=now_ms,
                   project_id=ctx.repo.project_id(), worktree=ctx.repo.worktree_id,
                   branch="main", cwd=str(ctx.repo.workdir))


def _init_repo(path: Path) -> None:
    common.fresh_dir(path)
    common.git(path, "init", "-q", "-b", "main")
    (path / "README").write_text("bench\n")
    common.git(path, "add", "README")
    common.git(path, "commit", "-q", "-m", "init")


def _write_new_session(ctx: Any, s: Any, messages: list[Any], now_ms: int, chunk: int = 10_000
                       ) -> None:
    """A new session with ``messages``, written the way ``store.save`` writes (git, then index)."""
    from oxide_git.core import codec
    from oxide_git.store import logread, logwrite

    objects, common_dir = ctx.repo.objects, ctx.repo.common_dir
    _ = ctx.index  # opened (and reindexed when new) before anything is written
    for start in range(0, len(messages), chunk):
        lg = logread.tip(objects, common_dir, s.id)
        puts = logwrite.with_ids(s.id, dict(enumerate(messages[start:start + chunk], start)))
        oid = logwrite.commit(objects, common_dir, s, {q: codec.encode_message(m) for q, m in puts.items()},
                              now_ms=now_ms,
                              summary=f"bench {len(puts)} messages", base=lg,
                              expected=lg.commit if lg else None)
        assert oid is not None
        with ctx.index.write() as conn:
            ctx.index.put_messages(conn, s.id, puts)
            ctx.index.put_session(conn, s, log_commit=oid.hex(), count=start + len(puts))


def write_sessions(ctx: Any, sessions: Iterable[tuple[Any, list[Any]]], batch: int,
                   progress: Callable[[int], None] | None = None) -> None:
    """New sessions and their messages, written the way the store writes them (``logwrite.commit``,
    then the index rows), with one index transaction per ``batch`` sessions instead of one per
    session: only the setup is faster. Each commit is dated its session's ``created_at``."""
    from oxide_git.core import codec
    from oxide_git.store import logread, logwrite

    objects, common_dir = ctx.repo.objects, ctx.repo.common_dir
    _ = ctx.index  # opened (and reindexed when new) before anything is written
    it, written = iter(sessions), 0
    while chunk := list(itertools.islice(it, batch)):
        done = []
        for s, messages in chunk:
            puts = logwrite.with_ids(s.id, dict(enumerate(messages)))
            blobs = {q: codec.encode_message(m) for q, m in puts.items()}
            oid = logwrite.commit(objects, common_dir, s, blobs, now_ms=s.created_at, summary="bench")
            assert oid is not None
            done.append((s, puts, oid.hex()))
        with ctx.index.write() as conn:
            for s, puts, tip in done:
                ctx.index.put_messages(conn, s.id, puts)
                ctx.index.put_session(conn, s, log_commit=tip, count=len(puts))
        written += len(done)
        if progress:
            progress(written)


def _prune(prefix: str, keep: Path) -> None:
    """Remove caches built with other product sources (their key differs)."""
    for old in common.CACHE.glob(prefix + "*"):
        if old != keep and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _sessions_repo(sizes: list[int], log: Log) -> tuple[Path, dict[int, str]]:
    """A cached repository holding one session per size (built once per product-source version)."""
    key = common.sources_key(*_KEY_SOURCES)
    path = common.CACHE / f"sessions-{'-'.join(map(str, sizes))}-{key}"
    now_ms = 1_760_000_000_000
    ready = path / ".git" / "bench-ready"
    if not ready.exists():
        _prune(f"sessions-{'-'.join(map(str, sizes))}-", path)
        _init_repo(path)
        ctx = _context(path, now_ms)
        for n in sizes:
            log(f"building a {n:,}-message session (one time)…")
            t0 = time.perf_counter()
            _write_new_session(ctx, _session(ctx, n, now_ms), [_message(q, now_ms) for q in range(n)],
                               now_ms)
            log(f"  built in {time.perf_counter() - t0:.1f} s")
        ctx.close()
        common.git(path, "gc", "-q")
        ready.write_text("ok\n")
    ctx = _context(path, now_ms)
    ids = {n: _session(ctx, n, now_ms).id for n in sizes}
    ctx.close()
    return path, ids


def bench_append(quick: bool, log: Log = _log) -> list[dict[str, Any]]:
    from oxide_git.store import sessionlog
    from oxide_git.store import writes as store

    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    reps = 10 if quick else 20
    cached, ids = _sessions_repo(sizes, log)
    work = common.CACHE / "run" / "sessions"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(cached, work)
    medians: dict[int, float] = {}
    samples: dict[int, list[float]] = {}
    log(f"appending one message to sessions of {', '.join(f'{n:,}' for n in sizes)}, "
        f"{reps} reps interleaved…")
    try:
        ctx = _context(work, int(time.time() * 1000))
        sessions = {}
        for n in sizes:
            lg = sessionlog.load(ctx.repo, ids[n])
            assert lg is not None and lg.count >= n, f"session of {n} missing in {cached}"
            sessions[n] = lg.session
        times: dict[int, list[float]] = {n: [] for n in sizes}
        for i in range(reps + 2):
            order = sizes[i % len(sizes):] + sizes[:i % len(sizes)]
            for n in order:
                ctx.now_ms += 1
                msg = _message(n + i, ctx.now_ms)
                t0 = time.perf_counter()
                store.append(ctx, sessions[n], [msg])
                dt = time.perf_counter() - t0
                if i >= 2:  # two warm-up rounds
                    times[n].append(dt)
        ctx.close()
        for n in sizes:
            medians[n], samples[n] = median(times[n]), times[n]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = medians[sizes[0]]
    rows = []
    for n in sizes:
        flat = n == sizes[0] or medians[n] <= 2 * base
        rows.append(row(
            f"append 1 message to a {n:,}-message session (in-process)", medians[n],
            "< 20 ms; flat (≤ 2× the 1k figure)",
            baseline_s=None if n == sizes[0] else base, met=medians[n] < 0.020 and flat,
            samples=samples[n]))
    return rows


def _list_repo(n: int, log: Log) -> Path:
    """A cached repository with ``n`` small sessions, written the way the store writes them."""
    key = common.sources_key(*_KEY_SOURCES)
    path = common.CACHE / f"list-{n}-{key}"
    ready = path / ".git" / "bench-ready"
    if ready.exists():
        return path
    log(f"creating {n:,} sessions (one time)…")
    t0 = time.perf_counter()
    _prune(f"list-{n}-", path)
    _init_repo(path)
    now_ms = 1_760_000_000_000
    ctx = _context(path, now_ms)
    base = _session(ctx, 0, now_ms)
    from dataclasses import replace

    def sessions() -> Iterator[tuple[Any, list[Any]]]:
        for i in range(n):
            t = now_ms - i * 60_000
            yield (replace(base, id=f"{t:012x}{i:020d}", native_id=f"native-{i}",
                           title=f"session {i}: fix the flaky test in module {i % 97}",
                           created_at=t, updated_at=t + 30_000),
                   [_message(q, t) for q in range(3)])

    def progress(done: int) -> None:
        if done % 2_000 == 0:
            log(f"  {done:,} sessions…")

    write_sessions(ctx, sessions(), 500, progress)
    ctx.close()
    common.git(path, "gc", "-q")
    ready.write_text("ok\n")
    log(f"  created in {time.perf_counter() - t0:.1f} s")
    return path


def bench_list(quick: bool, log: Log = _log) -> list[dict[str, Any]]:
    import json

    n = 1_000 if quick else 10_000
    reps = 7 if quick else 15
    path = _list_repo(n, log)
    out = common.run(common.oxide_cmd("list", "--json"), path)
    listed = json.loads(out)
    if len(listed) != n:
        raise RuntimeError(f"git oxide list --json printed {len(listed)} sessions, expected {n}")
    lst = Contender("list", [common.oxide_cmd("list", "--json")])
    refs = Contender("for-each-ref", [["git", "for-each-ref", "refs/oxide/sessions/"]])
    floor = Contender("version", [common.oxide_cmd("--version")])
    # What a user types at the terminal, each under the budget of an interactive command.
    typed = {"git oxide list": ["list"], "git oxide show SESSION": ["show", listed[0]["id"]],
             "git oxide search \"flaky test\"": ["search", "flaky test"], "git oxide status": ["status"]}
    log(f"git oxide list --json with {n:,} sessions, {reps} reps interleaved…")
    users = [Contender(k, [common.oxide_cmd(*a)]) for k, a in typed.items()]
    t = common.interleaved([lst, refs, floor, *users], path, reps, warmup=2)
    m = median(t["list"])
    interactive = [row(f"{k} ({n:,} sessions)", median(t[k]), "< 150 ms", met=median(t[k]) < 0.150,
                       samples=t[k]) for k in typed]
    return [*interactive,
        row(f"git for-each-ref refs/oxide/sessions/ ({n:,} refs)", median(t["for-each-ref"]),
            "baseline", samples=t["for-each-ref"]),
        row("git oxide --version (process start floor)", median(t["version"]), "info",
            samples=t["version"]),
        row(f"git oxide list --json ({n:,} sessions)", m, "< 150 ms wall",
            baseline_s=median(t["for-each-ref"]), met=m < 0.150, samples=t["list"]),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, fn in (("checkpoint", bench_checkpoint), ("first checkpoint", bench_first_checkpoint),
                     ("append", bench_append), ("list --json", bench_list)):
        try:
            rows += fn(quick)
        except Exception as e:  # a report: one broken figure must not hide the others
            _log(f"{name} failed: {e}")
            rows.append(common.error_row(name, "(failed)", e))
    return rows
