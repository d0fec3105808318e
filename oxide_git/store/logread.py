"""Reading session logs: the one reader of a log's commit, its ``session.msgpack`` and its
``messages/<bucket>/<seq>.msgpack`` (the layout is ``core.log_layout``'s), through ``git.objects``.

The write path (``logwrite``) reads the tip it builds on here; show, resume, export, fork, pull and
reindex read messages here too (``sessionlog`` hands them a pygit2 commit beside). A log from
elsewhere (a teammate's push) may be damaged or hostile: every name is checked to be a message
number, a bucket to hold only its own messages, and no object over ``MAX_OBJECT`` is inflated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oxide_git.core import codec
from oxide_git.core.errors import NotFound, OxideError
from oxide_git.core.log_layout import BUCKET, MESSAGES_DIR, SESSION_FILE, bucket_name, entry_name
from oxide_git.core.model import Session
from oxide_git.git import refs
from oxide_git.git.commits import commit_tree
from oxide_git.git.objects import BLOB, COMMIT, TREE_MODE, Objects, ObjectTooLarge
from oxide_git.git.packread import MAX_OBJECT

_SESSION = SESSION_FILE.encode()
_MESSAGES = MESSAGES_DIR.encode()
Entries = dict[bytes, tuple[bytes, bytes]]  # a tree's entries by name: {name: (mode, raw id)}


@contextmanager
def _named() -> Iterator[None]:
    """An object of a log too large to read, named as what it is to the user."""
    try:
        yield
    except ObjectTooLarge as e:
        raise OxideError(f"session log entry {e.oid} is {e.size} bytes, larger than the "
                         f"{MAX_OBJECT} git oxide reads") from None


def seq_of(name: str | bytes | None) -> int:
    """The number a log entry or bucket is named by; a log from elsewhere may name it anything."""
    text = name.decode("utf-8", "replace") if isinstance(name, bytes) else (name or "")
    try:
        return int(text.split(".")[0])
    except ValueError:
        raise OxideError(f"session log entry {text!r} is not a message number") from None


@dataclass(frozen=True)
class Tip:
    """A session log at one commit: its session, how many messages it holds (raw ids)."""

    session: Session
    commit: bytes
    tree: bytes
    count: int


def batch_of(objects: Objects) -> Any:
    """``objects`` when it is a batch of writes (``store.batch.FileBatch``: it packs what it
    holds, and moves the refs when it is stored), else None. A flag, not isinstance: the batch
    builds on the write path."""
    return objects if objects.batched else None


def tip(objects: Objects, common_dir: Path, session_id: str) -> Tip | None:
    """The session's log at its ref, or None if there is no such session (a batch answers for
    the refs it moved)."""
    name = refs.session_ref(session_id)
    batch = batch_of(objects)
    oid = batch.ref(name) if batch is not None else refs.read_raw(common_dir, name)
    return None if oid is None else tip_at(objects, oid)


def tip_required(objects: Objects, common_dir: Path, session_id: str, ref: str | None = None) -> Tip:
    """``tip``, or NotFound naming ``ref`` (what the user gave) when the session has no log."""
    got = tip(objects, common_dir, session_id)
    if got is None:
        raise NotFound(f"session {ref or session_id} has no log in git", hint="run `git oxide reindex`")
    return got


def tip_at(objects: Objects, commit: bytes) -> Tip:
    with _named():
        tree = commit_tree(objects.read_kind(commit, COMMIT))
        root = entries(objects, tree)
        if _SESSION not in root:
            raise OxideError(f"session log {commit.hex()} has no {SESSION_FILE}")
        session = codec.decode_session(objects.read_kind(root[_SESSION][1], BLOB))
        return Tip(session, commit, tree, _count(objects, subtree(objects, root, _MESSAGES)))


def entries(objects: Objects, tree: bytes | None) -> Entries:
    """A tree's entries by name (none for no tree)."""
    return {} if tree is None else objects.entries(tree)


def subtree(objects: Objects, parent: Entries, name: bytes) -> Entries:
    """The entries of the tree ``name`` of ``parent`` (none when it is not a tree)."""
    entry = parent.get(name)
    return objects.entries(entry[1]) if entry is not None and entry[0] == TREE_MODE else {}


def buckets(objects: Objects, tree: bytes | None) -> Entries:
    """The bucket trees of the log tree ``tree``, by name."""
    return subtree(objects, entries(objects, tree), _MESSAGES)


def count(objects: Objects, tree: bytes) -> int:
    """How many messages the log tree holds: one past its last message's number."""
    return _count(objects, buckets(objects, tree))


def _count(objects: Objects, by_name: Entries) -> int:
    if not by_name:
        return 0
    last = subtree(objects, by_name, max(by_name))
    return seq_of(max(last)) + 1 if last else 0


def count_of(objects: Objects, commit: bytes) -> int:
    """How many messages the log at ``commit`` holds."""
    return count(objects, commit_tree(objects.read_kind(commit, COMMIT)))


def first_difference(objects: Objects, old: bytes | None, new: bytes) -> int:
    """The first seq whose bucket differs between two log trees (0 when there is no old tree)."""
    a = buckets(objects, old) if old is not None else {}
    b = buckets(objects, new)
    if not a or not b:
        return 0
    for name in sorted(b):
        if a.get(name) != b[name]:
            return seq_of(name) * BUCKET
    return len(b) * BUCKET


def blobs_at(objects: Objects, tree: bytes, seqs: Iterable[int]) -> Iterator[tuple[int, bytes]]:
    """The stored messages at ``seqs`` (ascending) of the log tree ``tree``, encoded; the seqs
    with no message are skipped. Each bucket tree is read once."""
    by_name = buckets(objects, tree)
    name, inside = None, {}
    for seq in seqs:
        if bucket_name(seq).encode() != name:
            name = bucket_name(seq).encode()
            inside = subtree(objects, by_name, name)
        entry = inside.get(entry_name(seq).encode())
        if entry is not None:
            with _named():
                data = objects.read_kind(entry[1], BLOB)
            yield seq, data


def blob_at(objects: Objects, tree: bytes, seq: int) -> bytes | None:
    """The stored message ``seq`` of the log tree ``tree``; None when it has none."""
    return next((data for _q, data in blobs_at(objects, tree, (seq,))), None)


def iter_blobs(objects: Objects, tree: bytes, start: int = 0, stop: int | None = None
               ) -> Iterator[tuple[int, bytes]]:
    """The stored messages in sequence order from ``start`` (to ``stop``), one bucket at a time:
    a resume of 50,000 messages streams. Their blobs are read in order (``Objects.blobs``)."""
    by_name = buckets(objects, tree)
    first_bucket = start // BUCKET
    for name in sorted(by_name):
        number = seq_of(name)
        if number < first_bucket:
            continue
        if stop is not None and number * BUCKET >= stop:
            return
        inside = sorted((seq_of(n), mode, oid) for n, (mode, oid) in subtree(objects, by_name, name).items())
        if any(q // BUCKET != number for q, _m, _o in inside):
            raise OxideError(f"session log bucket {name.decode('utf-8', 'replace')} holds messages "
                             "of another bucket")
        wanted = [(q, oid) for q, _mode, oid in inside if q >= start and (stop is None or q < stop)]
        with _named():
            yield from zip([q for q, _ in wanted], objects.blobs([oid for _, oid in wanted]), strict=True)
