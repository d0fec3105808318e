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

if TYPE_CHECKING:  # the agents' hooks import this module first thing: nothing heavy at the top
    from oxide_git.store.context import Context

FILE = "pending-prompts.json"


def session_of(ctx: Context, agent: str, native_id: str | None) -> str | None:
    """The oxide id of the agent's session ``native_id``, once imported (None: not yet)."""
    if not native_id:
        return None
    rows = ctx.index.query("SELECT id FROM sessions WHERE agent=? AND native_id=?", (agent, native_id))
    return rows[0][0] if rows else None


def key(agent: str, native_id: str) -> str:
    return f"{agent}:{native_id}"


def load(ctx: Context) -> dict[str, list[str]]:
    try:
        data = json.loads((ctx.repo.worktree_dir / FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: [str(c) for c in v] for k, v in data.items() if isinstance(v, list)}


def save(ctx: Context, pending: dict[str, list[str]]) -> None:
    path = ctx.repo.worktree_dir / FILE
    if not pending:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f"{FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(pending, indent=1) + "\n")
    os.replace(tmp, path)


def tie_pending(ctx: Context, agent: str, native_id: Any, session: str) -> int:
    """Tie the prompt checkpoints waiting for this agent's session ``native_id`` to ``session``;
    how many were tied."""
    pending = load(ctx)
    ids = pending.pop(key(agent, native_id), None) if isinstance(native_id, str) else None
    if not ids:
        return 0
    tied = sum(_tie(ctx, cid, session) for cid in ids)
    save(ctx, pending)
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
    oid = pygit2.Oid(raw=ctx.repo.objects.rewrite_commit(old.id.raw, "".join(lines)))
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
    imported = set(sessions)
    pending = load(ctx) if imported else {}
    tied = 0
    for key in pending:  # a few at most: looked up one by one, whatever the import's size
        agent, _, native = key.partition(":")
        sid = session_of(ctx, agent, native)
        if sid in imported:
            tied += tie_pending(ctx, agent, native, str(sid))
    return tied
