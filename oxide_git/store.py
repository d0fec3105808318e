"""Writes that go to git and to the index together: git first (the truth), then the cache.

Every operation that records sessions, messages or checkpoints goes through here, so the index
never drifts from the refs it describes (and if a crash falls between the two, ``reindex`` heals).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pygit2

from . import redact, refs, sessionlog
from .context import Context
from .model import Message, Session, message_id_for
from .snapshots import Checkpoint


def save(
    ctx: Context,
    session: Session,
    puts: Mapping[int, Message],
    *,
    summary: str,
    truncate_at: int | None = None,
) -> tuple[pygit2.Oid | None, dict[int, Message]]:
    """Place messages at their seqs (replacing or appending) on the session's current tip."""
    git = ctx.repo.git

    def attempt() -> tuple[pygit2.Oid | None, dict[int, Message], Session]:
        log = sessionlog.load(git, session.id)
        placed = {
            q: m if m.id else replace(m, id=message_id_for(session.id, q, m.created_at))
            for q, m in puts.items()
        }
        s, placed = redact.for_write(ctx, log, session, placed, truncate_at)  # secrets never reach git
        oid = sessionlog.commit(
            git, s, placed, now_ms=ctx.now_ms, summary=summary, truncate_at=truncate_at,
            base=log.commit if log else None, expected=log.tip if log else None,
        )
        return oid, placed, s

    oid, placed, session = refs.retry_on_move(attempt)
    if oid is not None:
        count = sessionlog.count_messages(git, git[oid].peel(pygit2.Tree))
        with ctx.index.write() as conn:
            ctx.index.put_messages(conn, session.id, placed, truncate_at=truncate_at)
            ctx.index.put_session(conn, session, log_commit=str(oid), count=count)
    return oid, placed


def append(ctx: Context, session: Session, messages: list[Message]) -> dict[int, Message]:
    """Append messages at the end of the session (creating it); returns them by seq."""
    git = ctx.repo.git

    def attempt() -> tuple[pygit2.Oid | None, dict[int, Message], Session]:
        log = sessionlog.load(git, session.id)
        puts = sessionlog.with_ids(session.id, log.count if log else 0, messages)
        s, puts = redact.for_write(ctx, log, session, puts)  # secrets never reach git
        oid = sessionlog.commit(git, s, puts, now_ms=ctx.now_ms, summary=f"append {len(messages)} message(s)",
                                base=log.commit if log else None, expected=log.tip if log else None)
        return oid, puts, s

    oid, puts, session = refs.retry_on_move(attempt)
    if oid is not None:
        count = max(puts) + 1 if puts else sessionlog.count_messages(git, git[oid].peel(pygit2.Tree))
        with ctx.index.write() as conn:
            ctx.index.put_messages(conn, session.id, puts)
            ctx.index.put_session(conn, session, log_commit=str(oid), count=count)
    return puts


def record_checkpoint(ctx: Context, cp: Checkpoint) -> None:
    with ctx.index.write() as conn:
        ctx.index.put_checkpoint(conn, cp)


def current_session(ctx: Context) -> str | None:
    """The session this worktree is working in (set by import, resume, hooks), if any."""
    try:
        sid = (ctx.repo.worktree_dir / "current-session").read_text().strip()
    except OSError:
        return None
    return sid or None


def set_current_session(ctx: Context, session_id: str | None) -> None:
    ctx.repo.worktree_dir.mkdir(parents=True, exist_ok=True)
    (ctx.repo.worktree_dir / "current-session").write_text((session_id or "") + "\n")
