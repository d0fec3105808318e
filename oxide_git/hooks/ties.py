"""A prompt checkpoint taken before the agent's session is known (``store.ties`` ties it to that
session once it is): what an agent's prompt hook calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oxide_git.store.context import Context
from oxide_git.store.ties import FILE as FILE
from oxide_git.store.ties import key, load, save
from oxide_git.store.ties import settle as settle
from oxide_git.store.ties import tie_imported as tie_imported
from oxide_git.store.ties import tie_pending as tie_pending

if TYPE_CHECKING:
    from oxide_git.store.snapshots import Checkpoint


def prompt_checkpoint(ctx: Context, agent: str, native_id: Any, session: str | None, prompt: str) -> None:
    """The checkpoint of a prompt a hook saw: on ``session``, or (not imported yet) on none,
    remembered to be tied to it when it is."""
    from oxide_git.ops.checkpoint import checkpoint

    text = prompt.strip()[:200] or "prompt"
    if session or not isinstance(native_id, str) or not native_id:
        checkpoint(ctx, text=text, kind="prompt", session=session)
        return
    cp = checkpoint(ctx, text=text, kind="prompt", detached=True)
    pending = load(ctx)
    ids = pending.setdefault(key(agent, native_id), [])
    if cp.id not in ids:
        ids.append(cp.id)
    save(ctx, pending)


def turn_checkpoint(ctx: Context, session: str | None) -> Checkpoint | None:
    """The checkpoint that closes a turn (an agent's Stop hook): the worktree as the turn left it,
    so that what the user changes before the next prompt is not in the turn's interval (blame).
    Taken only where that is cheap: when the session ran a call that may write files since this
    worktree's last checkpoint (a turn of talk changed nothing), through `watch`'s journal when
    it runs, and not written again when the worktree is as the last checkpoint holds it. None
    when not taken."""
    if not session:
        return None
    from oxide_git.core.tool_kinds import READ_ONLY
    from oxide_git.git.watch_journal import status_from_journal
    from oxide_git.ops.checkpoint import checkpoint
    from oxide_git.store.snapshots import TURN_END

    last = ctx.index.query("SELECT max(created_at) FROM checkpoints WHERE worktree=?",
                           (ctx.repo.worktree_id,))
    since = int(last[0][0] or 0) if last else 0
    names = sorted(READ_ONLY)
    wrote = ctx.index.query(
        "SELECT 1 FROM parts p JOIN messages m ON m.session_id=p.session_id AND m.seq=p.seq "
        "WHERE p.session_id=? AND p.type IN ('tool_call', 'patch') AND m.created_at>=? "
        f"AND coalesce(p.name, '') NOT IN ({','.join('?' * len(names))}) LIMIT 1", (session, since, *names))
    if not wrote:
        return None
    return checkpoint(ctx, text="end of turn", kind=TURN_END, session=session,
                      status=status_from_journal(ctx.repo))
