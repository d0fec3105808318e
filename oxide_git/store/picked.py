"""Which commit a commit was cherry-picked from, when git no longer says.

A cherry-pick that goes through names the picked commit in ``CHERRY_PICK_HEAD`` while its
post-commit hook runs, and the hook carries that commit's note. One that stopped on a conflict
is finished by `git commit` or `git cherry-pick --continue`, and by then (git 2.39) the file is
gone: the post-commit hook sees a plain commit. What is left is the reflog, whose entry for the
commit says ``commit (cherry-pick): ...`` or ``cherry-pick: ...``, and the commit itself: a pick
keeps the picked commit's author (name, email, date to the second) and message, with
``(cherry picked from commit X)`` appended under ``-x`` (and `git commit --no-edit` keeps the
commented ``# Conflicts:`` lines in it). So the picked commit is X, or else the noted commits with
that same author line and subject (a rewrite of the picked commit may be among them: its note
then comes too, which says the same sessions).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from oxide_git.store.notes import NOTES_REF

TAIL = 64 * 1024  # of the reflog, read from its end: the commit's entry was written just now
_PICKED_X = re.compile(r"\(cherry picked from commit ([0-9a-f]{40}|[0-9a-f]{64})\)")
_ENTRY = ("\tcommit (cherry-pick): ", "\tcherry-pick: ")


def reflog_says_picked(git_dir: Path, commit: str) -> bool:
    """Whether HEAD's reflog (of this worktree) made ``commit`` by a cherry-pick."""
    path = git_dir / "logs" / "HEAD"
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - TAIL))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return False
    for line in reversed(tail.splitlines()):
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] == commit:
            return any(e in line for e in _ENTRY)
    return False


def picked_from(git: Any, git_dir: Path, commit: str) -> list[str]:
    """The commits ``commit`` was cherry-picked from, with a note to carry ([] if not a pick)."""
    if not reflog_says_picked(git_dir, commit):
        return []
    import pygit2

    new = git.get(commit)
    if not isinstance(new, pygit2.Commit):
        return []
    named = _PICKED_X.findall(new.message)
    if named:
        return [named[-1]]
    author, subject = _author(new), _subject(new)
    found = []
    try:
        noted = [str(n.annotated_id) for n in git.notes(NOTES_REF)]
    except Exception:  # no notes ref, or a notes tree libgit2 cannot walk
        return []
    for oid in noted:
        if oid == commit:
            continue
        old = git.get(oid)
        if isinstance(old, pygit2.Commit) and _author(old) == author and _subject(old) == subject:
            found.append(oid)
    return found


def _author(c: Any) -> tuple[str, str, int, int]:
    a = c.author
    return (a.name, a.email, a.time, a.offset)


def _subject(c: Any) -> str:
    return str(c.message).split("\n", 1)[0].strip()
