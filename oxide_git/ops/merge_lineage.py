"""Where a fork and the session it merges into diverged, and what of the fork's the other lacks.

Sessions hang on their parents (``Session.parent_id``): a fork shares its parent's first
``fork_seq`` messages; a continuation (what an agent added after `resume --into`) holds the
export of its parent (as many messages as the export recorded), then its own. Walking both
sessions up to their nearest common ancestor gives the divergence point (a message of the
ancestor) and the ranges of messages, session by session, that the fork holds and the target
does not: the turns a merge appends.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygit2

from oxide_git.core.errors import NotFound, Refused
from oxide_git.core.model import Session
from oxide_git.ops.fork import nearest_checkpoint
from oxide_git.store import sessionlog
from oxide_git.store.context import Context

MAX_DEPTH = 64  # forks of forks: a lineage deeper than this is a loop in damaged metadata


@dataclass(frozen=True)
class Segment:
    """Messages ``start`` to ``stop`` (excluded) of session ``log``: turns the target lacks."""

    log: sessionlog.Log
    start: int
    stop: int

    @property
    def session_id(self) -> str:
        return self.log.session.id

    def to_list(self) -> list[object]:
        return [self.session_id, self.start, self.stop]


@dataclass
class Lineage:
    fork: sessionlog.Log
    target: sessionlog.Log
    ancestor: str | None  # the nearest session both descend from (None: unrelated sessions)
    at: int  # messages of the ancestor both hold: the fork point is its message ``at - 1``
    segments: list[Segment]
    base: str | None  # the commit (a checkpoint, or HEAD's) the code diverged from
    theirs: str | None  # the fork's latest checkpoint


def _link(ctx: Context, child: Session, parent: sessionlog.Log) -> tuple[int, int]:
    """(messages of ``child``, messages of ``parent``) that are the same history."""
    p = parent.session
    if child.source.get("continues") == p.id:  # a continuation: the export, then the agent's turns
        exp = (p.source.get("exports") or {}).get(child.agent) or {}
        held = int(exp.get("messages") or 0) if exp.get("native_id") == child.native_id else 0
        return held, _count_at_export(ctx, parent, f"exported to {child.agent} as {child.native_id}")
    at = child.extra.get("fork_seq")
    if isinstance(at, int):
        return at, at
    if child.fork_message_id:
        try:
            seq = ctx.index.message_seq(p.id, child.fork_message_id) + 1
        except NotFound:
            seq = 0
        return seq, seq
    return 0, 0


def _count_at_export(ctx: Context, log: sessionlog.Log, summary: str) -> int:
    """How many messages ``log`` held when the export that ``summary`` names was recorded."""
    c: pygit2.Commit | None = log.commit
    for _ in range(10_000):
        if c is None:
            break
        if c.message.startswith(summary):
            return sessionlog.count_messages(ctx.repo, c.tree)
        c = c.parents[0] if c.parents else None
    return log.count


def _chain(ctx: Context, log: sessionlog.Log) -> list[sessionlog.Log]:
    """``log``'s session, its parent, its parent's parent... (those with a log)."""
    out = [log]
    seen = {log.session.id}
    while len(out) < MAX_DEPTH and out[-1].session.parent_id and out[-1].session.parent_id not in seen:
        parent = sessionlog.load(ctx.repo, out[-1].session.parent_id)
        if parent is None:
            break
        seen.add(parent.session.id)
        out.append(parent)
    return out


def _walk(ctx: Context, chain: list[sessionlog.Log], upto: int) -> tuple[list[Segment], int]:
    """Each session's own messages from ``chain[0]`` up to ``chain[upto]`` (excluded), newest
    last, and how many of ``chain[upto]``'s messages ``chain[0]`` holds."""
    segments: list[Segment] = []
    need = chain[0].count
    for i in range(upto):
        held, parent_end = _link(ctx, chain[i].session, chain[i + 1])
        if need > held:
            segments.insert(0, Segment(chain[i], held, need))
            need = parent_end
        else:
            need = min(need, parent_end)
    return segments, need


def default_target(ctx: Context, fork: sessionlog.Log, ref: str) -> str:
    """The session the fork was made from: past the continuations, the first fork's parent."""
    cur = fork
    for _ in range(MAX_DEPTH):
        parent_id = cur.session.parent_id
        if not parent_id:
            break
        if cur.session.source.get("continues") != parent_id:
            return parent_id
        parent = sessionlog.load(ctx.repo, parent_id)
        if parent is None:
            break
        cur = parent
    raise Refused(f"session {ref} is not a fork: there is no session it was forked from",
                  hint="name the session to merge it into with --into SESSION")


def find(ctx: Context, fork_ref: str, into: str | None) -> Lineage:
    fid = ctx.index.resolve_session(fork_ref)
    fork = sessionlog.load_required(ctx.repo, fid, fork_ref)
    tid = ctx.index.resolve_session(into) if into else default_target(ctx, fork, fork_ref)
    if tid == fid:
        raise Refused(f"session {fork_ref} cannot be merged into itself")
    target = sessionlog.load_required(ctx.repo, tid, into)
    if target.session.project_id and fork.session.project_id and \
            target.session.project_id != fork.session.project_id:
        raise Refused(f"session {fid[:12]} belongs to another project than {tid[:12]}",
                      hint="a fork merges into a session of the same repository")
    mine, theirs = _chain(ctx, fork), _chain(ctx, target)
    their_ids = [c.session.id for c in theirs]
    common = next((i for i, c in enumerate(mine) if c.session.id in their_ids), None)
    if common is None:  # unrelated sessions: the whole fork is new to the target
        segments, root_has = _walk(ctx, mine, len(mine) - 1)
        segments.insert(0, Segment(mine[-1], 0, root_has))
        segments = [s for s in segments if s.stop > s.start]
        return Lineage(fork, target, None, 0, segments, None, _latest_checkpoint(ctx, fid, segments))
    segments, fork_has = _walk(ctx, mine, common)
    _theirs_segments, target_has = _walk(ctx, theirs, their_ids.index(mine[common].session.id))
    ancestor = mine[common]
    at = min(fork_has, target_has)
    if fork_has > at:  # the ancestor's turns the fork holds and the target forked before
        segments.insert(0, Segment(ancestor, at, fork_has))
    segments = [s for s in segments if s.stop > s.start]
    base = nearest_checkpoint(ctx, ancestor.session.id, at) or fork.session.fork_checkpoint
    return Lineage(fork, target, ancestor.session.id, at, segments, base,
                   _latest_checkpoint(ctx, fid, segments))


def _latest_checkpoint(ctx: Context, fork_id: str, segments: list[Segment]) -> str | None:
    """The fork's newest checkpoint (its code as it left it); without one, the newest of the
    sessions whose turns it brings (the fork it continues, the forks it was forked from)."""
    ids = sorted({s.session_id for s in segments} | {fork_id})
    rows = ctx.index.query(
        f"SELECT id FROM checkpoints WHERE session_id IN ({','.join('?' * len(ids))}) "
        "AND kind != 'before-rewind' ORDER BY session_id = ? DESC, created_at DESC, rowid DESC LIMIT 1",
        (*ids, fork_id))
    return str(rows[0][0]) if rows else None
