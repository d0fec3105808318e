"""The undo journal: what each destructive operation moved, so `git oxide undo` can move it back.

One JSON line per operation in ``<git-common-dir>/oxide/worktrees/<id>/journal.jsonl``: the refs it
changed (before, after) and the worktree state before and after it, as checkpoint ids. Undo applies
the reverse and journals that too, so a second undo is a redo. Everything a record names stays
reachable (refs removed by undo go to the trash namespace), so nothing undo needs can be gc'd.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.core.errors import NotFound, Refused
from oxide_git.git import refs
from oxide_git.store.context import Context


@dataclass
class Entry:
    op: str
    at: int
    summary: str
    refs: dict[str, list[str | None]] = field(default_factory=dict)  # name -> [before, after]
    files_before: str | None = None  # checkpoint id of the worktree before the operation
    files_after: str | None = None  # tree-ish the worktree was set to (None: files untouched)
    undoable: bool = True  # False: a mark of a destructive command undo cannot revert (gc)
    # paths where files_after differs from files_before that the operation did not write (other
    # sessions' changes, agents' session files, what an undo kept): the state after it is exact
    files_kept: list[str] = field(default_factory=list)
    head: str | None = None  # HEAD when the operation ran (set by ``record``), to tell it moved since

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)


def _path(ctx: Context) -> os.PathLike[str]:
    return ctx.repo.worktree_dir / "journal.jsonl"


def record(ctx: Context, entry: Entry) -> None:
    ensure_writable(ctx)
    if entry.head is None:
        entry.head = head(ctx)
    with open(_path(ctx), "a+b") as f:  # appends go to the end, wherever we read
        size = f.seek(0, os.SEEK_END)
        torn = False
        if size:
            f.seek(size - 1)
            torn = f.read(1) != b"\n"
        # a crash left the last line without its newline: end it, or this entry would join it
        f.write((b"\n" if torn else b"") + entry.to_json().encode() + b"\n")
        f.flush()
        os.fsync(f.fileno())


def ensure_writable(ctx: Context) -> None:
    """Fail, before anything changes, when the journal could not be written: an operation that
    cannot be journaled could not be undone, so it must not start."""
    from oxide_git.core.errors import OxideError

    path = _path(ctx)
    try:
        ctx.repo.worktree_dir.mkdir(parents=True, exist_ok=True)
        with open(path, "a"):
            pass
    except PermissionError as e:
        raise OxideError(f"permission denied: cannot write the undo journal {path}",
                         hint=f"nothing was changed; make {ctx.repo.oxide_dir} writable "
                              "(`ls -ld` it: owner and mode) and run the command again") from e
    except OSError as e:
        raise OxideError(f"cannot write the undo journal {path}: {e.strerror}",
                         hint="nothing was changed; free some space or fix the folder, then retry") from e


def entries(ctx: Context) -> list[Entry]:
    try:
        with open(_path(ctx)) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            data = json.loads(line)
            out.append(Entry(**{k: v for k, v in data.items() if k in _FIELDS}))  # a newer field: skip it
        except (ValueError, TypeError, AttributeError):
            continue  # a torn last line from a crash: the operation never finished journaling
    return out


_FIELDS = frozenset(Entry.__dataclass_fields__)


def head(ctx: Context) -> str | None:
    """The commit HEAD is at (None: unborn or unreadable)."""
    git = ctx.repo.git
    try:
        return None if git.head_is_unborn else str(git.head.target)
    except pygit2.GitError:
        return None


def last(ctx: Context) -> Entry:
    """The last entry undo can revert (marks of other commands are skipped: see ``after``)."""
    es = [e for e in entries(ctx) if e.undoable]
    if not es:
        raise NotFound("nothing to undo in this worktree",
                       hint="undo reverts the last rewind, fork, rm or pull made here")
    return es[-1]


def after(ctx: Context, entry: Entry) -> list[Entry]:
    """The marks of destructive commands (``undoable=False``) journaled after ``entry``."""
    es = entries(ctx)
    at = max((i for i, e in enumerate(es) if e == entry), default=-1)
    return [e for e in es[at + 1:] if not e.undoable]


def trash_name(name: str, at: int) -> str:
    return f"{refs.TRASH}{at}/{name.removeprefix('refs/oxide/')}"


def move_refs(
    ctx: Context, changes: dict[str, tuple[str | None, str | None]], message: str, *, force: bool = False
) -> None:
    """Set refs from ``before`` to ``after`` atomically; a ref that goes away is kept in the trash."""
    git = ctx.repo.git
    update: dict[str, tuple[pygit2.Oid | None, pygit2.Oid | None]] = {}
    for name, (before, after) in changes.items():
        current = refs.read(git, name)
        target = pygit2.Oid(hex=after) if after else None
        if current == target:
            continue  # already there (a rerun after an interruption): nothing to move
        if target is not None and target not in git:  # a ref to a missing object breaks the repository
            raise NotFound(f"{name}: the state to put back ({str(target)[:12]}) is gone: garbage-"
                           "collected after `git oxide gc` emptied the trash", hint="nothing was changed")
        expect = pygit2.Oid(hex=before) if before else None
        if current != expect:
            if not force:
                now = str(current)[:12] if current else "deleted"
                raise Refused(
                    f"{name} moved since (now {now}), undo would lose that",
                    hint="run `git oxide undo --force` to undo anyway (the newer state goes to the trash)")
            expect = current
            if current is not None:  # the newer state, which the ref no longer reaches
                update[trash_name(name, ctx.now_ms)] = (None, current)
        update[name] = (expect, pygit2.Oid(hex=after) if after else None)
        if after is None and before is not None and not name.startswith(refs.TRASH):
            update.setdefault(trash_name(name, ctx.now_ms), (None, pygit2.Oid(hex=before)))
    if update:
        refs.update(git, update, message)


def summary(entry: Entry) -> dict[str, Any]:
    return {"op": entry.op, "summary": entry.summary, "refs": entry.refs,
            "files_before": entry.files_before, "files_after": entry.files_after}
