"""`git oxide undo`: revert the last rewind, fork, rm or pull of this worktree; again to redo."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.core import agent_files
from oxide_git.core.errors import NotFound, Refused
from oxide_git.git import refs, restore
from oxide_git.ops import undo_plan
from oxide_git.store import journal, snapshots
from oxide_git.store import writes as store
from oxide_git.store.context import Context
from oxide_git.store.reindex import reindex


@dataclass
class UndoResult:
    undone: dict[str, Any]
    files: dict[str, list[str]]  # added/modified/deleted: what undo writes; kept; overwritten; left
    refs: dict[str, list[str | None]]  # the refs undo moves: name -> [now, to]
    dry_run: bool
    kept_refs: dict[str, dict[str, str | None]] = field(default_factory=dict)  # moved since: left
    overwritten_refs: dict[str, dict[str, str | None]] = field(default_factory=dict)  # force
    checkpoint: str | None = None  # the present state, saved before anything was written
    head: dict[str, str | None] | None = None  # {then, now} when HEAD moved since the operation
    changes: int = 0  # files written and refs moved (0 with something kept: refused)

    @property
    def kept(self) -> bool:
        return bool(self.files.get("kept") or self.kept_refs)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def undo(ctx: Context, *, dry_run: bool = False, force: bool = False) -> UndoResult:
    """Revert the last journaled operation where nothing changed since (``undo_plan``); with
    ``force`` also what changed since (saved first: checkpoint, trash) and past a later gc."""
    entry = journal.last(ctx)
    later = journal.after(ctx, entry)
    if later and not force:
        raise Refused(
            f"the last undoable operation, {describe(entry)}, is older than `{later[-1].summary}`, "
            "run since; undoing it now would work against that",
            hint="look first with `git oxide undo --dry-run`; `git oxide undo --force` undoes it anyway")
    if not dry_run:
        journal.ensure_writable(ctx)  # an undo that could not be journaled changes nothing
    git = ctx.repo.git
    res = UndoResult(_summary(entry), {}, {}, dry_run)
    reverse = journal.Entry("undo", ctx.now_ms, f"undo {entry.summary}")
    fp = None
    head_now = journal.head(ctx)
    head_then = entry.head
    if entry.files_before:
        target = git.get(entry.files_before)
        if not isinstance(target, pygit2.Commit):
            raise NotFound(f"the state before '{entry.summary}' is gone (checkpoint "
                           f"{entry.files_before[:12]} was garbage-collected)")
        if head_then is None and target.parent_ids:  # a journal line written before `head` was
            head_then = str(target.parent_ids[0])
        with contextlib.ExitStack() as stack:  # a dry run builds its snapshot in scratch objects
            repo = stack.enter_context(snapshots.scratch(ctx.repo)) if dry_run else ctx.repo
            current = snapshots.take(repo, kind="before-rewind", now_ms=ctx.now_ms,
                                     text=f"before undo of {entry.summary}", keep=not dry_run)
            unsaved = {str(s["path"]).rstrip("/") for s in current.skipped}
            fp = undo_plan.plan_files(repo.git, repo.git[current.tree].peel(pygit2.Tree), target.tree, entry,
                                      leave=agent_files.session_files(ctx.environ), unsaved=unsaved,
                                      force=force)
        res.files = fp.to_dict()
        reverse.files_before, reverse.files_after = current.id, entry.files_before
        reverse.files_kept = sorted({*fp.kept, *fp.files.left})
    if head_then != head_now and (head_then or head_now):
        res.head = {"then": head_then, "now": head_now}
    rp = undo_plan.plan_refs(git, entry, force=force)
    res.refs, res.kept_refs, res.overwritten_refs = rp.reverse, rp.kept, rp.overwritten
    reverse.refs = rp.reverse
    if not dry_run:
        for name, was in res.overwritten_refs.items():
            was["trash"] = journal.trash_name(name, ctx.now_ms) if was["now"] else None
    res.changes = (len(fp.files.paths) if fp is not None else 0) + len(rp.real)
    if not dry_run and not res.changes and res.kept:
        if fp is not None:  # a refused undo leaves nothing behind, not even its checkpoint
            refs.update(git, {current.ref: (pygit2.Oid(hex=current.id), None)}, "oxide: undo refused")
        raise Refused(_nothing_left(entry, res), hint=(
            "what it keeps could not be saved in a checkpoint (too large or unreadable): move it away first"
            if force else "`git oxide undo --dry-run` shows what changed since; "
            "`git oxide undo --force` overwrites it too (after saving it in a checkpoint)"))
    if dry_run:
        return res
    if fp is not None:
        store.record_checkpoint(ctx, current)
        res.checkpoint = current.id
    # Refs and files first, the journal last: an undo killed half-way is finished by running
    # `git oxide undo` again (both steps are idempotent), not reversed.
    if rp.moves:
        journal.move_refs(ctx, rp.moves, f"oxide: {reverse.summary}", force=force)
    if fp is not None:
        restore.apply(git, ctx.repo.workdir, fp.files)
    journal.record(ctx, reverse)
    if rp.moves:
        reindex(ctx)
    return res


def _nothing_left(entry: journal.Entry, res: UndoResult) -> str:
    kept = [*res.files.get("kept", []), *res.kept_refs]
    if not res.files.get("kept") and len(res.kept_refs) == 1:
        [(name, was)] = res.kept_refs.items()
        now = (was["now"] or "")[:12] or "deleted"
        return f"{name} moved since (now {now}), undo would lose that"
    more = f" and {len(kept) - 5} more" if len(kept) > 5 else ""
    return (f"everything {describe(entry)} changed has changed since ({', '.join(kept[:5])}{more}); "
            "undo would lose that")


def _summary(entry: journal.Entry) -> dict[str, Any]:
    verb, what = action(entry)
    return {**journal.summary(entry), "at": entry.at, "action": verb, "what": what}


def action(entry: journal.Entry) -> tuple[str, str]:
    """What running undo now does: ``("undo", "rewind to 3f2a1c0")``, or ``("redo", …)`` when the
    last entry is an undo itself (its summary is ``undo <summary>``)."""
    base, n = entry.summary, 0
    while base.startswith("undo "):
        base, n = base[5:], n + 1
    return ("redo" if n % 2 else "undo"), base


def describe(entry: journal.Entry) -> str:
    verb, what = action(entry)
    return what if verb == "undo" else f"the undo of {what}"
