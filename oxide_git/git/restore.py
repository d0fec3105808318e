"""Make a worktree's files match a tree, writing only the files that differ.

Trees may come from a remote, so every path is checked before anything is written: no ``..``,
no absolute path, no ``.git`` in any spelling git itself refuses (case, trailing dots or spaces,
NTFS short names, HFS ignorable characters), and no write through a symlinked folder.
"""

from __future__ import annotations

import os
import re
import stat as statmod
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from oxide_git.core.errors import Refused, UntrustedTree

_LINK = pygit2.enums.FileMode.LINK
_EXEC = pygit2.enums.FileMode.BLOB_EXECUTABLE
_GITLINK = pygit2.enums.FileMode.COMMIT
_TREE = pygit2.enums.FileMode.TREE
_BLOB = pygit2.enums.FileMode.BLOB
_OBJ_TREE = int(pygit2.enums.ObjectType.TREE)
_HFS_IGNORABLE = dict.fromkeys(map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                                        "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"))
MAX_BLOB = 1 << 30
MAX_DEPTH = 256  # folders in folders (real worktrees stay under 40)
TEMP_PREFIX = ".oxide-tmp-"  # a file being written; one left by a killed restore is swept


@dataclass
class FilePlan:
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    writes: dict[str, tuple[pygit2.Oid, int]] = field(default_factory=dict)
    left: list[str] = field(default_factory=list)  # differing, but an agent's own session file

    @property
    def paths(self) -> list[str]:
        return sorted(self.added + self.modified + self.deleted)

    def to_dict(self) -> dict[str, list[str]]:
        return {"added": self.added, "modified": self.modified, "deleted": self.deleted, "left": self.left}


def _is_dotgit(component: str) -> bool:
    c = unicodedata.normalize("NFC", component.translate(_HFS_IGNORABLE)).rstrip(". ").lower()
    return c == ".git" or c.startswith("git~") or c == ".git::$index_allocation"


def check_path(path: str) -> None:
    """Refuse a tree path that would write outside the worktree or into git's own folder."""
    if not path or path.startswith("/") or "\\" in path or "\0" in path or ":" in path.split("/")[0][1:2]:
        raise UntrustedTree(f"refusing unsafe path {path!r} in checkpoint tree",
                            hint="this checkpoint did not come from git oxide; do not restore it")
    for comp in path.split("/"):
        if comp in ("", ".", "..") or _is_dotgit(comp):
            raise UntrustedTree(f"refusing unsafe path {path!r} in checkpoint tree",
                                hint="this checkpoint did not come from git oxide; do not restore it")


def plan(
    git: pygit2.Repository, current: pygit2.Tree, target: pygit2.Tree,
    *, exclude: set[str] = frozenset(),  # type: ignore[assignment]
    leave: set[str] = frozenset(),  # type: ignore[assignment]
) -> FilePlan:
    """What must change so that a worktree whose snapshot is ``current`` matches ``target``.

    ``leave``: names of the agents' own session files (``agent_files``), never rewritten; the
    ones that differ are listed in ``left``."""
    from oxide_git.core.agent_files import is_session_file

    out = FilePlan()
    for path, old, new in diff_trees(git, current, target):
        check_path(path)
        if path in exclude:
            continue
        if leave and is_session_file(path, leave):
            out.left.append(path)
            continue
        if new is None:
            out.deleted.append(path)
            continue
        if new[1] == _GITLINK:
            continue  # submodules are not ours to rewrite
        (out.added if old is None else out.modified).append(path)
        out.writes[path] = new
    return out


Side = tuple[pygit2.Oid, int] | None


def diff_trees(
    git: pygit2.Repository, a: pygit2.Tree | None, b: pygit2.Tree | None, prefix: str = ""
) -> Iterator[tuple[str, Side, Side]]:
    """(path, old, new) for every file that differs, descending only into subtrees whose ids
    differ: O(changed paths), where a full diff of two 100,000-file trees walks them all."""
    yield from _diff_raw(git, a.id if a is not None else None, b.id if b is not None else None, prefix)


_ENTRY = re.compile(rb"([0-7]{5,6}) ([^\0]+)\0(.{20})", re.S)
_WHOLE_TREE = re.compile(rb"(?:[0-7]{5,6} [^\0]+\0.{20})*", re.S)


def _mode(raw: bytes) -> int:
    """A tree entry's mode as libgit2 normalizes it (so 100664 is a plain file, as in pygit2)."""
    m = int(raw, 8)
    kind = m & 0o170000
    if kind == _TREE:
        return int(_TREE)
    if m & 0o100:
        return int(_EXEC)
    if kind in (_GITLINK, _LINK):
        return kind
    return int(_BLOB)


def _entries(git: pygit2.Repository, oid: pygit2.Oid | None, where: str) -> dict[bytes, tuple[bytes, bytes]]:
    """A tree's entries by name: (raw mode, raw id), read from the object's bytes (a Python
    object per entry made the diff of a 1,000-entry folder cost milliseconds)."""
    if oid is None:
        return {}
    kind, data = git.odb.read(oid)
    if kind != _OBJ_TREE:
        raise UntrustedTree(f"refusing {where or '/'}: not a tree")
    found = _ENTRY.findall(data)
    out = {name: (mode, raw) for mode, name, raw in found}
    if len(out) != len(found):
        raise UntrustedTree(f"refusing a tree with duplicate entries under {where or '/'}",
                            hint="git fsck rejects such trees; this checkpoint was not made by git oxide")
    if not _WHOLE_TREE.fullmatch(data):
        raise UntrustedTree(f"refusing a malformed tree under {where or '/'}")
    return out


def _diff_raw(
    git: pygit2.Repository, a: pygit2.Oid | None, b: pygit2.Oid | None, prefix: str
) -> Iterator[tuple[str, Side, Side]]:
    if prefix.count("/") > MAX_DEPTH:  # a tree from elsewhere can nest deeper than Python recurses
        raise UntrustedTree(f"refusing a tree nested more than {MAX_DEPTH} folders deep",
                            hint="this checkpoint was not made by git oxide from a real worktree")
    ea, eb = _entries(git, a, prefix), _entries(git, b, prefix)
    differ = {name for name, _ in ea.items() ^ eb.items()}  # set operations in C, not a loop
    for name in sorted(differ):
        x, y = ea.get(name), eb.get(name)
        if x is not None and y is not None and x[1] == y[1] and _mode(x[0]) == _mode(y[0]):
            continue  # the same file, its mode spelled differently (100664 is 100644)
        path = prefix + name.decode("utf-8", "surrogateescape")
        old, new = _side(x), _side(y)
        x_dir = old is not None and old[1] == _TREE
        y_dir = new is not None and new[1] == _TREE
        if x_dir or y_dir:
            yield from _diff_raw(git, old[0] if x_dir and old else None,
                                 new[0] if y_dir and new else None, path + "/")
        old = None if x_dir else old
        new = None if y_dir else new
        if old is not None or new is not None:
            yield path, old, new


def _side(entry: tuple[bytes, bytes] | None) -> Side:
    return None if entry is None else (pygit2.Oid(raw=entry[1]), pygit2.enums.FileMode(_mode(entry[0])))


def _check_parents(workdir: Path, path: str) -> None:
    """Refuse ``path`` if a folder on its way in the worktree is a symlink (nothing is created)."""
    _walk_parents(workdir, path, create=False)


def _safe_parent(workdir: Path, path: str) -> Path:
    """The folder for ``path``, created as needed; refuses to go through a symlink."""
    return _walk_parents(workdir, path, create=True)


def _walk_parents(workdir: Path, path: str, *, create: bool) -> Path:
    parent = workdir
    for comp in path.split("/")[:-1]:
        parent = parent / comp
        try:
            st = os.lstat(parent)
        except FileNotFoundError:
            if not create:
                return parent
            os.mkdir(parent)
            continue
        if statmod.S_ISLNK(st.st_mode):
            raise UntrustedTree(f"refusing to write {path}: {parent.relative_to(workdir)} is a symlink",
                                hint="a symlinked folder could lead outside the worktree")
        if create and not statmod.S_ISDIR(st.st_mode):
            os.unlink(parent)  # a file where the target has a folder (its deletion is in the plan)
            os.mkdir(parent)
    return parent


def _remove_empty_parents(workdir: Path, path: str) -> None:
    p = (workdir / path).parent
    while p != workdir:
        try:
            p.rmdir()
        except OSError:
            return
        p = p.parent


def apply(git: pygit2.Repository, workdir: Path, fp: FilePlan) -> int:
    """Write the plan into the worktree: deletions first, then each file atomically. Returns writes.

    Every path is checked before the first byte is written, so a refused plan changes nothing.
    """
    for path in [*fp.deleted, *fp.writes]:
        _check_parents(workdir, path)
    for path in fp.deleted:
        full = workdir / path
        _safe_parent(workdir, path)
        try:
            if full.is_dir() and not full.is_symlink():
                continue
            os.unlink(full)
        except FileNotFoundError:
            pass
        _remove_empty_parents(workdir, path)
    written = 0
    swept: set[Path] = set()
    for path, (oid, mode) in sorted(fp.writes.items()):
        parent = _safe_parent(workdir, path)
        if parent not in swept:  # temp files of a restore that was killed half-way
            swept.add(parent)
            mine = f"{TEMP_PREFIX}{os.getpid()}-"
            with os.scandir(parent) as listing:
                for stale in listing:
                    if stale.name.startswith(TEMP_PREFIX) and not stale.name.startswith(mine):
                        (parent / stale.name).unlink(missing_ok=True)
        full = parent / path.rsplit("/", 1)[-1]
        blob = git[oid]
        if not isinstance(blob, pygit2.Blob) or blob.size > MAX_BLOB:
            raise UntrustedTree(f"refusing {path}: not a blob or larger than {MAX_BLOB} bytes")
        if full.is_dir() and not full.is_symlink():
            try:
                full.rmdir()
            except OSError as e:
                raise Refused(f"cannot restore {path}: a folder with other files is in the way",
                              hint=f"move {path}/ away and run the command again") from e
        tmp = parent / f"{TEMP_PREFIX}{os.getpid()}-{written}"  # not from the name: it may be NAME_MAX long
        if mode == _LINK:
            os.symlink(os.fsdecode(blob.data), tmp)
        else:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o777 if mode == _EXEC else 0o666)
            with os.fdopen(fd, "wb") as f:
                f.write(blob.data)
        os.replace(tmp, full)
        written += 1
    return written
