"""`git oxide rewind`: put the code and/or the conversation back to a checkpoint, losing nothing.

Before anything is written the current worktree is checkpointed (kind ``before-rewind``) and the
operation is journaled, so `git oxide undo` restores it. Paths that another session changed since
the checkpoint are not overwritten unless asked (``only_mine`` skips them, ``force`` takes them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.core import agent_files
from oxide_git.core.errors import NotFound, OxideError, Refused
from oxide_git.git import refs, restore
from oxide_git.ops import memory as memory_mod
from oxide_git.store import journal, sessionlog, snapshots
from oxide_git.store import writes as store
from oxide_git.store.context import Context


@dataclass
class RewindResult:
    checkpoint: dict[str, Any]
    files: dict[str, list[str]]
    messages_dropped: int
    session_id: str | None
    before_checkpoint: str | None
    dry_run: bool
    written: int = 0
    skipped: list[str] = field(default_factory=list)  # paths left alone (other sessions' changes)
    conflicts: dict[str, list[str]] = field(default_factory=dict)
    memory_writes: list[dict[str, Any]] = field(default_factory=list)  # made after the checkpoint
    memory_reverted: str | None = None  # the memory commit that reverted them (``memory=True``)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def load_checkpoint(ctx: Context, ref: str) -> tuple[snapshots.Checkpoint, pygit2.Commit]:
    try:
        cid = ctx.index.resolve_checkpoint(ref)
    except NotFound:
        from oxide_git.core.model import to_iso
        from oxide_git.ops.gc import expired_at

        gone = expired_at(ctx, ref.strip())
        if gone is None:
            raise
        raise NotFound(f"checkpoint {ref} expired: `git oxide gc` removed it on {to_iso(gone[1])}",
                       hint="its code can no longer be restored; `git oxide pin` keeps checkpoints") from None
    row = ctx.index.query("SELECT ref, created_at FROM checkpoints WHERE id=?", (cid,))[0]
    try:  # by its ref: a pulled checkpoint may be a redacted twin, whose id is the real one's
        commit = ctx.repo.git[refs.read(ctx.repo.git, row["ref"]) or cid]
    except (KeyError, ValueError):
        commit = None
    if not isinstance(commit, pygit2.Commit):
        from oxide_git.core.model import to_iso
        from oxide_git.store.retention import Policy

        when = Policy(ctx).describe(cid, int(row["created_at"])).get("expires_at")
        since = f" on {to_iso(when)}" if when else ""
        raise NotFound(f"checkpoint {ref} expired{since}: its commit is no longer in the repository",
                       hint="`git oxide gc` removed it; `git oxide pin` keeps the checkpoints you need")
    return snapshots.parse_commit(commit, row["ref"]), commit


def _others_changes(ctx: Context, cp: snapshots.Checkpoint, session_id: str | None) -> dict[str, set[str]]:
    """Paths each other session of this worktree changed after ``cp``, from its own checkpoints."""
    git = ctx.repo.git
    by_session: dict[str, list[Any]] = {}
    # Only the rows that matter, and no JSON decoding of each one: a worktree keeps thousands.
    for r in ctx.index.query(
        "SELECT session_id, created_at, tree FROM checkpoints WHERE session_id IS NOT NULL "
        "AND session_id != '' AND (? IS NULL OR session_id != ?) AND worktree = ? "
        "ORDER BY created_at DESC, id",
        (session_id, session_id, cp.worktree),
    ):
        by_session.setdefault(r["session_id"], []).append(r)
    out: dict[str, set[str]] = {}
    for sid, rows in by_session.items():
        rows.sort(key=lambda r: r["created_at"])
        after = [r for r in rows if r["created_at"] > cp.created_at]
        if not after:
            continue
        before = [r for r in rows if r["created_at"] <= cp.created_at]
        base = git[(before[-1] if before else after[0])["tree"]].peel(pygit2.Tree)
        changed: set[str] = set()
        for r in after if before else after[1:]:
            diff = base.diff_to_tree(git[r["tree"]].peel(pygit2.Tree))
            changed |= {d.new_file.path for d in diff.deltas} | {d.old_file.path for d in diff.deltas}
        if changed:
            out[sid] = changed
    return out


def _conversation_cut(ctx: Context, cp: snapshots.Checkpoint) -> tuple[sessionlog.Log, int] | None:
    if not cp.session_id or not cp.message_id:
        return None
    log = sessionlog.load(ctx.repo, cp.session_id)
    if log is None:
        return None
    seq = ctx.index.message_seq(cp.session_id, cp.message_id)
    # A prompt checkpoint is the state before its prompt was worked on: the prompt goes too.
    return log, (seq if cp.kind == "prompt" else seq + 1)


def rewind(
    ctx: Context, ref: str, *, code: bool = True, conversation: bool = True, dry_run: bool = False,
    force: bool = False, only_mine: bool = False, memory: bool = False,
) -> RewindResult:
    cp, commit = load_checkpoint(ctx, ref)
    repo = ctx.repo
    if code and not force and (cp.worktree != repo.worktree_id or cp.branch != repo.branch()):
        raise Refused(
            f"checkpoint {cp.id[:12]} was made in worktree {cp.worktree} on branch {cp.branch}, "
            f"this is {repo.worktree_id} on {repo.branch()}",
            hint="run it in that worktree, or add --force to restore it here anyway")
    if code and not repo.workdir.is_dir():
        raise OxideError(f"the worktree {repo.workdir} no longer exists")
    cut = _conversation_cut(ctx, cp) if conversation else None
    if not dry_run:
        journal.ensure_writable(ctx)  # a rewind that could not be journaled changes nothing
    if dry_run:  # the same plan, built in a scratch object store: a dry run writes nothing
        with snapshots.scratch(repo) as view:
            return _rewind(ctx, cp, commit, view, cut, code=code, dry_run=True, force=force,
                           only_mine=only_mine, memory=memory)
    return _rewind(ctx, cp, commit, repo, cut, code=code, dry_run=False, force=force,
                   only_mine=only_mine, memory=memory)


def _rewind(
    ctx: Context, cp: snapshots.Checkpoint, commit: pygit2.Commit, repo: Any,
    cut: tuple[sessionlog.Log, int] | None, *, code: bool, dry_run: bool, force: bool,
    only_mine: bool, memory: bool,
) -> RewindResult:
    # The safety checkpoint comes first: it is also what the plan is computed against.
    current = snapshots.take(repo, kind="before-rewind", now_ms=ctx.now_ms, session_id=cp.session_id,
                             text=f"before rewind to {cp.id[:12]}", keep=not dry_run)
    if not dry_run:
        store.record_checkpoint(ctx, current)
    git = repo.git
    commit = git[commit.id]
    fp = restore.FilePlan()
    conflicts: dict[str, list[str]] = {}
    skipped: list[str] = []
    if code:
        leave = agent_files.session_files(ctx.environ)  # the agents' own transcripts stay as they are
        # what a push took out of a pulled twin: the worktree's own copy stays as it is
        redacted = {s["path"] for s in cp.skipped if s.get("redacted")}
        fp = restore.plan(git, git[current.tree].peel(pygit2.Tree), commit.tree, exclude=redacted,
                          leave=leave)
        touched = set(fp.paths)
        for sid, paths in _others_changes(ctx, cp, cp.session_id).items():
            hit = sorted(touched & paths)
            if hit:
                conflicts[sid] = hit
        if conflicts and not force:
            if not only_mine:
                first = next(iter(conflicts))
                raise Refused(
                    f"session {first[:12]} changed {', '.join(conflicts[first][:5])} after this "
                    f"checkpoint; rewinding would overwrite its work",
                    hint="add --only-mine to restore only the other paths, or --force to overwrite")
            skipped = sorted({p for ps in conflicts.values() for p in ps})
            fp = restore.plan(git, git[current.tree].peel(pygit2.Tree), commit.tree,
                              exclude=set(skipped) | redacted, leave=leave)
    dropped = (cut[0].count - cut[1]) if cut else 0
    result = RewindResult(cp.to_dict(), fp.to_dict(), max(dropped, 0), cp.session_id, None,
                          dry_run, skipped=skipped, conflicts=conflicts)
    writes = memory_mod.writes_after(ctx, cp.created_at, cp.session_id) if cut else []
    result.memory_writes = [w.to_dict() for w in writes]
    if dry_run:
        return result
    result.before_checkpoint = current.id
    entry = journal.Entry("rewind", ctx.now_ms, f"rewind to {cp.id[:12]}",
                          files_before=current.id if code else None,
                          files_after=str(commit.id) if code else None,  # a pulled twin: its own id
                          files_kept=sorted({*skipped, *fp.left, *redacted}) if code else [],
                          head=current.head)
    if cut and dropped > 0:
        log, at = cut
        oid, _ = store.save(ctx, log.session, {}, summary=f"rewind to {cp.id[:12]}", truncate_at=at)
        if oid is not None:
            entry.refs[f"refs/oxide/sessions/{log.session.id}"] = [str(log.tip), str(oid)]
    if memory and writes:
        moved = memory_mod.revert(ctx, writes, f"revert {len(writes)} write(s): rewind to {cp.id[:12]}")
        if moved is not None:
            entry.refs[memory_mod.refs.MEMORY] = [moved[0], moved[1]]
            result.memory_reverted = moved[1]
    journal.record(ctx, entry)
    if code:
        result.written = restore.apply(git, repo.workdir, fp)
    return result
