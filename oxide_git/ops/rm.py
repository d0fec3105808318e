"""`git oxide rm`: remove a session (and with ``recursive`` its forks) to the trash, undoably.

Refs move to ``refs/oxide/trash/<ms>/sessions/<id>`` through ``journal.move_refs`` and the move is
journaled (op ``rm``), so `git oxide undo` puts them back until `git oxide gc` empties the trash.
A session with forks is refused unless ``recursive`` (forks go too) or ``keep_forks`` (forks
stay: their log commits have the parent's commits as ancestors, so their history stays complete).
The session's checkpoints stay; they expire with ``oxide.checkpointTTL`` like any other.

Each removed session leaves a tombstone (``tombstones``), journaled with it, so a pull does not
bring it back and `undo` takes the tombstone away as it puts the session back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from oxide_git.core.errors import NotFound, Refused
from oxide_git.git import refs
from oxide_git.store import journal, tombstones
from oxide_git.store.context import Context
from oxide_git.store.reindex import reindex


@dataclass
class RmResult:
    sessions: list[str]
    kept_forks: list[str] = field(default_factory=list)
    refs: dict[str, list[str | None]] = field(default_factory=dict)
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _children(ctx: Context, sid: str) -> list[str]:
    return [r[0] for r in ctx.index.query(
        "SELECT id FROM sessions WHERE parent_id=? ORDER BY created_at, id", (sid,))]


def _descendants(ctx: Context, sid: str) -> list[str]:
    out: list[str] = []
    todo = _children(ctx, sid)
    while todo:
        s = todo.pop(0)
        if s not in out and s != sid:
            out.append(s)
            todo += _children(ctx, s)
    return out


def rm(ctx: Context, ref: str, *, recursive: bool = False, keep_forks: bool = False,
       dry_run: bool = False) -> RmResult:
    sid = ctx.index.resolve_session(ref)
    forks = _descendants(ctx, sid)
    if forks and not (recursive or keep_forks):
        raise Refused(
            f"session {sid[:12]} has {len(forks)} fork(s): {', '.join(f[:12] for f in forks[:5])}",
            hint="add --recursive to remove them too, or --keep-forks to keep them")
    gone = [sid] + (forks if recursive else [])
    git = ctx.repo.git
    changes: dict[str, tuple[str | None, str | None]] = {}
    for s in gone:
        tip = refs.read(git, refs.session_ref(s))
        if tip is None:
            if s == sid:
                raise NotFound(f"session {ref} has no ref in git", hint="run `git oxide reindex`")
            continue
        changes[refs.session_ref(s)] = (str(tip), None)
    res = RmResult(gone, [] if recursive else _children(ctx, sid),
                   {k: [b, a] for k, (b, a) in changes.items()}, dry_run)
    if dry_run:
        return res
    summary = f"rm {sid[:12]}" + (f" and {len(gone) - 1} fork(s)" if len(gone) > 1 else "")
    for name, (removed, _none) in list(changes.items()):  # a tombstone each, journaled with it
        changes.update(tombstones.removal(ctx.repo, name[len(refs.SESSIONS):], str(removed), ctx.now_ms))
    journal.move_refs(ctx, changes, f"oxide: {summary}")
    journal.record(ctx, journal.Entry("rm", ctx.now_ms, summary,
                                      refs={k: [b, a] for k, (b, a) in changes.items()}))
    reindex(ctx)
    return res
