"""Where the repository, the worktree and oxide's own folders are.

Discovery is plain file reading (no git process, no pygit2 import) because every command, hooks
included, starts here. ``open_git`` hands out the pygit2 handle to the storage modules.
"""

from __future__ import annotations

import contextlib
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from oxide_git.core.errors import BareRepository, NotInGitRepository
from oxide_git.git import gitdirs

if TYPE_CHECKING:
    import pygit2

    from oxide_git.git.objects import Objects

OXIDE_DIRNAME = "oxide"
# libgit2 maps a pack in windows of 1 GB, up to 8 GB at once, so reading much of a big store
# counted the whole pack in the process's resident memory (`reindex --full` of 1M messages: 524 MB,
# 479 MB of it the 469 MB pack mapped, 45 MB its own). Windows of 4 MB, 16 MB of them mapped at
# once: 88 MB in the same time (the pages stay in the kernel's cache, unmapped).
MAPPED_WINDOW, MAPPED_LIMIT = 4 << 20, 16 << 20


def open_git(path: str | Path) -> pygit2.Repository:
    """A pygit2 handle on the repository at ``path``, with libgit2's pack mapping bounded."""
    import pygit2

    pygit2.settings.mwindow_size = MAPPED_WINDOW
    pygit2.settings.mwindow_mapped_limit = MAPPED_LIMIT
    return pygit2.Repository(str(path))


class Repo:
    """One worktree of a repository, as seen by git oxide: a value (compared and hashed by its
    three folders, not changed after it is made). Not a dataclass: every command starts here, and
    ``dataclasses`` costs ~5 ms to import."""

    __match_args__ = ("workdir", "git_dir", "common_dir")
    workdir: Path  # top of this worktree
    git_dir: Path  # this worktree's gitdir (.git, or .git/worktrees/<name>)
    common_dir: Path  # the shared gitdir (objects, refs)

    def __init__(self, workdir: Path, git_dir: Path, common_dir: Path) -> None:
        d = self.__dict__
        d["workdir"], d["git_dir"], d["common_dir"] = workdir, git_dir, common_dir

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")  # as a frozen dataclass's

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _key(self) -> tuple[Path, Path, Path]:
        return self.workdir, self.git_dir, self.common_dir

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Repo) and other.__class__ is self.__class__ and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Repo(workdir={self.workdir!r}, git_dir={self.git_dir!r}, common_dir={self.common_dir!r})"

    @property
    def oxide_dir(self) -> Path:
        return self.common_dir / OXIDE_DIRNAME

    @property
    def worktree_id(self) -> str:
        """``main`` for the main worktree, else git's own name for the linked worktree."""
        if self.git_dir == self.common_dir:
            return "main"
        return self.git_dir.name

    @property
    def worktree_dir(self) -> Path:
        """Oxide's private folder for this worktree (stat cache, current session, oplog state)."""
        return self.oxide_dir / "worktrees" / self.worktree_id

    @property
    def initialised(self) -> bool:
        return self.oxide_dir.is_dir()

    @cached_property
    def git(self) -> pygit2.Repository:
        import pygit2

        try:
            return open_git(self.git_dir)
        except pygit2.GitError as e:
            raise NotInGitRepository(f"cannot open repository at {self.git_dir}: {e}") from e

    def opened_git(self) -> pygit2.Repository | None:
        """The pygit2 handle if this repository has opened one (``git``), else None: what a caller
        that can do without reads through it, rather than pay pygit2's start-up."""
        return self.__dict__.get("git")

    @cached_property
    def objects(self) -> Objects:
        """The object store (``git.objects``): every object git oxide reads or writes itself."""
        from oxide_git.git.objects import Objects

        return Objects(self.common_dir / "objects")

    def head_ref(self) -> str | None:
        """The symbolic ref HEAD points at (``refs/heads/x``), or None when detached."""
        try:
            text = (self.git_dir / "HEAD").read_text().strip()
        except OSError:
            return None
        return text[5:].strip() if text.startswith("ref:") else None

    def branch(self) -> str:
        """The branch name, or ``(detached)``."""
        ref = self.head_ref()
        if ref is None:
            return "(detached)"
        return ref.removeprefix("refs/heads/")

    def worktrees(self) -> list[Path]:
        """Top folders of every worktree of this repository, this one first."""
        out = [self.workdir]
        main_top = self.common_dir.parent if (self.common_dir.name == ".git") else None
        if main_top and main_top not in out:
            out.append(main_top)
        wt_root = self.common_dir / "worktrees"
        if wt_root.is_dir():
            for d in sorted(wt_root.iterdir()):
                try:
                    gitfile = Path((d / "gitdir").read_text().strip())
                except OSError:
                    continue
                top = gitfile.parent
                if top not in out:
                    out.append(top)
        return out

    def worktree_ids(self) -> list[tuple[Path, str]]:
        """(top folder, worktree id) of every worktree, deepest folders first for matching."""
        out = []
        for top in self.worktrees():
            if top == self.workdir:
                out.append((top, self.worktree_id))
            elif self.common_dir.name == ".git" and top == self.common_dir.parent:
                out.append((top, "main"))
            else:
                out.append((top, _linked_name(self.common_dir, top)))
        return sorted(out, key=lambda t: -len(t[0].parts))

    def worktree_of(self, cwd: str | None) -> str | None:
        """The id of the worktree that contains ``cwd``, if any."""
        if not cwd:
            return None
        p = Path(os.path.normpath(cwd))
        for top, wid in self.worktree_ids():
            if p == top or top in p.parents:
                return wid
        return None

    def project_id(self) -> str:
        """The repository's root commit (stable across clones, moves and worktrees).

        Falls back to the main worktree's path before the first commit. Cached in oxide's folder.
        """
        known = _PROJECT_IDS.get(self.common_dir)
        if known is not None:
            return known
        cache = self.oxide_dir / "project-id"
        try:
            known = cache.read_text().strip()
        except OSError:
            known = ""
        if _is_object_id(known):  # anything else (empty, cut short): not written whole, ask git again
            _PROJECT_IDS[self.common_dir] = known
            return known
        import subprocess

        r = subprocess.run(
            ["git", "rev-list", "--max-parents=0", "HEAD"],
            cwd=self.workdir, capture_output=True, text=True, env=clean_git_env(),
        )
        roots = sorted(r.stdout.split())
        if r.returncode != 0 or not roots:
            return "path:" + str(self.worktrees()[-1] if len(self.worktrees()) > 1 else self.workdir)
        if self.oxide_dir.is_dir():  # whole or not at all: another process may be reading it
            tmp = cache.with_name(f"project-id.{os.getpid()}.tmp")
            try:
                tmp.write_text(roots[0] + "\n")
                os.replace(tmp, cache)
            except OSError:
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)
        return roots[0]


_PROJECT_IDS: dict[Path, str] = {}  # common dir → its project id, once read from its file (never changes)


def _is_object_id(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _linked_name(common_dir: Path, top: Path) -> str:
    root = common_dir / "worktrees"
    if root.is_dir():
        for d in root.iterdir():
            try:
                if Path((d / "gitdir").read_text().strip()).parent == top:
                    return d.name
            except OSError:
                continue
    return top.name


def clean_git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for git subprocesses: without the variables a hook inherits from git."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_PREFIX", "GIT_COMMON_DIR")
    }
    env.update(extra or {})
    return env


def common_dir_of(git_dir: Path) -> Path:
    """The shared gitdir of a (possibly linked-worktree) gitdir."""
    return Path(gitdirs.common_dir(str(git_dir)))


def find_repo(cwd: Path, environ: dict[str, str] | None = None) -> Repo:
    """The worktree containing ``cwd`` (honours GIT_DIR / GIT_WORK_TREE as git does)."""
    environ = dict(os.environ if environ is None else environ)
    cwd = Path(os.path.abspath(cwd))
    if environ.get("GIT_DIR"):
        git_dir = Path(os.path.abspath(cwd / environ["GIT_DIR"]))
        if (git_dir / "commondir").is_file() or gitdirs.is_gitdir(str(git_dir)):
            work = environ.get("GIT_WORK_TREE")
            workdir = Path(os.path.abspath(cwd / work)) if work else _toplevel_from(cwd, git_dir)
            return Repo(workdir, git_dir, common_dir_of(git_dir))
    try:
        found = gitdirs.locate(str(cwd))
    except (OSError, ValueError) as e:
        raise NotInGitRepository(str(e)) from None
    if found is None:
        raise NotInGitRepository(
            "not a git repository (or any of the parent directories)",
            hint="run git oxide inside a git repository, or `git init` one",
        )
    top, git_dir_s = found
    if git_dir_s is None:
        raise BareRepository(
            f"{top} is a bare repository",
            hint="git oxide needs a worktree: run it inside a clone or `git worktree add`",
        )
    return Repo(Path(top), Path(git_dir_s), common_dir_of(Path(git_dir_s)))


def _toplevel_from(cwd: Path, git_dir: Path) -> Path:
    for d in (cwd, *cwd.parents):
        if (d / ".git").exists():
            return d
    return git_dir.parent if git_dir.name == ".git" else cwd
