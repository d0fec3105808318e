"""`git oxide doctor`: is the store consistent, and if not, what fixes it."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oxide_git.core.errors import OxideError
from oxide_git.git import refs
from oxide_git.git.repo import Repo
from oxide_git.ops import lost
from oxide_git.store.context import Context

STALE_LOCK_S = refs.STALE_LOCK_S


def _finding(level: str, message: str, hint: str | None = None) -> dict[str, Any]:
    return {"level": level, "message": message, "hint": hint}


def _stale_locks(ctx: Context) -> list[Path]:
    """Ref lock files under refs/oxide older than any git operation takes (their owner is gone)."""
    root = ctx.repo.common_dir / "refs" / "oxide"
    found: list[Path] = []
    now = time.time()
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            if f.endswith(".lock"):
                try:
                    if now - p.stat().st_mtime > STALE_LOCK_S:
                        found.append(p)
                except OSError:
                    pass
    return found


def _format_drift(ctx: Context) -> list[dict[str, Any]]:
    """Record types the importers did not know, summed over every imported file (the import
    cursors keep each file's counts): an agent release that changed its format."""
    import json

    counts: dict[tuple[str, str, str | None], int] = {}
    try:
        rows = ctx.index.query("SELECT agent, state FROM cursors")
    except (OxideError, sqlite3.Error):
        return []
    for agent, state in rows:
        try:
            unknown = json.loads(state or "{}").get("unknown", [])
        except ValueError:
            continue
        for kind, version, n in unknown:
            counts[(agent, kind, version)] = counts.get((agent, kind, version), 0) + int(n)
    out = []
    for (agent, kind, version), n in sorted(counts.items(), key=lambda x: (x[0][0], x[0][1])):
        made = f" (written by {version})" if version else ""
        out.append(_finding("warning", f"{n} {agent} record(s) of unknown type '{kind}'{made} are kept "
                            "as other parts", "a newer agent release changed its format: they are "
                            "stored whole; an update of git oxide reads them"))
    return out


def _lost(ctx: Context, fix: bool) -> list[dict[str, Any]]:
    """Messages in a log's history alone (``lost``); with ``fix``, each back in a fork."""
    found = lost.find(ctx)
    if not found:
        return []
    n = sum(x.count for x in found)
    f = _finding("error", f"{n} message(s) of {len(found)} session(s) are in their log's history but "
                 "at no tip and in no fork (`show`, `search`, `resume` do not see them)",
                 "`git oxide doctor --fix` puts them back, each in a fork made from the last commit "
                 "that held it")
    f["sessions"] = {x.session: x.count for x in found}
    if fix:
        f["forks"] = lost.recover(ctx, found)
        f["level"] = "fixed"
    return [f]


def _not_writable(oxide_dir: Path) -> list[Path]:
    """oxide's folder, the index files and the worktree folders this user cannot write."""
    paths = [oxide_dir, *(oxide_dir / f"index.db{s}" for s in ("", "-wal", "-shm"))]
    wt = oxide_dir / "worktrees"
    if wt.is_dir():
        paths += [wt, *wt.iterdir()]
    return [p for p in paths if p.exists() and not os.access(p, os.W_OK)]


def diagnose(ctx: Context, *, fix: bool = False,
             hooks: Callable[[Repo], str] | None = None) -> dict[str, Any]:
    """Findings and usage; ``hooks(repo)`` says whose hooks folder it is and what runs there (the CLI
    hands ``hooks.install.summary``: the git hooks are a layer above the operations)."""
    findings: list[dict[str, Any]] = []
    repo = ctx.repo
    if not repo.oxide_dir.is_dir():
        findings.append(_finding("warning", "git oxide is not initialised here",
                                 "run `git oxide init`"))
        return {"findings": findings, "usage": {}}
    db_path = repo.oxide_dir / "index.db"
    denied = _not_writable(repo.oxide_dir)
    for p in denied:
        findings.append(_finding("error", f"permission denied: {p} is not writable by this user",
                                 f"every command that records something fails; check its owner "
                                 f"and mode (`ls -ld {p}`)"))
    if denied:  # nothing here can be repaired or rebuilt: say so once and stop
        return {"findings": findings, "usage": {}}
    index_ok = True
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        result = conn.execute("PRAGMA quick_check").fetchone()[0]
        if result == "ok":  # a sound file can still lack a table (hand-edited, or half-written)
            for table in ("sessions", "checkpoints"):
                conn.execute(f"SELECT 1 FROM {table} LIMIT 1")
        conn.close()
        if result != "ok":
            raise sqlite3.DatabaseError(result)
    except sqlite3.DatabaseError as e:
        index_ok = False
        findings.append(_finding("error", f"the index is unreadable: {e}",
                                 "run `git oxide doctor --fix` (or `git oxide reindex --full`)"))
        if fix:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(f"{db_path}{suffix}")
                except FileNotFoundError:
                    pass
            ctx.close()
            _ = ctx.index  # recreated and rebuilt from git
            findings[-1]["level"] = "fixed"
            index_ok = True
    git = repo.git
    session_refs = {n[len(refs.SESSIONS):]: str(o) for n, o in refs.iter_refs(git, refs.SESSIONS)}
    # a checkpoint's id is its commit's, or (a pulled twin) the one its ref's name says
    checkpoint_refs = [{str(o), n.rsplit("/", 1)[-1]} for n, o in refs.iter_refs(git, refs.CHECKPOINTS)]
    if index_ok:
        try:
            tips = ctx.index.session_tips()
            cps = ctx.index.checkpoint_ids()
        except OxideError as e:
            tips, cps = {}, set()
            findings.append(_finding("error", e.message, e.hint))
        stale = {s for s in set(tips) | set(session_refs) if tips.get(s) != session_refs.get(s)}
        either = set().union(*checkpoint_refs)
        stale_cps = {c for c in cps if c not in either} | {min(ids) for ids in checkpoint_refs
                                                           if ids.isdisjoint(cps)}
        if stale or stale_cps:
            f = _finding("warning", f"the index is behind git: {len(stale)} session(s), "
                         f"{len(stale_cps)} checkpoint(s) differ", "run `git oxide reindex`")
            if fix:
                from oxide_git.store.reindex import reindex

                reindex(ctx)
                f["level"] = "fixed"
            findings.append(f)
    for lock in _stale_locks(ctx):
        f = _finding("warning", f"stale lock file {lock.relative_to(repo.common_dir)}",
                     "no process holds it any more: `git oxide doctor --fix` removes it")
        if fix:
            lock.unlink(missing_ok=True)
            f["level"] = "fixed"
        findings.append(f)
    known = {w.name for w in (repo.common_dir / "worktrees").iterdir()} if (
        repo.common_dir / "worktrees").is_dir() else set()
    wt_root = repo.oxide_dir / "worktrees"
    if wt_root.is_dir():
        for d in wt_root.iterdir():
            if d.name != "main" and d.name not in known:
                f = _finding("warning", f"oxide state for a removed worktree: {d.name}",
                             "`git oxide doctor --fix` removes it (its checkpoints stay)")
                if fix:
                    import shutil

                    shutil.rmtree(d, ignore_errors=True)
                    f["level"] = "fixed"
                findings.append(f)
    if index_ok:
        findings.extend(_format_drift(ctx))
        findings.extend(_lost(ctx, fix))
    usage = {
        "sessions": len(session_refs),
        "checkpoints": len(checkpoint_refs),
        "oplog snapshots": sum(1 for _ in refs.iter_refs(git, refs.OPLOG)),
        "trash": sum(1 for _ in refs.iter_refs(git, refs.TRASH)),
        "index size": f"{db_path.stat().st_size if db_path.exists() else 0} bytes",
    }
    from oxide_git.store.retention import usage_report

    usage.update(usage_report(ctx))  # disk used beyond the user's refs, per family; largest checkpoints
    report: dict[str, Any] = {"findings": findings, "usage": usage}
    if hooks is not None:
        report["hooks"] = hooks(repo)  # whose hooks folder, what runs
    return report
