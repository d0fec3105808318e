"""A prompt checkpoint taken before the agent's session is known, tied to that session once it is.

An agent's prompt hook can run before the session file it names holds anything (Copilot CLI
1.0.102 under load writes ``events.jsonl`` after its ``userPromptSubmitted`` hook has begun), so
that session is not imported yet and its oxide id is not known. Its prompt checkpoint is then
taken with no session (never the previous current one) and remembered under the agent's own
session id in ``<worktree>/pending-prompts.json``. The first hook of that session that finds it
imported ties it: the same commit (tree, parent, author, time, text) is written again with the
session's ``Oxide-Session`` trailer under the session's ref, and the untied ref is removed in the
same ref transaction. Nothing of the worktree's state is lost: only which session owns it moves.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from oxide_git.store.context import Context

if TYPE_CHECKING:
    from oxide_git.store.snapshots import Checkpoint

FILE = "pending-prompts.json"


def _key(agent: str, native_id: str) -> str:
    return f"{agent}:{native_id}"


def _load(ctx: Context) -> dict[str, list[str]]:
    try:
        data = json.loads((ctx.repo.worktree_dir / FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: [str(c) for c in v] for k, v in data.items() if isinstance(v, list)}


def _save(ctx: Context, pending: dict[str, list[str]]) -> None:
    path = ctx.repo.worktree_dir / FILE
    if not pending:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f"{FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(pending, indent=1) + "\n")
    os.replace(tmp, path)


def prompt_checkpoint(ctx: Context, agent: str, native_id: Any, session: str | None, prompt: str) -> None:
    """The checkpoint of a prompt a hook saw: on ``session``, or (not imported yet) on none,
    remembered to be tied to it when it is."""
    from oxide_git.ops.checkpoint import checkpoint

    text = prompt.strip()[:200] or "prompt"
    if session or not isinstance(native_id, str) or not native_id:
        checkpoint(ctx, text=text, kind="prompt", session=session)
        return
    cp = checkpoint(ctx, text=text, kind="prompt", detached=True)
    pending = _load(ctx)
    ids = pending.setdefault(_key(agent, native_id), [])
    if cp.id not in ids:
        ids.append(cp.id)
    _save(ctx, pending)


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
    from oxide_git.ops.checkpoint import checkpoint
    from oxide_git.store.snapshots import TURN_END
    from oxide_git.watch.journal import status_from_journal

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


def tie_pending(ctx: Context, agent: str, native_id: Any, session: str) -> int:
    """Tie the prompt checkpoints waiting for this agent's session ``native_id`` to ``session``;
    how many were tied."""
    pending = _load(ctx)
    ids = pending.pop(_key(agent, native_id), None) if isinstance(native_id, str) else None
    if not ids:
        return 0
    tied = sum(_tie(ctx, cid, session) for cid in ids)
    _save(ctx, pending)
    return tied


def _tie(ctx: Context, checkpoint_id: str, session: str) -> bool:
    import pygit2

    from oxide_git.git import refs
    from oxide_git.store import snapshots

    git = ctx.repo.git
    old_ref = refs.checkpoint_ref("manual", checkpoint_id)
    old = git.get(checkpoint_id)
    if not isinstance(old, pygit2.Commit):
        return False  # gone (gc): nothing to tie
    lines = old.message.splitlines(keepends=True)
    if "Oxide-Session: none\n" not in lines:
        return False
    lines[lines.index("Oxide-Session: none\n")] = f"Oxide-Session: {session}\n"
    oid = git.create_commit(None, old.author, old.committer, "".join(lines), old.tree_id, old.parent_ids)
    ref = refs.checkpoint_ref(session, str(oid))
    try:
        refs.update(git, {ref: (None, oid), old_ref: (old.id, None)}, "oxide: checkpoint tied to its session")
    except refs.RefMoved:
        return False  # its ref is gone (rm) or another hook of the session tied it meanwhile
    cp = snapshots.parse_commit(git[oid], ref)
    with ctx.index.write() as conn:
        conn.execute("DELETE FROM checkpoints WHERE id=?", (checkpoint_id,))
        ctx.index.put_checkpoint(conn, cp)
    return True


def settle(ctx: Context, agent: str, native_id: Any, session: str | None, why: str | None = None) -> None:
    """A hook found ``session`` (the agent's ``native_id``): its waiting prompt checkpoints are
    tied to it and it becomes this worktree's current session."""
    if not session:
        return
    from oxide_git.store import writes as store

    tie_pending(ctx, agent, native_id, session)
    store.set_current_session(ctx, session, why)


def tie_imported(ctx: Context, sessions: Iterable[str]) -> int:
    """After an import (`git oxide import`, `watch`): the prompt checkpoints waiting for any of
    ``sessions`` are tied to it, should no hook of theirs run again (the agent was killed)."""
    from oxide_git.hooks.agent_hooks import _session_of

    imported = set(sessions)
    pending = _load(ctx) if imported else {}
    tied = 0
    for key in pending:  # a few at most: looked up one by one, whatever the import's size
        agent, _, native = key.partition(":")
        sid = _session_of(ctx, agent, native)
        if sid in imported:
            tied += tie_pending(ctx, agent, native, str(sid))
    return tied
