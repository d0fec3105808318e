"""The code half of `git oxide merge`: a three-way merge of trees by git's own machinery.

libgit2's tree merge (``merge_trees``) merges the files; a file both sides changed in the same
place is written the way `git merge` writes it, by ``git merge-file`` with git's conflict markers
(labelled with the worktree and the fork), and listed. Objects are written into the repository
given, so a dry run that passes a scratch view (``snapshots.scratch``) writes nothing.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.core.errors import OxideError


@dataclass
class CodeMerge:
    tree: pygit2.Oid
    conflicts: list[dict[str, str]] = field(default_factory=list)  # {"path", "kind"}


def _merge_file(git: pygit2.Repository, base: Any, ours: Any, theirs: Any, labels: tuple[str, str, str],
                ) -> tuple[bytes, int] | None:
    """``git merge-file -p`` of three index entries (a missing base is an empty file): the merged
    bytes and the number of conflicts, or None when git cannot merge them (binary files)."""
    with tempfile.TemporaryDirectory(prefix="oxide-merge-") as tmp:
        names = []
        for name, entry in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                if entry is not None:
                    f.write(git.odb.read(entry.id)[1])
            names.append(path)
        try:
            run = subprocess.run(
                ["git", "merge-file", "-p", "-L", labels[0], "-L", labels[1], "-L", labels[2], *names],
                capture_output=True, check=False)
        except OSError as e:
            raise OxideError(f"cannot run git merge-file: {e.strerror}") from e
    if run.returncode < 0 or run.returncode >= 127:  # "Cannot merge binary files", or a failure
        return None
    return run.stdout, run.returncode


def merge(git: pygit2.Repository, base: pygit2.Tree, ours: pygit2.Tree, theirs: pygit2.Tree,
          labels: tuple[str, str, str]) -> CodeMerge:
    """``theirs`` merged into ``ours`` against ``base``; conflicted files hold git's markers."""
    index = git.merge_trees(base, ours, theirs)
    conflicts: list[dict[str, str]] = []
    if index.conflicts is not None:
        for anc, our, their in list(index.conflicts):
            path = (our or their or anc).path
            del index.conflicts[path]
            if our is not None and their is not None:
                merged = _merge_file(git, anc, our, their, labels)
                if merged is None:  # binary: the worktree's copy stays, the conflict is listed
                    index.add(pygit2.IndexEntry(path, our.id, our.mode))
                    conflicts.append({"path": path, "kind": "binary: the worktree's copy was kept"})
                    continue
                oid = git.create_blob(merged[0])
                index.add(pygit2.IndexEntry(path, oid, our.mode))
                conflicts.append({"path": path, "kind": "both added" if anc is None else "both changed"})
            elif our is not None:  # the fork deleted what the worktree changed: keep the change
                index.add(pygit2.IndexEntry(path, our.id, our.mode))
                conflicts.append({"path": path, "kind": "deleted by the fork: the worktree's copy was kept"})
            elif their is not None:  # the worktree deleted what the fork changed: the fork's copy
                index.add(pygit2.IndexEntry(path, their.id, their.mode))
                conflicts.append({"path": path,
                                  "kind": "deleted in the worktree: the fork's copy was written"})
    return CodeMerge(index.write_tree(git), sorted(conflicts, key=lambda c: c["path"]))
