"""Writing session logs: the layout of a log commit, and the one path that writes it.

A log commit's tree holds ``session.msgpack`` and ``messages/<bucket>/<seq>.msgpack`` with
``bucket = seq // 256``. Writing N messages rewrites their bucket trees and the root: O(N), not
O(session). A fork's first commit has the source's log commit as parent; a conversation rewind is
a commit whose tree drops the later messages, the old tip staying in history.

Everything here goes through ``git.objects`` (no pygit2): an import of a few new lines, a hook's
append, must not pay pygit2's start-up. The tip a write builds on is read by ``logread``, the one
reader of a log.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from oxide_git.core import codec
from oxide_git.core.log_layout import MESSAGES_DIR, SESSION_FILE, bucket_name, entry_name
from oxide_git.core.model import Message, Session, message_id_for
from oxide_git.git import packwriter, refs
from oxide_git.git.commits import signature
from oxide_git.git.objects import (
    BLOB,
    BLOB_MODE,
    TREE,
    TREE_MODE,
    Objects,
    format_tree,
    object_id,
)
from oxide_git.store import logread

PACK_MIN = 64  # messages written at once from which they go to a pack, not loose files
IDENTITY = ("git oxide", "oxide@localhost")


def signature_at(now_ms: int) -> bytes:
    """git oxide as the author and committer of what it writes at ``now_ms`` (a log, a checkpoint,
    a tombstone, a merge of what a pull brought)."""
    return signature(*IDENTITY, now_ms // 1000)
_SESSION = SESSION_FILE.encode()
_MESSAGES = MESSAGES_DIR.encode()


def _blob_ids(objects: Objects, blobs: list[bytes], ids: list[bytes] | None = None) -> list[bytes]:
    """Store message blobs: a batch as one pack (imports), a few as loose objects (appends).
    ``ids``: theirs, already worked out (by an import's parser process)."""
    batch = logread.batch_of(objects)
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
            entries = logread.subtree(objects, buckets, name)
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
    root = logread.entries(objects, base)
    root[_SESSION] = (BLOB_MODE, objects.write(BLOB, codec.encode_session(session)))
    buckets = logread.subtree(objects, root, _MESSAGES)
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
        entries = logread.subtree(objects, buckets, name)
        if name == cut:
            entries = {n: e for n, e in entries.items() if logread.seq_of(n) < truncate_at}  # type: ignore[operator]
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
    base: logread.Tip | None = None,
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
    oid = objects.write_commit(tree, parents, text, signature_at(now_ms))
    batch = logread.batch_of(objects)
    if batch is not None:
        batch.move_ref(refs.session_ref(session.id), expected, oid)  # moved when the batch is stored
    else:
        refs.swap(common_dir, refs.session_ref(session.id), expected, oid)
    return oid
