"""Checkpoints: the whole worktree as a plain commit on ``refs/oxide/checkpoints/...``.

A checkpoint's tree is the worktree (tracked files plus untracked files that are not ignored), its
parent the worktree's HEAD, as ``git stash`` does, so ``git show <checkpoint>`` shows what changed.
It is built from HEAD's tree by rewriting only the trees on the paths that one ``git status`` pass
reports, so its cost is that pass plus O(changed files). The user's index, HEAD, branches and files
are only read. A small per-worktree stat cache (``<git-common-dir>/oxide/worktrees/<id>/statcache``)
keeps the blob ids of dirty files so unchanged ones are not hashed again by the next checkpoint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import posixpath
import stat as statmod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from oxide_git.core import codec
from oxide_git.core.errors import OxideError
from oxide_git.git import refs
from oxide_git.git import status as status_mod
from oxide_git.git.objects import BLOB, Objects
from oxide_git.git.repo import Repo, open_git
from oxide_git.store.logwrite import signature_at
from oxide_git.store.trees import EXEC_MODE, FILE_MODE, LINK_MODE, Entry, apply_changes, empty_tree

DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024
DEFAULT_MAX_UNTRACKED_FILES = 10_000  # a stray node_modules outside .gitignore is left out
TURN_END = "turn-end"  # the kind of the checkpoint that closes an agent's turn (its Stop hook)
KINDS = ("prompt", "manual", "pre-commit", "before-rewind", "watch", TURN_END)
_RACY_NS = 2_000_000_000

# A checkpoint's twin as a push sends it (``checkpoint_screen``): the real checkpoint's id, the
# paths it redacted or withheld, one JSON record of each.
TWIN_OF = "Oxide-Checkpoint"
REDACTED = "Oxide-Redacted"
REDACTED_FILE = "Oxide-Redacted-File"


@dataclass(frozen=True)
class Checkpoint:
    id: str
    ref: str
    kind: str
    session_id: str | None
    message_id: str | None
    worktree: str
    worktree_path: str
    branch: str
    head: str | None
    tree: str
    files_changed: int
    created_at: int
    text: str = ""
    skipped: list[dict[str, Any]] = field(default_factory=list)
    reused: bool = False  # the previous checkpoint already held this state: nothing was written

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "ref": self.ref, "kind": self.kind, "session_id": self.session_id,
            "message_id": self.message_id, "worktree": self.worktree,
            "worktree_path": self.worktree_path, "branch": self.branch, "head": self.head,
            "tree": self.tree, "files_changed": self.files_changed,
            "created_at": self.created_at, "message": self.text, "skipped": self.skipped,
        }


def _load_statcache(repo: Repo) -> dict[str, list[Any]]:
    try:
        data = codec.unpack_state((repo.worktree_dir / "statcache").read_bytes())
    except (OSError, OxideError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_statcache(repo: Repo, cache: Mapping[str, list[Any]]) -> None:
    repo.worktree_dir.mkdir(parents=True, exist_ok=True)
    path = repo.worktree_dir / "statcache"
    tmp = path.with_name(f"statcache.{os.getpid()}.tmp")
    tmp.write_bytes(codec.pack_state(dict(cache)))
    os.replace(tmp, path)


class _Filters:
    """Whether git would run a path through attribute-driven filters (CRLF, LFS, ident...).

    libgit2's filtered blob creation loads the whole index to look for .gitattributes on first
    use (~50 ms on 100,000 files); when no attributes file and no eol setting can apply to a
    path, its bytes are stored as they are, exactly as `git add` would store them.
    """

    def __init__(self, git: pygit2.Repository, repo: Repo) -> None:
        cfg = git.config
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        self.workdir = str(repo.workdir)
        self.everywhere = (
            any(k in cfg for k in ("core.autocrlf", "core.eol", "core.attributesFile"))
            or (repo.common_dir / "info" / "attributes").exists()
            or os.path.exists(os.path.join(xdg, "git", "attributes"))
        )
        self.dirs: dict[str, bool] = {}

    def apply(self, path: str) -> bool:
        if self.everywhere:
            return True
        d = posixpath.dirname(path)
        while True:
            hit = self.dirs.get(d)
            if hit is None:
                hit = self.dirs[d] = os.path.exists(os.path.join(self.workdir, d, ".gitattributes"))
            if hit:
                return True
            if not d:
                return False
            d = posixpath.dirname(d)


def _hash(git: pygit2.Repository, objects: Objects, filters: _Filters, path: str, full: str) -> bytes:
    if filters.apply(path):  # the filters git would run (libgit2 runs them as git does)
        return git.create_blob_fromworkdir(path).raw
    with open(full, "rb") as f:
        return objects.write(BLOB, f.read())


def _entry_for(
    git: pygit2.Repository, objects: Objects, repo: Repo, path: str, untracked: bool, max_size: int,
    cache: dict[str, list[Any]], new_cache: dict[str, list[Any]], now_ns: int,
    skipped: list[dict[str, Any]], filters: _Filters,
) -> Entry | str:
    """The blob and mode of ``path`` as it is in the worktree; None when absent; 'keep' to leave."""
    full = os.path.join(repo.workdir, path)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None
    except OSError as e:
        skipped.append({"path": path, "reason": f"unreadable: {e.strerror}"})
        return "keep"
    if statmod.S_ISDIR(st.st_mode):
        if untracked:
            skipped.append({"path": path, "reason": "nested repository"})
        return "keep"
    if statmod.S_ISLNK(st.st_mode):
        return objects.write(BLOB, os.fsencode(os.readlink(full))), LINK_MODE
    if not statmod.S_ISREG(st.st_mode):
        return "keep"
    if untracked and st.st_size > max_size:
        skipped.append({"path": path, "reason": f"larger than {max_size} bytes ({st.st_size})"})
        return None
    mode = EXEC_MODE if st.st_mode & 0o111 else FILE_MODE
    key = [st.st_size, st.st_mtime_ns, st.st_ino, mode]
    hit = cache.get(path)
    if hit is not None and hit[:4] == key:
        oid = bytes.fromhex(hit[4])
    else:
        try:
            oid = _hash(git, objects, filters, path, full)
        except (pygit2.GitError, OSError) as e:
            skipped.append({"path": path, "reason": f"unreadable: {e}"})
            return "keep"
    if now_ns - st.st_mtime_ns > _RACY_NS:
        new_cache[path] = [*key, oid.hex()]
    return oid, mode


def _changed_since(full: str, since_ns: int) -> bool:
    """Whether the file at ``full`` was written, replaced or removed after ``since_ns``."""
    try:
        st = os.lstat(full)
    except OSError:
        return True
    return max(st.st_mtime_ns, st.st_ctime_ns) > since_ns


def _crowded_untracked_dirs(base: pygit2.Tree | None, untracked: set[str], limit: int) -> dict[str, int]:
    """Untracked folders (absent from HEAD) holding more than ``limit`` untracked files."""
    if len(untracked) <= limit:
        return {}
    known: dict[str, bool] = {}

    def in_head(folder: str) -> bool:
        if folder not in known:
            try:
                known[folder] = base is not None and base[folder] is not None
            except KeyError:
                known[folder] = False
        return known[folder]

    counts: dict[str, int] = {}
    for path in untracked:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if not in_head(folder):
                counts[folder] = counts.get(folder, 0) + 1
                break
    return {f: n for f, n in counts.items() if n > limit}


def _under(path: str, folders: Mapping[str, int]) -> bool:
    parts = path.split("/")
    return any("/".join(parts[:i]) in folders for i in range(1, len(parts)))


@contextlib.contextmanager
def scratch(repo: Repo) -> Iterator[Repo]:
    """``repo`` whose object writes go to a temporary folder (reads see the real objects too):
    a dry run builds its snapshot there, and the repository gets no object, dangling or not."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="oxide-dry-run-") as tmp:
        odb = pygit2.Odb()
        odb.add_backend(pygit2.OdbBackendLoose(tmp, 1, False), 10)  # writes land here only
        odb.add_disk_alternate(str(repo.common_dir / "objects"))  # alternates are never written
        view = Repo(repo.workdir, repo.git_dir, repo.common_dir)
        git = open_git(repo.git_dir)
        git.set_odb(odb)
        os.makedirs(os.path.join(tmp, "info"))
        with open(os.path.join(tmp, "info", "alternates"), "w", encoding="utf-8") as f:
            f.write(f"{repo.common_dir / 'objects'}\n")  # read there, written here
        view.__dict__["git"] = git  # the cached_properties' slots
        view.__dict__["objects"] = Objects(Path(tmp))
        yield view


def take(
    repo: Repo,
    *,
    kind: str,
    now_ms: int,
    session_id: str | None = None,
    message_id: str | None = None,
    text: str = "",
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    status: status_mod.Status | None = None,
    keep: bool = True,
    max_untracked_files: int = DEFAULT_MAX_UNTRACKED_FILES,
    parent: str | None = None,
    previous: Mapping[str, Any] | None = None,
    as_of: tuple[str, int] | None = None,
) -> Checkpoint:
    """Snapshot the worktree into a new checkpoint commit and ref; returns it.

    With ``keep=False`` (a dry run) no commit and no ref is written: the result's id is empty.
    ``previous`` (a checkpoint row: ``id``, ``tree``, ``head``, ``ref``): when the new state has
    the same tree and parent, that checkpoint is returned (``reused``) and nothing is written.
    ``parent`` (default: HEAD now) is the commit the snapshot is shown against, e.g. the HEAD a
    pre-commit hook saw; the tree is still built from the current HEAD and ``status``.
    ``as_of`` (a tree id, a time in ns): the worktree as it was at that moment, taken later (the
    pre-commit hook's: the tree it commits, written then): built from that tree, a file changed
    since (its mtime or ctime later, or gone) keeps that tree's version, the others are read.
    """
    if status is None:
        status = status_mod.run(repo.workdir)
    git, objects = repo.git, repo.objects
    try:
        head = None if git.head_is_unborn else git.head.peel(pygit2.Commit)
    except pygit2.GitError as e:
        raise OxideError(f"cannot read HEAD: {e}") from e
    cache = _load_statcache(repo)
    filters = _Filters(git, repo)
    new_cache: dict[str, list[Any]] = {}
    skipped: list[dict[str, Any]] = []
    changes: dict[str, Entry] = {}
    now_ns = now_ms * 1_000_000
    base_tree = head.tree if head is not None else None
    paths = status.paths
    since_ns = None
    if as_of is not None:
        then = git[as_of[0]].peel(pygit2.Tree)
        if base_tree is not None and base_tree.id != then.id:  # HEAD moved since: its changes too
            paths = paths | {p for d in then.diff_to_tree(base_tree).deltas
                             for p in (d.old_file.path, d.new_file.path)}
        base_tree, since_ns = then, as_of[1]
    crowded = _crowded_untracked_dirs(base_tree, status.untracked, max_untracked_files)
    for folder, count in sorted(crowded.items()):
        skipped.append({"path": folder + "/",
                        "reason": f"untracked folder with {count} files (over {max_untracked_files})"})
    for path in sorted(paths - status.submodules):
        if crowded and _under(path, crowded):
            continue
        if since_ns is not None and _changed_since(os.path.join(repo.workdir, path), since_ns):
            continue  # the tree's version: the file as it was then
        try:
            path.encode()
        except UnicodeEncodeError:  # git allows any bytes, a tree entry of pygit2 only UTF-8
            readable = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            skipped.append({"path": readable, "reason": "file name is not valid UTF-8"})
            continue
        entry = _entry_for(git, objects, repo, path, path in status.untracked, max_file_size, cache,
                           new_cache, now_ns, skipped, filters)
        if not isinstance(entry, str):
            changes[path] = entry
    base = base_tree.id.raw if base_tree is not None else None
    tree = (apply_changes(objects, base, changes) if changes else base) or empty_tree(objects)
    if keep and new_cache != cache:  # a dry run's blobs may live in a scratch store only
        _save_statcache(repo, new_cache)
    branch = repo.branch()
    trailers = [
        ("Oxide-Kind", kind),
        ("Oxide-Session", session_id or "none"),
        ("Oxide-Message", message_id or "none"),
        ("Oxide-Worktree", repo.worktree_id),
        ("Oxide-Worktree-Path", str(repo.workdir)),
        ("Oxide-Branch", branch),
        ("Oxide-Files-Changed", str(len(changes))),
        ("Oxide-Time", str(now_ms)),
        *[("Oxide-Skipped", json.dumps(s, ensure_ascii=False)) for s in skipped],
    ]
    title = text.strip().splitlines()[0] if text.strip() else f"{kind} checkpoint"
    body = f"oxide: {title}\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers)
    parent_commit = git[parent].peel(pygit2.Commit) if parent else head
    parent_id = str(parent_commit.id) if parent_commit else None
    if previous is not None and previous.get("tree") == tree.hex() and previous.get("head") == parent_id:
        old = git.get(str(previous["id"]))
        if isinstance(old, pygit2.Commit):
            return dataclasses.replace(parse_commit(old, str(previous["ref"])), reused=True)
    if not keep:
        return Checkpoint(
            id="", ref="", kind=kind, session_id=session_id, message_id=message_id,
            worktree=repo.worktree_id, worktree_path=str(repo.workdir), branch=branch, head=parent_id,
            tree=tree.hex(), files_changed=len(changes), created_at=now_ms, text=text, skipped=skipped)
    parents = [parent_commit.id.raw] if parent_commit else []
    oid = pygit2.Oid(raw=objects.write_commit(tree, parents, body, signature_at(now_ms)))
    ref = refs.checkpoint_ref(session_id or "manual", str(oid))
    refs.update(git, {ref: (None, oid)}, f"oxide: {kind} checkpoint")
    return Checkpoint(
        id=str(oid), ref=ref, kind=kind, session_id=session_id, message_id=message_id,
        worktree=repo.worktree_id, worktree_path=str(repo.workdir), branch=branch,
        head=str(parent_commit.id) if parent_commit else None, tree=tree.hex(), files_changed=len(changes),
        created_at=now_ms, text=text, skipped=skipped,
    )


def parse_commit(commit: pygit2.Commit, ref: str) -> Checkpoint:
    """A checkpoint read back from its commit (trailers are the record)."""
    fields: dict[str, list[str]] = {}
    lines = commit.message.splitlines()
    title = lines[0].removeprefix("oxide: ") if lines else ""
    for line in lines[1:]:
        k, sep, v = line.partition(": ")
        if sep and k.startswith("Oxide-"):
            fields.setdefault(k, []).append(v)

    def one(k: str) -> str | None:
        v = fields.get(k, [None])[0]
        return None if v in (None, "none") else v

    skipped = []
    for s in fields.get("Oxide-Skipped", []):
        try:
            skipped.append(json.loads(s))
        except ValueError:
            skipped.append({"path": s, "reason": "unknown"})
    for s in fields.get(REDACTED_FILE, []):  # a twin: what its push took out is not here
        try:
            d = json.loads(s)
        except ValueError:
            continue
        if isinstance(d, dict) and isinstance(d.get("path"), str) and d["path"]:
            skipped.append({"path": d["path"], "redacted": str(d.get("action")),
                            "reason": redacted_reason(d)})
    kind = one("Oxide-Kind") or "manual"
    return Checkpoint(
        id=one(TWIN_OF) or str(commit.id), ref=ref, kind=kind, session_id=one("Oxide-Session"),
        message_id=one("Oxide-Message"), worktree=one("Oxide-Worktree") or "main",
        worktree_path=one("Oxide-Worktree-Path") or "", branch=one("Oxide-Branch") or "",
        head=str(commit.parent_ids[0]) if commit.parent_ids else None,
        tree=str(commit.tree_id), files_changed=int(one("Oxide-Files-Changed") or 0),
        created_at=int(one("Oxide-Time") or commit.commit_time * 1000),
        text="" if title == f"{kind} checkpoint" else title, skipped=skipped,
    )


def redacted_reason(d: Mapping[str, Any]) -> str:
    """Why a push took a file out of a checkpoint, from its ``Oxide-Redacted-File`` record."""
    if d.get("pattern"):
        return f"withheld when it was pushed: a secret by its name ({d['pattern']})"
    rules = ", ".join(map(str, d.get("rules") or {})) or "a secret"
    return f"{d.get('action', 'redacted')} when it was pushed ({rules})"
