"""What a blame looks up in a repository's objects (read through ``git.objects``), and what is
worked out of them kept in ``blame.memo`` by object id: a commit's tree, time and first parent,
the blob at a path of a tree, a note's checkpoints and sessions. Refs (the notes ref, HEAD, a
session log's ref) are read from their files every time: they move.

Objects are read as git reads them, without hashing each again to check its name (as the blame
did through libgit2 with its strict check off: a blame reads every version of the file).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oxide_git.core.errors import OxideError
from oxide_git.git import commits, objects, refs

if TYPE_CHECKING:
    from oxide_git.blame.memo import Memo

_UNKEYED = object()


class Lookups:
    """Lookups in the objects of one repository (its shared gitdir), memoised in ``memo``."""

    def __init__(self, common_dir: str, memo: Memo) -> None:
        self.common = common_dir
        self.memo = memo
        self._store: objects.Objects | None = None
        self._trees: dict[str, dict[bytes, tuple[bytes, bytes]] | None] = {}
        self._notes: Any = _UNKEYED
        self._logs: dict[str, Any] = {}

    @property
    def store(self) -> objects.Objects:
        if self._store is None:
            self._store = objects.Objects(Path(self.common, "objects"))
        return self._store

    def _read(self, oid: str) -> tuple[int, bytes] | None:
        """(type, content), tags peeled; None when the object is missing."""
        try:
            kind, data = self.store.read_unchecked(bytes.fromhex(oid))
            for _ in range(8):
                if kind != objects.TAG:
                    break
                kind, data = self.store.read_unchecked(bytes.fromhex(data[7:47].decode("ascii")))
        except objects.ObjectMissing:
            return None
        except ValueError as e:
            raise OxideError(f"object {oid} cannot be read: {e}") from None
        return kind, data

    def blob(self, oid: str) -> bytes:
        got = self._read(oid)
        if got is None:
            raise OxideError(f"object {oid} is missing from the object store")
        return got[1]

    def commit(self, oid: str) -> tuple[str, int, str | None] | None:
        """(tree, committer time in seconds, first parent) of a commit; None if it is not one."""
        got = self.memo.get("commits", oid)
        if got is not None:
            return got if got else None
        obj = self._read(oid)
        out: tuple[str, int, str | None] | None = None
        if obj is not None and obj[0] == objects.COMMIT:
            out = _commit_fields(obj[1])
        self.memo.put("commits", oid, out or ())
        return out

    def _tree(self, oid: str) -> dict[bytes, tuple[bytes, bytes]] | None:
        """A tree's entries by name ((mode, raw id)); a commit's tree; None when missing."""
        if oid in self._trees:
            return self._trees[oid]
        obj = self._read(oid)
        if obj is not None and obj[0] == objects.COMMIT:
            obj = self._read(commits.commit_tree(obj[1]).hex())
        out = None
        if obj is not None and obj[0] == objects.TREE:
            out = {name: (mode, raw) for mode, name, raw in objects.parse_tree(obj[1])}
        self._trees[oid] = out
        return out

    def lookup(self, tree: str, path: str) -> tuple[bytes, str] | None:
        """(mode, id) of the entry at ``path`` (``a/b/c``) under ``tree``; None if none."""
        cur: str | None = tree
        parts = path.encode("utf-8", "surrogateescape").split(b"/")
        for k, name in enumerate(parts):
            entries = self._tree(cur) if cur is not None else None
            if entries is None or name not in entries:
                return None
            mode, raw = entries[name]
            if k == len(parts) - 1:
                return mode, raw.hex()
            cur = raw.hex() if mode == objects.TREE_MODE else None
        return None

    def blob_at(self, tree: str, path: str) -> str | None:
        """The id of the file (a blob: regular, executable or symlink) at ``path`` in ``tree``."""
        key = (tree, path)
        got = self.memo.get("paths", key)
        if got is not None:
            return got or None
        entry = self.lookup(tree, path)
        is_file = entry is not None and entry[0] not in (objects.TREE_MODE, objects.GITLINK_MODE)
        out = entry[1] if entry is not None and is_file else None
        self.memo.put("paths", key, out or "")
        return out

    def short_id(self, oid: str, length: int = 7) -> str | None:
        """``oid`` abbreviated as libgit2 does it (``length`` hex digits, more while another
        object shares them); None when there is no such object."""
        raw = bytes.fromhex(oid)
        if len(raw) != 20 or raw not in self.store.matching(raw, 40):
            return None
        while length < 40 and len(self.store.matching(raw, length)) > 1:
            length += 1
        return oid[:length]

    # refs --------------------------------------------------------------------------------------

    def ref(self, name: str) -> str | None:
        """The id a ref names (its file, else packed-refs); None when there is no such ref."""
        raw = refs.read_raw(Path(self.common), name)
        return raw.hex() if raw is not None else None

    def head(self, git_dir: str) -> str | None:
        """The commit HEAD of the worktree at ``git_dir`` names; None when unborn."""
        try:
            with open(os.path.join(git_dir, "HEAD"), "rb") as f:
                text = f.read().strip()
        except OSError as e:
            raise OxideError(f"cannot read HEAD: {e.strerror}") from None
        if not text.startswith(b"ref:"):
            return text.decode("ascii", "replace")
        name = text[4:].strip().decode("utf-8", "surrogateescape")
        if name.startswith(("refs/bisect/", "refs/worktree/", "refs/rewritten/")):
            raw = refs.read_raw(Path(git_dir), name)  # per-worktree refs
            return raw.hex() if raw is not None else None
        return self.ref(name)

    def notes_tree(self) -> str | None:
        """The commit refs/notes/oxide names (its tree read), or None: no notes."""
        if self._notes is _UNKEYED:
            tip = self.ref(refs.NOTES)  # notes.NOTES_REF (notes.py imports json and re)
            if tip is not None:
                self._tree(tip)
            self._notes = tip
        return self._notes

    def note(self, commit: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(checkpoints, sessions) of ``commit``'s note on refs/notes/oxide (empty: no note)."""
        if self.notes_tree() is None:
            return (), ()
        for path in (commit, f"{commit[:2]}/{commit[2:]}", f"{commit[:2]}/{commit[2:4]}/{commit[4:]}"):
            entry = self.lookup(self._notes, path)
            if entry is None:
                continue
            oid = entry[1]
            got = self.memo.get("notes", oid)
            if got is None:
                from oxide_git.store.notes import parse_note

                note = parse_note(self.blob(oid).decode("utf-8", "replace"))
                got = (tuple(note["checkpoints"]), tuple(note["sessions"]))
                self.memo.put("notes", oid, got)
            return got
        return (), ()

    # session logs ------------------------------------------------------------------------------

    def message_blob(self, session_id: str, seq: int) -> str | None:
        """The blob id of message ``seq`` of a session's log at its ref's tip; None if it has none."""
        from oxide_git.core.log_layout import MESSAGES_DIR, SESSION_FILE, bucket_name, entry_name

        if session_id not in self._logs:
            tip = self.ref(refs.session_ref(session_id))
            root = self._tree(tip) if tip is not None else None
            msgs = None
            if root is not None:
                if SESSION_FILE.encode() not in root:  # as ``sessionlog.load`` says of it
                    raise OxideError(f"session log {tip} has no {SESSION_FILE}")
                mode, raw = root.get(MESSAGES_DIR.encode(), (b"", b""))
                msgs = raw.hex() if mode == objects.TREE_MODE else None
            self._logs[session_id] = msgs
        msgs = self._logs[session_id]
        entries = self._tree(msgs) if msgs is not None else None
        bucket = entries.get(bucket_name(seq).encode()) if entries is not None else None
        if bucket is None or bucket[0] != objects.TREE_MODE:
            return None
        entries = self._tree(bucket[1].hex())
        entry = entries.get(entry_name(seq).encode()) if entries is not None else None
        return entry[1].hex() if entry is not None and entry[0] != objects.TREE_MODE else None


def _commit_fields(data: bytes) -> tuple[str, int, str | None] | None:
    try:
        c = commits.parse_commit(data)
    except OxideError:
        return None
    return c.tree.hex(), c.time, c.parents[0].hex() if c.parents else None
