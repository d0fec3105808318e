"""`make bench-large`, a team's store (issue 17): 100,000 sessions, 100,000 checkpoints.

- ``git commit`` with the hooks installed and a current session, in a store of 10 and of 100,000
  sessions, against the same commit in a repository without hooks (the figure is what the hooks
  add; flat means the 100,000 figure is within 1.5x the 10 one, or within 10 ms of it).
- A team remote holding 100,000 session refs: ``git oxide push`` of one new session against a
  plain ``git push`` of one new ref to the same remote, and in a second clone ``git oxide pull``
  of it against a plain ``git fetch`` of one ref. Each is checked to have moved the session.
- ``git gc`` of a store with 100,000 checkpoints against ``git gc`` of a plain repository of the
  same trees and blobs (a branch of 100,000 commits); afterwards every checkpoint ref still
  resolves to its commit, ``git oxide gc`` removes none of them (they are younger than their TTL),
  and ``git fsck`` is clean.

The 100,000-session store is ``store``'s ``list`` repository at that size (built once).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import common
from .common import median, row

Log = Callable[[str], None]
SESSIONS = 100_000
CHECKPOINTS = 100_000


def _log(msg: str) -> None:
    print(f"  [large-remote] {msg}", flush=True)


def _copy(src: Path, name: str) -> Path:
    dst = common.CACHE / "run" / name
    if dst.exists():
        shutil.rmtree(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _new_session(repo: Path, i: int, current: bool = False) -> str:
    """One more session in ``repo``'s store, written as an import writes it."""
    from oxide_git.core.model import Message, Part, Session, session_id_for
    from oxide_git.git.repo import find_repo
    from oxide_git.store import writes as store
    from oxide_git.store.context import Context

    t = int(time.time() * 1000)
    ctx = Context(find_repo(repo, environ={}), t, {})
    sid = session_id_for("claude", f"bench-new-{i}-{t}", t)
    s = Session(id=sid, agent="claude", native_id=f"bench-new-{i}-{t}", created_at=t, cwd=str(repo),
                worktree=ctx.repo.worktree_id, project_id=ctx.repo.project_id())
    store.append(ctx, s, [Message(role="user", parts=(Part.text(f"new prompt {i}"),), created_at=t)])
    if current:
        store.set_current_session(ctx, sid)
    ctx.close()
    return sid


def _idle(repo: Path) -> None:
    from oxide_git.hooks.queue import wait_idle

    wait_idle(repo / ".git", 120)


def _commit(repo: Path, i: int) -> float:
    (repo / "change.txt").write_text(f"{i}\n")
    common.git(repo, "add", "change.txt")
    t = common.time_steps([["git", "commit", "-q", "-m", f"c{i}"]], repo)
    _idle(repo)
    return t


def bench_hooks(reps: int, log: Log = _log) -> list[dict[str, Any]]:
    """What the hooks add to `git commit`: the same store with and without them, 10 and 100,000
    sessions (a store of many refs makes git's own ref updates slower: that is not the hooks')."""
    from .store import _init_repo, _list_repo

    big = _list_repo(SESSIONS, log)
    pairs: dict[str, tuple[Path, Path]] = {"100k": (_copy(big, "hooks-100k"), _copy(big, "hooks-100k-plain"))}
    small, small_plain = common.CACHE / "run" / "hooks-10", common.CACHE / "run" / "hooks-10-plain"
    for path in (small, small_plain):
        _init_repo(path)
        for i in range(10):
            _new_session(path, i)
    pairs["10"] = (small, small_plain)
    for hooked, _plain in pairs.values():
        common.run(common.oxide_cmd("init", "--hooks"), hooked)
        _new_session(hooked, 99, current=True)
    added: dict[str, list[float]] = {"10": [], "100k": []}
    log(f"git commit with and without hooks, 10 and {SESSIONS:,} sessions, {reps} reps…")
    for i in range(reps + 1):
        for size, (hooked, plain) in pairs.items():
            p = _commit(plain, i)
            h = _commit(hooked, i)
            if i:
                added[size].append(h - p)
    a10, a100k = median(added["10"]), median(added["100k"])
    flat = a100k <= max(1.5 * a10, a10 + 0.010)
    for hooked, plain in pairs.values():
        shutil.rmtree(hooked, ignore_errors=True)
        shutil.rmtree(plain, ignore_errors=True)
    return [
        row("git commit + hooks, 10 sessions (added)", a10, "< 30 ms added", met=a10 < 0.030,
            samples=added["10"]),
        row(f"git commit + hooks, {SESSIONS:,} sessions (added)", a100k, "< 30 ms added; flat from 10",
            baseline_s=a10, met=a100k < 0.030 and flat, samples=added["100k"]),
    ]


def _team(log: Log) -> tuple[Path, Path, Path]:
    """(bare remote with 100,000 session refs, clone A, clone B), A and B holding them all."""
    from .store import _list_repo

    src = _list_repo(SESSIONS, log)
    remote = common.CACHE / f"team-remote-{src.name}.git"
    if not (remote / "bench-ready").exists():
        log(f"seeding a bare remote with {SESSIONS:,} session refs (one time)…")
        common.fresh_dir(remote)
        common.git(remote, "init", "-q", "--bare")
        common.git(src, "push", "-q", str(remote), "refs/heads/main:refs/heads/main",
                   "refs/oxide/sessions/*:refs/oxide/sessions/*")
        common.git(remote, "pack-refs", "--all")  # as a hosted remote keeps them (and `git gc` would)
        (remote / "bench-ready").write_text("ok\n")
    remote = _copy(remote, "team-remote.git")  # what a run pushes does not stay in the cached one
    a, b = _copy(src, "team-a"), _copy(src, "team-b")
    for clone in (a, b):
        common.git(clone, "remote", "add", "origin", str(remote))
        common.git(clone, "fetch", "-q", "origin")
    return remote, a, b


def bench_team(reps: int, log: Log = _log) -> list[dict[str, Any]]:
    remote, a, b = _team(log)
    log(f"first pull of a remote of {SESSIONS:,} session refs (all new to this clone's mirror)…")
    first = common.time_steps([common.oxide_cmd("pull", "origin")], b)
    for clone in (a, b):
        common.git(clone, "pack-refs", "--all")  # what the clone's next `git gc` does
    push_t, gpush_t, pull_t, fetch_t = [], [], [], []
    log(f"push / pull of one session against a remote of {SESSIONS:,} session refs, {reps} reps…")
    for i in range(reps + 1):
        sid = _new_session(a, i)
        (a / "plain.txt").write_text(f"{i}\n")
        common.git(a, "add", "plain.txt")
        common.git(a, *common.GIT_ID, "commit", "-q", "-m", f"plain {i}")
        push = common.time_steps([common.oxide_cmd("push", "origin")], a)
        gpush = common.time_steps([["git", "push", "-q", "origin", f"HEAD:refs/heads/bench-{i}"]], a)
        pull = common.time_steps([common.oxide_cmd("pull", "origin")], b)
        one = f"refs/heads/bench-{i}:refs/remotes/bench-{i}"
        fetch = common.time_steps([["git", "fetch", "-q", "origin", one]], b)
        got = common.git(b, "for-each-ref", f"refs/oxide/sessions/{sid}").strip()
        if not got:
            raise RuntimeError(f"git oxide pull did not bring session {sid}")
        if i:
            push_t.append(push)
            gpush_t.append(gpush)
            pull_t.append(pull)
            fetch_t.append(fetch)
    for path in (a, b, remote):
        shutil.rmtree(path, ignore_errors=True)
    p, gp, pl, gf = median(push_t), median(gpush_t), median(pull_t), median(fetch_t)
    return [
        row(f"first git oxide pull of a remote of {SESSIONS:,} session refs", first, "info",
            note="every ref new to this clone's mirror (its sessions already here)"),
        row(f"git push of one ref (remote of {SESSIONS:,} session refs)", gp, "baseline", samples=gpush_t),
        row("git oxide push of one new session", p, "≤ 2× git push", baseline_s=gp, met=p <= 2 * gp,
            samples=push_t),
        row(f"git fetch of one ref (remote of {SESSIONS:,} session refs)", gf, "baseline", samples=fetch_t),
        row("git oxide pull of one new session", pl, "≤ 2× git fetch", baseline_s=gf, met=pl <= 2 * gf,
            samples=pull_t),
    ]


def _checkpoint_repos(log: Log) -> tuple[Path, Path]:
    """(a store with ``CHECKPOINTS`` checkpoint refs, a plain repository of the same trees)."""
    store_repo = common.CACHE / f"gc-store-{CHECKPOINTS}"
    plain = common.CACHE / f"gc-plain-{CHECKPOINTS}"
    if (store_repo / ".git" / "bench-ready").exists() and (plain / ".git" / "bench-ready").exists():
        return store_repo, plain
    log(f"generating {CHECKPOINTS:,} checkpoints and a plain branch of the same trees (one time)…")
    now = int(time.time()) - 3600
    files = 100
    for path in (store_repo, plain):
        common.fresh_dir(path)
        common.git(path, "init", "-q", "-b", "main")
    base = [b"blob\nmark :%d\ndata %d\n%s\n" % (k + 1, len(f"file {k}\n"), f"file {k}\n".encode())
            for k in range(files)]
    head = [b"commit refs/heads/main\nmark :%d\ncommitter bench <bench@localhost> %d +0000\ndata 4\nbase\n"
            % (files + 1, now)] + [b"M 100644 :%d src/f%03d.txt\n" % (k + 1, k) for k in range(files)]
    sid = "0000019a0000000000000000bench000"
    chunks_store: list[bytes] = [*base, *head, b"\n"]
    chunks_plain: list[bytes] = [*base, *head, b"\n"]
    mark = files + 2
    for i in range(CHECKPOINTS):
        k = i % files
        body = f"file {k}, checkpoint {i}\n".encode()
        blob = b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(body), body)
        msg = (f"oxide: prompt {i}\n\nOxide-Kind: prompt\nOxide-Session: {sid}\nOxide-Message: none\n"
               f"Oxide-Worktree: main\nOxide-Branch: main\nOxide-Files-Changed: 1\n"
               f"Oxide-Time: {(now + i) * 1000}\n").encode()
        chunks_store += [blob, b"commit refs/oxide/bench-tmp/%d\ncommitter oxide <oxide@localhost> %d +0000\n"
                         b"data %d\n%s\nfrom :%d\nM 100644 :%d src/f%03d.txt\n\n"
                         % (i, now + i, len(msg), msg, files + 1, mark, k)]
        restore = b"M 100644 :%d src/f%03d.txt\n" % ((i - 1) % files + 1, (i - 1) % files) if i else b""
        chunks_plain += [blob, b"commit refs/heads/main\ncommitter bench <bench@localhost> %d +0000\n"
                         b"data %d\n%s\n%sM 100644 :%d src/f%03d.txt\n\n"
                         % (now + i, len(msg), msg, restore, mark, k)]
        mark += 1
    marks = store_repo / ".git" / "bench-marks"
    common.git(store_repo, "fast-import", "--quiet", f"--export-marks={marks}", stdin=b"".join(chunks_store))
    common.git(plain, "fast-import", "--quiet", stdin=b"".join(chunks_plain))
    tmp = common.git(store_repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/oxide/bench-tmp/")
    cmds = []
    for line in tmp.decode().splitlines():
        oid, name = line.split(" ", 1)
        cmds.append(f"create refs/oxide/checkpoints/{sid}/{oid} {oid}\ndelete {name} {oid}\n")
    common.git(store_repo, "update-ref", "--stdin", stdin="".join(cmds).encode())
    for path in (store_repo, plain):
        common.git(path, "reset", "-q", "--hard", "main")
        (path / ".git" / "bench-ready").write_text("ok\n")
    return store_repo, plain


def _checkpoint_refs(repo: Path) -> dict[str, str]:
    out = common.git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide/checkpoints/")
    return dict(line.split(" ", 1) for line in out.decode().splitlines())


def bench_gc(reps: int, log: Log = _log) -> list[dict[str, Any]]:
    src_store, src_plain = _checkpoint_repos(log)
    st, pl = _copy(src_store, "gc-store"), _copy(src_plain, "gc-plain")
    before = _checkpoint_refs(st)
    if len(before) != CHECKPOINTS:
        raise RuntimeError(f"{len(before)} checkpoint refs generated, expected {CHECKPOINTS}")
    gc_store, gc_plain = [], []
    log(f"git gc, {CHECKPOINTS:,} checkpoints against a plain branch of the same trees, {reps} reps…")
    for i in range(reps):
        for repo, out in ((st, gc_store), (pl, gc_plain)) if i % 2 else ((pl, gc_plain), (st, gc_store)):
            out.append(common.time_steps([["git", "gc", "-q"]], repo))
    ox = json.loads(common.run(common.oxide_cmd("gc", "--json"), st))
    common.git(st, "gc", "-q", "--prune=now")
    after = _checkpoint_refs(st)
    lost = [r for r, oid in before.items() if after.get(r) != oid]
    fsck = common.run(["git", "fsck", "--full", "--strict", "--no-dangling"], st).decode().strip()
    for path in (st, pl):
        shutil.rmtree(path, ignore_errors=True)
    s, p = median(gc_store), median(gc_plain)
    removed = len(ox.get("checkpoints") or [])
    return [
        row(f"git gc, plain repository of the same trees ({CHECKPOINTS:,} commits)", p, "baseline",
            samples=gc_plain),
        row(f"git gc, store of {CHECKPOINTS:,} checkpoints", s, "≤ 1.5× the plain repository", baseline_s=p,
            met=s <= 1.5 * p and not lost and not fsck, samples=gc_store,
            note=f"checkpoints lost after git oxide gc and git gc --prune=now: {len(lost)}; "
                 f"removed by git oxide gc: {removed}; fsck: {fsck or 'clean'}"),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    global SESSIONS, CHECKPOINTS
    if quick or os.environ.get("BENCH_LARGE_TEAM"):
        SESSIONS = CHECKPOINTS = int(os.environ.get("BENCH_LARGE_TEAM", "2000"))
    rows: list[dict[str, Any]] = []
    for name, fn in (("hooks", lambda: bench_hooks(5 if quick else 11)),
                     ("team remote", lambda: bench_team(3 if quick else 7)),
                     ("gc", lambda: bench_gc(3))):
        try:
            rows += fn()
        except Exception as e:  # a report: one broken figure must not hide the others
            _log(f"{name} failed: {e}")
            rows.append(common.error_row(name, "(failed)", e))
    return rows
