"""The watch journal: the paths of a worktree that may differ from HEAD, kept by `watch`.

``<git-common-dir>/oxide/worktrees/<id>/watch-journal`` is a JSON header line (the watcher's token and
the HEAD it was based on) then NUL-terminated paths: a full ``git status`` at the start, then every
path the file watcher saw change. A checkpoint hashes only these paths when the journal is valid
(its watcher alive, HEAD unchanged); otherwise it falls back to a full ``git status``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from oxide_git.git import status as status_mod
from oxide_git.git.repo import Repo, clean_git_env

PID_FILE = "watch.pid"


def watcher(repo: Repo) -> dict[str, Any] | None:
    """The running watcher's pid file, if its process is alive."""
    try:
        info = json.loads((repo.oxide_dir / PID_FILE).read_text())
        pid = int(info["pid"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if _dead(pid):
        return None
    return info if isinstance(info, dict) else None


def _dead(pid: int) -> bool:
    """A killed watcher nobody reaped: a zombie still answers ``kill(pid, 0)``. A container's
    first process often reaps no orphans, so the daemon, once killed, stays one."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False  # no /proc (macOS): kill(pid, 0) is all there is to know
    return state in (b"Z", b"X")


def head_oid(repo: Repo) -> str | None:
    """HEAD's commit id from the files (no git process): None when unborn."""
    try:
        text = (repo.git_dir / "HEAD").read_text().strip()
    except OSError:
        return None
    if not text.startswith("ref:"):
        return text
    from oxide_git.core.errors import OxideError
    from oxide_git.git.refs import read_raw

    try:  # a branch: shared by the worktrees, loose or packed
        oid = read_raw(repo.common_dir, text[4:].strip())
    except OxideError:
        return None
    return None if oid is None else oid.hex()


def _path(repo: Repo) -> Path:
    return repo.worktree_dir / "watch-journal"


def write_baseline(repo: Repo, token: str, paths: set[str]) -> None:
    repo.worktree_dir.mkdir(parents=True, exist_ok=True)
    tmp = _path(repo).with_name("watch-journal.tmp")
    header = json.dumps({"token": token, "head": head_oid(repo)})
    tmp.write_bytes(header.encode() + b"\n" + b"".join(os.fsencode(p) + b"\0" for p in sorted(paths)))
    os.replace(tmp, _path(repo))


def append(repo: Repo, paths: list[str]) -> None:
    with open(_path(repo), "ab") as f:
        f.write(b"".join(os.fsencode(p) + b"\0" for p in paths))


def drop(repo: Repo) -> None:
    _path(repo).unlink(missing_ok=True)


def read(repo: Repo) -> tuple[dict[str, Any], set[str]] | None:
    try:
        data = _path(repo).read_bytes()
    except OSError:
        return None
    head, _, rest = data.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        return None
    return header, {os.fsdecode(p) for p in rest.split(b"\0") if p}


def size(repo: Repo) -> int:
    try:
        return _path(repo).stat().st_size
    except OSError:
        return 0


def active(repo: Repo) -> bool:
    """True when a checkpoint can use the journal (cheap: two small file reads and a kill(0))."""
    w = watcher(repo)
    if w is None:
        return False
    got = read(repo)
    return got is not None and got[0].get("token") == w.get("token") and got[0].get("head") == head_oid(repo)


def status_from_journal(repo: Repo) -> status_mod.Status | None:
    """A Status made of the journal's paths (ignored ones dropped), or None to run git status."""
    if not active(repo):
        return None
    got = read(repo)
    if got is None:
        return None
    import pygit2

    git = repo.git
    tree = None if git.head_is_unborn else git.head.peel(pygit2.Commit).tree
    lookup = _Lookup(git, tree)
    paths: set[str] = set()
    for p in got[1]:
        full = repo.workdir / p
        if full.is_dir() and not full.is_symlink():
            for d, dirs, files in os.walk(full):
                dirs[:] = [x for x in dirs if x != ".git"]
                rel = os.path.relpath(d, repo.workdir).replace(os.sep, "/")
                paths.update(f"{rel}/{f}" for f in files)
        else:
            paths.add(p)
        obj = lookup.get(p)
        if isinstance(obj, pygit2.Tree):  # a tracked folder: every file in it may have gone
            paths.update(f"{p}/{sub}" for sub in _blobs(git, obj))
    st = status_mod.Status()
    new = {p for p in paths if lookup.get(p) is None}
    st.changed = paths - new
    st.untracked = new - _ignored(repo, sorted(new))
    return st


class _Lookup:
    """Paths of HEAD's tree, found by walking it into dicts: pygit2 (1.21) keeps a reference to
    the name of every lookup that misses (``tree[path]``), and an untracked path always misses; in
    the long-running `watch`, each checkpoint it served leaked ~60 KB that way."""

    def __init__(self, git: Any, tree: Any) -> None:
        self.git, self.root = git, tree
        self.dirs: dict[Any, dict[str, Any]] = {}

    def _entries(self, tree: Any) -> dict[str, Any]:
        got = self.dirs.get(tree.id)
        if got is None:
            got = self.dirs[tree.id] = {e.name: e for e in tree}
        return got

    def get(self, path: str) -> Any:
        """The blob or tree at ``path`` in HEAD, or None."""
        t = self.root
        if t is None:
            return None
        parts = path.split("/")
        for i, part in enumerate(parts):
            e = self._entries(t).get(part)
            if e is None:
                return None
            try:
                obj = self.git[e.id]
            except (KeyError, ValueError):
                return None
            if i == len(parts) - 1:
                return obj
            if e.type_str != "tree":
                return None
            t = obj
        return None


def _blobs(git: Any, tree: Any, prefix: str = "") -> list[str]:
    out = []
    for e in tree:
        if e.type_str == "tree":
            out += _blobs(git, git[e.id], f"{prefix}{e.name}/")
        else:
            out.append(prefix + e.name)
    return out


def _ignored(repo: Repo, paths: list[str]) -> set[str]:
    """Which of ``paths`` (none of them in HEAD) are ignored, as `git status` would leave them out.

    `git check-ignore` reads the whole index to tell a tracked path from an ignored one (575 of
    the 655 ms of a watch-assisted checkpoint at 1M files); ``--no-index`` reads only the ignore
    files. What it says is ignored may still be tracked: added to the index (`git add -f`) and not
    committed yet. Those are the index's paths that HEAD lacks (``_staged_new``), read only when
    some path came out ignored, and once per version of the index."""
    if not paths:
        return set()
    r = subprocess.run(["git", "check-ignore", "--stdin", "-z", "--no-index"], cwd=repo.workdir,
                       input=b"".join(os.fsencode(p) + b"\0" for p in paths),
                       capture_output=True, env=clean_git_env())
    ignored = {os.fsdecode(p) for p in r.stdout.split(b"\0") if p}
    if not ignored:
        return ignored
    staged = _staged_new(repo)
    if staged is None:  # git could not say: ask check-ignore with the index, as git status would
        r = subprocess.run(["git", "check-ignore", "--stdin", "-z"], cwd=repo.workdir,
                           input=b"".join(os.fsencode(p) + b"\0" for p in sorted(ignored)),
                           capture_output=True, env=clean_git_env())
        return {os.fsdecode(p) for p in r.stdout.split(b"\0") if p}
    return ignored - staged


_STAGED: dict[str, tuple[tuple[int, int, int], frozenset[str]]] = {}  # index file -> (its stat, paths)


def _staged_new(repo: Repo) -> frozenset[str] | None:
    """The paths in the index that HEAD does not hold (added, not committed), kept per index file
    while its size, mtime and inode stay the same (a watcher asks for every checkpoint)."""
    index = str(repo.git_dir / "index")
    try:
        st = os.stat(index)
    except OSError:
        return frozenset()
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    got = _STAGED.get(index)
    if got is not None and got[0] == key:
        return got[1]
    cmd = ["git", "diff", "--cached", "--name-only", "--no-renames", "--diff-filter=A", "-z"]
    if head_oid(repo) is None:  # no commit yet: every path in the index is new
        cmd = ["git", "ls-files", "-z", "--cached"]
    r = subprocess.run(cmd, cwd=repo.workdir, capture_output=True, env=clean_git_env())
    if r.returncode != 0:
        return None
    paths = frozenset(os.fsdecode(p) for p in r.stdout.split(b"\0") if p)
    _STAGED[index] = (key, paths)
    return paths
