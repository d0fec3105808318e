"""`git oxide checkpoint` and `init`: snapshot the worktree, tie it to the current session."""

from __future__ import annotations

from dataclasses import dataclass

from oxide_git.git import refs
from oxide_git.git import status as status_mod
from oxide_git.store import snapshots
from oxide_git.store import writes as store
from oxide_git.store.context import Context


@dataclass
class InitResult:
    oxide_dir: str
    created: bool
    worktree: str


def init(ctx: Context) -> InitResult:
    """Create ``<git-common-dir>/oxide/`` and the index; touches nothing else."""
    created = not ctx.repo.oxide_dir.is_dir()
    ctx.repo.worktree_dir.mkdir(parents=True, exist_ok=True)
    _ = ctx.index
    return InitResult(str(ctx.repo.oxide_dir), created, ctx.repo.worktree_id)


def checkpoint(
    ctx: Context,
    *,
    text: str = "",
    kind: str = "manual",
    session: str | None = None,
    message_id: str | None = None,
    status: status_mod.Status | None = None,
    detached: bool = False,
) -> snapshots.Checkpoint:
    """Take a checkpoint of this worktree, tied to ``session`` (default: the current session;
    ``detached``: none, and never reused for an unchanged worktree: each such checkpoint waits
    for its own session in ``hook_ties``)."""
    ctx.repo.worktree_dir.mkdir(parents=True, exist_ok=True)
    sid = ctx.index.resolve_session(session) if session else (
        None if detached else store.current_session(ctx))
    if sid and message_id is None:
        rows = ctx.index.query(
            "SELECT id FROM messages WHERE session_id=? ORDER BY seq DESC LIMIT 1", (sid,))
        message_id = rows[0][0] if rows else None
    # The same worktree state as this session's last checkpoint here is not written again.
    prev = ctx.index.query(
        "SELECT id, tree, head, ref, kind, message_id FROM checkpoints WHERE worktree=? AND "
        "coalesce(session_id, '')=? ORDER BY rowid DESC LIMIT 1",  # the last one recorded
        (ctx.repo.worktree_id, sid or ""))
    # (the end of a turn: the same state as any last checkpoint, which then closes the turn)
    same = prev and (kind == snapshots.TURN_END or (prev[0]["kind"] == kind and (
        kind == "manual" or prev[0]["message_id"] == message_id)))
    previous = dict(prev[0]) if same and not detached else None
    cp = refs.retry_on_move(lambda: snapshots.take(
        ctx.repo, kind=kind, now_ms=ctx.now_ms, session_id=sid, message_id=message_id, text=text,
        max_file_size=ctx.config_size("oxide.maxFileSize", snapshots.DEFAULT_MAX_FILE_SIZE),
        max_untracked_files=ctx.config_size("oxide.maxUntrackedFiles", snapshots.DEFAULT_MAX_UNTRACKED_FILES),
        status=status, previous=previous,
    ))
    if not cp.reused:
        store.record_checkpoint(ctx, cp)
    return cp
