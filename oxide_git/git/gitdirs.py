"""Where a worktree's git folders are, found by reading files with ``os`` alone.

``repo.find_repo`` builds on this, and so does the `checkpoint` fast path of the console script,
which runs before anything else is imported (``pathlib`` and ``subprocess`` cost milliseconds there).
"""

from __future__ import annotations

import os

# Variables that change which repository git means (what a cache of an answer must key on, and
# what the watcher's fast path leaves to a process of its own).
REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")


def locate(cwd: str) -> tuple[str, str | None] | None:
    """The first folder at or above ``cwd`` that is a worktree top, with its git dir: ``.git`` as a
    folder, or the target of a ``gitdir:`` file. ``(folder, None)`` when that folder is a bare
    repository; None when there is neither. A ``.git`` file that names no gitdir: ValueError."""
    d = os.path.abspath(cwd)
    while True:
        dotgit = os.path.join(d, ".git")
        if os.path.isdir(dotgit):
            return d, os.path.realpath(dotgit)
        if os.path.isfile(dotgit):
            return d, read_gitfile(dotgit)
        if is_gitdir(d) and os.path.basename(d) != ".git":
            return d, None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def read_gitfile(path: str) -> str:
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read().strip()
    if not text.startswith("gitdir:"):
        raise ValueError(f"{path} is not a gitdir link")
    target = text[7:].strip()
    return target if os.path.isabs(target) else os.path.realpath(os.path.join(os.path.dirname(path), target))


def common_dir(git_dir: str) -> str:
    """The shared gitdir of a (possibly linked-worktree) gitdir."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="surrogateescape") as f:
            rel = f.read().strip()
    except OSError:
        return git_dir
    return rel if os.path.isabs(rel) else os.path.realpath(os.path.join(git_dir, rel))


def is_gitdir(path: str) -> bool:
    return (os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects"))
            and os.path.isdir(os.path.join(path, "refs")))
