"""Writing session logs: the layout of a log commit, and the one path that writes it.

A log commit's tree holds ``session.msgpack`` and ``messages/<bucket>/<seq>.msgpack`` with
``bucket = seq // 256``. Writing N messages rewrites their bucket trees and the root: O(N), not
O(session). A fork's first commit has the source's log commit as parent; a conversation rewind is
a commit whose tree drops the later messages, the old tip staying in history.

Everything here goes through ``rawgit`` (no pygit2): an import of a few new lines, a hook's
append, must not pay pygit2's start-up. Reading a whole log (show, resume) is ``sessionlog``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oxide_git.core import codec
from oxide_git.core.errors import OxideError
from oxide_git.core.log_layout import BUCKET, MESSAGES_DIR, SESSION_FILE, bucket_name, entry_name  # noqa: F401 - the layout, named here as before
from oxide_git.core.model import Message, Session, message_id_for
from oxide_git.git import packwriter, refs
from oxide_git.git.rawgit import (
    BLOB,
    BLOB_MODE,
    COMMIT,
    TREE,
    TREE_MODE,
    Objects,
    commit_tree,
    format_commit,
    format_tree,
    object_id,
    parse_tree,
)

PACK_MIN = 64  # messages written at once from which they go to a pack, not loose files
IDENTITY = ("git oxide", "oxide@localhost")
_SESSION = SESSION_FILE.encode()
_MESSAGES = MESSAGES_DIR.encode()


def seq_of(name: str | bytes | None) -> int:
    """The number a log entry or bucket is named by; a log from elsewhere may name it anything."""
    text = name.decode("utf-8", "replace") if isinstance(name, bytes) else (name or "")
    try:
        return int(text.split(".")[0])
    except ValueError:
        raise OxideError(f"session log entry {text!r} is not a message number") from None


@dataclass(frozen=True)
class Tip:
    """A session log's commit as the write path sees it."""

    session: Session
    commit: bytes  # raw ids
    tree: bytes
    count: int


def _batch(objects: Objects) -> Any:
    """``objects`` when it is a batch (``store.batch.FileBatch``: it packs what it holds, and moves
    the refs when it is stored), else None. A flag, not isinstance: the batch builds on this module."""
    return objects if objects.batched else None


def tip(objects: Objects, common_dir: Path, session_id: str) -> Tip | None:
    """The session's log at its ref, or None if there is no such session."""
    name = refs.session_ref(session_id)
    batch = _batch(objects)
    oid = batch.ref(name) if batch is not None else refs.read_raw(common_dir, name)
    return None if oid is None else tip_at(objects, oid)


def tip_at(objects: Objects, commit: bytes) -> Tip:
    tree = commit_tree(objects.read_kind(commit, COMMIT))
    root = _entries(objects, tree)
    if _SESSION not in root:
        raise OxideError(f"session log {commit.hex()} has no {SESSION_FILE}")
    session = codec.decode_session(objects.read_kind(root[_SESSION][1], BLOB))
    return Tip(session, commit, tree, _count(objects, root))


def count_of(objects: Objects, commit: bytes) -> int:
    """How many messages the log at ``commit`` holds."""
    return _count(objects, _entries(objects, commit_tree(objects.read_kind(commit, COMMIT))))


def _entries(objects: Objects, tree: bytes | None) -> dict[bytes, tuple[bytes, bytes]]:
    """A tree's entries by name: ``{name: (mode, id)}``."""
    if tree is None:
        return {}
    return {name: (mode, oid) for mode, name, oid in parse_tree(objects.read_kind(tree, TREE))}


def _subtree(objects: Objects, entries: dict[bytes, tuple[bytes, bytes]], name: bytes
             ) -> dict[bytes, tuple[bytes, bytes]]:
    entry = entries.get(name)
    return _entries(objects, entry[1]) if entry is not None and entry[0] == TREE_MODE else {}


def _count(objects: Objects, root: dict[bytes, tuple[bytes, bytes]]) -> int:
    buckets = _subtree(objects, root, _MESSAGES)
    if not buckets:
        return 0
    last = _subtree(objects, buckets, max(buckets))
    return seq_of(max(last)) + 1 if last else 0


def blobs_at(objects: Objects, tree: bytes, seqs: Iterable[int]) -> Iterator[tuple[int, bytes]]:
    """The stored messages at ``seqs`` (ascending) of the log tree ``tree``, encoded; the seqs
    with no message are skipped. Each bucket tree is read once."""
    buckets = _subtree(objects, _entries(objects, tree), _MESSAGES)
    name, entries = None, {}
    for seq in seqs:
        if bucket_name(seq).encode() != name:
            name = bucket_name(seq).encode()
            entries = _subtree(objects, buckets, name)
        entry = entries.get(entry_name(seq).encode())
        if entry is not None:
            yield seq, objects.read_kind(entry[1], BLOB)


def _blob_ids(objects: Objects, blobs: list[bytes], ids: list[bytes] | None = None) -> list[bytes]:
    """Store message blobs: a batch as one pack (imports), a few as loose objects (appends).
    ``ids``: theirs, already worked out (by an import's parser process)."""
    batch = _batch(objects)
    if batch is not None:  # a batch packs all it holds at once
        if ids is not None:
            return [batch.write_known(BLOB, b, oid) for b, oid in zip(blobs, ids, strict=True)]
        return [batch.write(BLOB, b) for b in blobs]
    if len(blobs) < PACK_MIN:
        return [objects.write(BLOB, b) for b in blobs]
    return packwriter.write_pack(Path(objects.dir), [(BLOB, b) for b in blobs], ids)


def _changed(objects: Objects, buckets: dict[bytes, tuple[bytes, bytes]], blobs: Mapping[int, bytes],
             truncate_at: int | None, ids: Mapping[int, bytes] | None = None) -> Mapping[int, bytes]:
    """``blobs`` without the messages the tree already holds, byte for byte: a source read whole
    again (a database) re-places every message, and each import wrote them all again, a pack of
    the whole session per change."""
    if not buckets or not blobs or truncate_at is not None:
        return blobs
    out: dict[int, bytes] = {}
    name, entries = None, {}
    for seq, data in blobs.items():
        if bucket_name(seq).encode() != name:
            name = bucket_name(seq).encode()
            entries = _subtree(objects, buckets, name)
        old = entries.get(entry_name(seq).encode())
        if old is None or old[1] != (ids[seq] if ids is not None else object_id(BLOB, data)) \
                or not objects.has(old[1]):
            out[seq] = data
    return out


def build_tree(
    objects: Objects,
    base: bytes | None,
    session: Session,
    blobs: Mapping[int, bytes],
    truncate_at: int | None = None,
    ids: Mapping[int, bytes] | None = None,
) -> bytes:
    """The tree ``base`` with ``session`` written, the encoded messages ``blobs`` placed at their
    seqs (``ids``: their object ids, when known) and seqs >= truncate_at dropped."""
    root = _entries(objects, base)
    root[_SESSION] = (BLOB_MODE, objects.write(BLOB, codec.encode_session(session)))
    buckets = _subtree(objects, root, _MESSAGES)
    blobs = _changed(objects, buckets, blobs, truncate_at, ids)
    oids = dict(zip(blobs, _blob_ids(objects, list(blobs.values()),
                                     None if ids is None else [ids[q] for q in blobs]), strict=True))
    by_bucket: dict[bytes, list[int]] = {}
    for seq in blobs:
        by_bucket.setdefault(bucket_name(seq).encode(), []).append(seq)
    cut = bucket_name(truncate_at).encode() if truncate_at is not None else None
    if cut is not None:
        for name in list(buckets):
            if name > cut:
                del buckets[name]
            elif name == cut:
                by_bucket.setdefault(name, [])
    for name, seqs in sorted(by_bucket.items()):
        entries = _subtree(objects, buckets, name)
        if name == cut:
            entries = {n: e for n, e in entries.items() if seq_of(n) < truncate_at}  # type: ignore[operator]
        for seq in seqs:
            entries[entry_name(seq).encode()] = (BLOB_MODE, oids[seq])
        if entries:
            buckets[name] = (TREE_MODE, objects.write(TREE, format_tree(entries)))
        else:
            buckets.pop(name, None)
    if buckets:
        root[_MESSAGES] = (TREE_MODE, objects.write(TREE, format_tree(buckets)))
    else:
        root.pop(_MESSAGES, None)
    return objects.write(TREE, format_tree(root))


def with_ids(session_id: str, puts: Mapping[int, Message]) -> dict[int, Message]:
    """The messages by seq, each without an id given its deterministic one."""
    return {q: m if m.id else m.with_id(message_id_for(session_id, q, m.created_at))
            for q, m in puts.items()}


def commit(
    objects: Objects,
    common_dir: Path,
    session: Session,
    blobs: Mapping[int, bytes],
    *,
    now_ms: int,
    summary: str,
    truncate_at: int | None = None,
    base: Tip | None = None,
    expected: bytes | None = None,
    parents: list[bytes] | None = None,
    ids: Mapping[int, bytes] | None = None,
) -> bytes | None:
    """Write a log commit on ``refs/oxide/sessions/<session.id>`` if anything changed (``ids``:
    the blobs' object ids, when known).

    ``base`` is the commit whose tree is modified (the tip, or a fork's source); ``expected`` the
    ref's current value (compare-and-swap; RefMoved when another writer moved it). Returns the
    new tip, or None when the tree came out identical to the tip's (idempotent imports).
    """
    tree = build_tree(objects, base.tree if base is not None else None, session, blobs, truncate_at, ids)
    if base is not None and expected == base.commit and base.tree == tree:
        return None
    if parents is None:
        parents = [expected] if expected is not None else []
    text = f"{summary}\n\nOxide-Session: {session.id}\n"
    oid = objects.write(COMMIT, format_commit(tree, parents, *IDENTITY, now_ms // 1000, text))
    batch = _batch(objects)
    if batch is not None:
        batch.move_ref(refs.session_ref(session.id), expected, oid)  # moved when the batch is stored
    else:
        refs.swap(common_dir, refs.session_ref(session.id), expected, oid)
    return oid
