"""What `git oxide undo` may put back: only what the operation changed and is still as it left it.

The rule, per path and per ref. Undo reverts a journaled operation from the state after it (A) to
the state before it (B). For a path or ref whose present value (C) differs from B:

- C == A: nothing touched it since the operation, so undo restores B (``restore``);
- C != A: it changed since (edited, committed, created, deleted, appended, moved), so undo leaves
  it and lists it as ``kept``; ``force`` overwrites it too, after the present state was saved (the
  "before undo" checkpoint for files, the trash for refs).

A path the present snapshot could not hold (too large, unreadable, a crowded untracked folder) is
always kept: nothing could bring back what undo would overwrite there.

A is what the journal entry records: for refs, each ref's ``after``; for files, ``files_after``
on the paths where it differs from ``files_before``, except ``files_kept`` (paths the operation
did not write: other sessions' changes, agents' own session files, paths an undo kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from oxide_git.git import refs, restore
from oxide_git.store.journal import Entry

_GITLINK = int(pygit2.enums.FileMode.COMMIT)
Side = tuple[str, int] | None


@dataclass
class RefPlan:
    moves: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # name -> (expect, to)
    reverse: dict[str, list[str | None]] = field(default_factory=dict)  # name -> [now, to]: for redo
    kept: dict[str, dict[str, str | None]] = field(default_factory=dict)  # name -> {after, now}
    overwritten: dict[str, dict[str, str | None]] = field(default_factory=dict)  # force: name -> {now, trash}
    real: set[str] = field(default_factory=set)  # the moves that change a ref (not already there)


def plan_refs(git: pygit2.Repository, entry: Entry, *, force: bool) -> RefPlan:
    """Each ref the operation moved goes back to ``before`` when it is still at ``after``."""
    out = RefPlan()
    for name, (before, after) in entry.refs.items():
        cur = refs.read(git, name)
        now = str(cur) if cur is not None else None
        if now != before and (now == after or force):
            out.real.add(name)
        if now in (before, after):  # at ``before``: an interrupted undo already moved it
            out.moves[name] = (after, before)
            out.reverse[name] = [after, before]
        elif force:
            out.moves[name] = (after, before)  # move_refs(force=True) puts ``now`` in the trash
            out.reverse[name] = [now, before]
            out.overwritten[name] = {"now": now, "after": after}
        else:
            out.kept[name] = {"after": after, "now": now}
    return out


@dataclass
class PathPlan:
    files: restore.FilePlan
    kept: list[str] = field(default_factory=list)  # changed since: left as they are
    overwritten: list[str] = field(default_factory=list)  # changed since, restored anyway (force)

    def to_dict(self) -> dict[str, list[str]]:
        return {**self.files.to_dict(), "kept": self.kept, "overwritten": self.overwritten}


def _at(tree: pygit2.Tree, path: str) -> Side:
    try:
        e = tree[path]
    except (KeyError, ValueError):
        return None
    return str(e.id), int(e.filemode)


def _tree(git: pygit2.Repository, ish: str | None) -> pygit2.Tree | None:
    if not ish:
        return None
    try:
        return git[ish].peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.InvalidSpecError):
        return None


def _under(path: str, prefixes: set[str]) -> bool:
    parts = path.split("/")
    return any("/".join(parts[:i]) in prefixes for i in range(1, len(parts) + 1))


def plan_files(
    git: pygit2.Repository, current: pygit2.Tree, before: pygit2.Tree, entry: Entry, *,
    leave: set[str], unsaved: set[str], force: bool,
) -> PathPlan:
    """The files undo writes from the snapshot ``current`` back to ``before`` under the rule.

    ``unsaved``: paths (or folders) the snapshot ``current`` could not hold: always kept."""
    fp = restore.plan(git, current, before, leave=leave)
    after = _tree(git, entry.files_after)
    not_written = set(entry.files_kept or ())
    out = PathPlan(restore.FilePlan(left=fp.left))
    keep: set[str] = set()
    changed_since: set[str] = set()
    for path in fp.paths:
        c, b = _at(current, path), _at(before, path)
        a = _at(after, path) if after is not None else b
        if path in not_written or (a is None and b is not None and b[1] == _GITLINK) or (
                a is not None and a[1] == _GITLINK):
            a = b  # the operation did not write this path
        if path.rsplit("/", 1)[-1].startswith(restore.TEMP_PREFIX):
            pass  # a temp file of a restore killed half-way: ours, never the user's
        elif _under(path, unsaved):
            keep.add(path)
        elif c != a:
            changed_since.add(path)
            if not force:
                keep.add(path)
    # A file is written only where every folder on its way can be made: a kept file in the
    # way (or a kept file under a folder that would become a file) keeps the write too.
    writes = [p for p in fp.writes if p not in keep]
    while True:
        folders = {k.rsplit("/", i)[0] for k in keep for i in range(1, k.count("/") + 1)}
        blocked = {p for p in writes if p in folders or _under(p, keep)}
        if not blocked:
            break
        keep |= blocked
        writes = [p for p in writes if p not in blocked]
    for name, src in (("added", fp.added), ("modified", fp.modified), ("deleted", fp.deleted)):
        getattr(out.files, name).extend(p for p in src if p not in keep)
    out.files.writes = {p: fp.writes[p] for p in writes}
    out.kept = sorted(keep)
    out.overwritten = sorted(changed_since - keep)
    return out
