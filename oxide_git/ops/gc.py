"""`git oxide gc`: remove expired checkpoints, empty old trash, thin the watch oplog.

Only refs go: expired checkpoint refs (never pinned ones, ones linked from a reachable commit, or
ones younger than ``oxide.checkpointTTL``), trash refs older than ``oxide.trashTTL`` (default 14d;
the trash ref name carries the ms time it was trashed), and oplog snapshots beyond the thinning
rule: within a day the newest snapshot of each prompt and of each hour, within a week the newest of
each day, nothing older (the newest snapshot of a worktree always stays). gc deletes for real, it
does not journal: the objects stay until ``git gc`` prunes them, and nothing a live ref needs is
touched, so ``git gc --prune=now`` and ``git fsck`` stay clean. The index is brought up to date.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.git import refs
from oxide_git.store import retention, snapshots
from oxide_git.store.context import Context

HOUR = 3_600_000
DAY = 24 * HOUR
WEEK = 7 * DAY


@dataclass
class GcResult:
    checkpoints: list[dict[str, Any]] = field(default_factory=list)  # expired, removed
    trash: list[str] = field(default_factory=list)
    oplog: list[str] = field(default_factory=list)
    kept: dict[str, int] = field(default_factory=dict)  # why checkpoints past their TTL stayed
    freed_bytes: int = 0
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @property
    def removed(self) -> int:
        return len(self.checkpoints) + len(self.trash) + len(self.oplog)


def _trash_time(name: str) -> int | None:
    stamp = name[len(refs.TRASH):].split("/", 1)[0]
    return int(stamp) if stamp.isdigit() else None


def _expired_checkpoints(ctx: Context, res: GcResult) -> dict[str, pygit2.Oid]:
    git = ctx.repo.git
    policy = retention.Policy(ctx)
    out: dict[str, pygit2.Oid] = {}
    if policy.ttl is None:
        return out
    for name, oid in refs.iter_refs(git, refs.CHECKPOINTS):
        commit = git.get(oid)
        if not isinstance(commit, pygit2.Commit):
            continue
        cp = snapshots.parse_commit(commit, name)
        d = policy.describe(cp.id, cp.created_at)
        if d["expired"]:
            out[name] = oid
            res.checkpoints.append({"id": cp.id, "ref": name, "session_id": cp.session_id,
                                    "kind": cp.kind, "created_at": cp.created_at})
        elif d["expires_at"] is not None and d["expires_at"] <= ctx.now_ms:
            why = "pinned" if d["pinned"] else "linked"
            res.kept[why] = res.kept.get(why, 0) + 1
    return out


def _old_trash(ctx: Context, res: GcResult) -> dict[str, pygit2.Oid]:
    ttl = retention.ttl_ms(ctx, "oxide.trashTTL", retention.DEFAULT_TRASH_TTL)
    out: dict[str, pygit2.Oid] = {}
    if ttl is None:
        return out
    for name, oid in refs.iter_refs(ctx.repo.git, refs.TRASH):
        at = _trash_time(name)
        if at is not None and at + ttl <= ctx.now_ms:
            out[name] = oid
            res.trash.append(name)
    return out


def thin(snaps: list[tuple[str, int, str | None]], now_ms: int) -> set[str]:
    """Names of oplog snapshots to drop; ``snaps`` are (ref name, time ms, prompt id)."""
    keep: set[str] = set()
    seen: set[tuple[str, Any]] = set()
    ordered = sorted(snaps, key=lambda s: -s[1])  # newest first: the first of each bucket stays
    if ordered:
        keep.add(ordered[0][0])
    for name, at, prompt in ordered:
        age = now_ms - at
        if age < DAY:
            keys = [("hour", at // HOUR)] + ([("prompt", prompt)] if prompt else [])
        elif age < WEEK:
            keys = [("day", at // DAY)]
        else:
            keys = []
        for k in keys:
            if k not in seen:
                seen.add(k)
                keep.add(name)
    return {s[0] for s in snaps} - keep


def _oplog(ctx: Context, res: GcResult, pinned: set[str]) -> dict[str, pygit2.Oid]:
    git = ctx.repo.git
    by_worktree: dict[str, list[tuple[str, int, str | None]]] = {}
    oids: dict[str, pygit2.Oid] = {}
    for name, oid in refs.iter_refs(git, refs.OPLOG):
        commit = git.get(oid)
        if not isinstance(commit, pygit2.Commit) or str(oid) in pinned:
            continue
        cp = snapshots.parse_commit(commit, name)
        wt = name[len(refs.OPLOG):].split("/", 1)[0]
        by_worktree.setdefault(wt, []).append((name, cp.created_at, cp.message_id))
        oids[name] = oid
    out: dict[str, pygit2.Oid] = {}
    for snaps in by_worktree.values():
        for name in sorted(thin(snaps, ctx.now_ms)):
            out[name] = oids[name]
            res.oplog.append(name)
    return out


EXPIRED_LOG = "expired-checkpoints"


def _remember_expired(ctx: Context, ids: list[str]) -> None:
    """Keep the ids gc removed, so a later `rewind` can say the checkpoint expired, and when."""
    if ids:
        with open(ctx.repo.oxide_dir / EXPIRED_LOG, "a") as f:
            f.writelines(f"{cid} {ctx.now_ms}\n" for cid in ids)


def expired_at(ctx: Context, prefix: str) -> tuple[str, int] | None:
    """(checkpoint id, ms) when gc removed a checkpoint whose id starts with ``prefix``."""
    try:
        with open(ctx.repo.oxide_dir / EXPIRED_LOG) as f:
            for line in f:
                cid, _, ms = line.partition(" ")
                if prefix and cid.startswith(prefix) and ms.strip().isdigit():
                    return cid, int(ms)
    except OSError:
        return None
    return None


def gc(ctx: Context, *, dry_run: bool = False) -> GcResult:
    res = GcResult(dry_run=dry_run)
    git = ctx.repo.git
    doomed: dict[str, pygit2.Oid] = {}
    doomed.update(_expired_checkpoints(ctx, res))
    doomed.update(_old_trash(ctx, res))
    doomed.update(_oplog(ctx, res, retention.pinned_ids(git)))
    if not doomed:
        return res
    live = [str(o) for n, o in refs.iter_refs(git, "refs/") if n not in doomed]
    live += retention.user_tips(ctx)
    res.freed_bytes = retention.disk_usage(ctx, {str(o) for o in doomed.values()}, live)
    if dry_run:
        return res
    names = sorted(doomed)
    for i in range(0, len(names), 500):  # one transaction per chunk keeps lock counts bounded
        chunk: dict[str, tuple[pygit2.Oid | None, pygit2.Oid | None]] = {
            n: (doomed[n], None) for n in names[i:i + 500]}
        refs.update(git, chunk, "oxide: gc")
    _remember_expired(ctx, [str(doomed[n]) for n in names if n.startswith(refs.CHECKPOINTS)])
    from oxide_git.store.reindex import reindex

    reindex(ctx)
    return res
