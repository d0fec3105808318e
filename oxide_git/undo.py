"""`git oxide undo`: revert the last rewind, fork, rm or pull of this worktree; again to redo."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import pygit2

from . import agent_files, journal, restore, snapshots, store
from .context import Context
from .errors import NotFound
from .reindex import reindex


@dataclass
class UndoResult:
    undone: dict[str, Any]
    files: dict[str, list[str]]
    refs: dict[str, list[str | None]]
    dry_run: bool


def undo(ctx: Context, *, dry_run: bool = False, force: bool = False) -> UndoResult:
    entry = journal.last(ctx)
    later = journal.after(ctx, entry)
    if later and not force:
        from .errors import Refused

        raise Refused(
            f"the last undoable operation, {describe(entry)}, is older than `{later[-1].summary}`, "
            "run since; undoing it now would work against that",
            hint="look first with `git oxide undo --dry-run`; `git oxide undo --force` undoes it anyway")
    if not dry_run:
        journal.ensure_writable(ctx)  # an undo that could not be journaled changes nothing
    git = ctx.repo.git
    files: dict[str, list[str]] = {}
    reverse = journal.Entry("undo", ctx.now_ms, f"undo {entry.summary}")
    fp = None
    if entry.files_before:
        target = git.get(entry.files_before)
        if not isinstance(target, pygit2.Commit):
            raise NotFound(f"the state before '{entry.summary}' is gone (checkpoint "
                           f"{entry.files_before[:12]} was garbage-collected)")
        with contextlib.ExitStack() as stack:  # a dry run builds its snapshot in scratch objects
            repo = stack.enter_context(snapshots.scratch(ctx.repo)) if dry_run else ctx.repo
            current = snapshots.take(repo, kind="before-rewind", now_ms=ctx.now_ms,
                                     text=f"before undo of {entry.summary}", keep=not dry_run)
            fp = restore.plan(repo.git, repo.git[current.tree].peel(pygit2.Tree), target.tree,
                              leave=agent_files.session_files(ctx.environ))
        files = fp.to_dict()
        if not dry_run:
            store.record_checkpoint(ctx, current)
        reverse.files_before, reverse.files_after = current.id, entry.files_before
    reverse.refs = {name: [after, before] for name, (before, after) in entry.refs.items()}
    if dry_run:
        return UndoResult(_summary(entry), files, reverse.refs, True)
    # Refs and files first, the journal last: an undo killed half-way is finished by running
    # `git oxide undo` again (both steps are idempotent), not reversed.
    if reverse.refs:
        journal.move_refs(ctx, {k: (v[0], v[1]) for k, v in reverse.refs.items()},
                          f"oxide: {reverse.summary}", force=force)
    if fp is not None:
        restore.apply(git, ctx.repo.workdir, fp)
    journal.record(ctx, reverse)
    if reverse.refs:
        reindex(ctx)
    return UndoResult(_summary(entry), files, reverse.refs, False)


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
