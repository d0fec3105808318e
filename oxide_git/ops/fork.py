"""`git oxide fork`: a new session whose history is another's up to a message.

The fork's first log commit has the source's log commit as parent and a tree that shares the
source's message buckets, so no message is copied. The source is never changed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from oxide_git.core.errors import NotFound
from oxide_git.core.model import new_session_id
from oxide_git.git import refs
from oxide_git.store import journal, logwrite, sessionlog
from oxide_git.store.context import Context


@dataclass
class ForkResult:
    id: str
    parent_id: str
    fork_seq: int
    fork_message_id: str | None
    fork_checkpoint: str | None
    messages: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def nearest_checkpoint(ctx: Context, session_id: str, seq: int) -> str | None:
    """The checkpoint that holds the files as they were when message ``seq`` was about to happen."""
    rows = ctx.index.query(
        "SELECT c.id, c.kind, m.seq FROM checkpoints c JOIN messages m "
        "ON m.session_id = c.session_id AND m.id = c.message_id "
        "WHERE c.session_id = ? AND c.kind != 'before-rewind' ORDER BY m.seq, c.created_at", (session_id,))
    best = None
    for cid, kind, mseq in rows:
        if mseq < seq or (kind == "prompt" and mseq == seq):
            best = cid
    return best


def fork(ctx: Context, ref: str, *, at: str | None = None, title: str | None = None) -> ForkResult:
    sid = ctx.index.resolve_session(ref)
    log = sessionlog.load_required(ctx.repo, sid, ref)
    seq = ctx.index.message_seq(sid, at) if at is not None else log.count
    if seq > log.count:
        raise NotFound(f"session {sid[:12]} has only {log.count} messages")
    at_msg = sessionlog.message_at(ctx.repo, log.commit.tree, seq) if seq < log.count else None
    n_children = len(ctx.index.query("SELECT 1 FROM sessions WHERE parent_id=?", (sid,)))
    entropy = hashlib.sha1(f"{sid}:{seq}:{n_children}:{ctx.now_ms}".encode()).digest()
    new_id = new_session_id(ctx.now_ms, entropy)
    checkpoint = nearest_checkpoint(ctx, sid, seq)
    src = log.session
    new = replace(
        src, id=new_id, native_id=None, parent_id=sid,
        fork_message_id=at_msg.id if at_msg else None, fork_checkpoint=checkpoint,
        title=title or (f"fork of {src.title}" if src.title else None),
        created_at=ctx.now_ms, updated_at=ctx.now_ms, source={},
        extra={**src.extra, "fork_seq": seq, "forked_from_agent": src.agent},
    )
    written = logwrite.commit(
        ctx.repo.objects, ctx.repo.common_dir, new, {}, now_ms=ctx.now_ms,
        summary=f"fork {sid[:12]} at message {seq}", truncate_at=seq, base=log.as_base(),
        expected=None, parents=[log.tip.raw],
    )
    assert written is not None
    oid = written.hex()
    with ctx.index.write() as conn:
        conn.execute(
            "INSERT INTO messages SELECT ?, seq, id, role, created_at, native_id, compacted, "
            "is_compaction, text, model, real FROM messages WHERE session_id=? AND seq<?", (new_id, sid, seq))
        conn.execute("INSERT INTO parts SELECT ?, seq, idx, type, call_id, name, is_error FROM parts "
                     "WHERE session_id=? AND seq<?", (new_id, sid, seq))
        ctx.index.put_session(conn, new, log_commit=str(oid), count=seq)
    journal.record(ctx, journal.Entry("fork", ctx.now_ms, f"fork {sid[:12]} as {new_id[:12]}",
                                      refs={refs.session_ref(new_id): [None, str(oid)]}))
    return ForkResult(new_id, sid, seq, new.fork_message_id, checkpoint, seq)
