"""Session logs: one commit chain per session under ``refs/oxide/sessions/<id>``.

A log commit's tree holds ``session.msgpack`` and ``messages/<bucket>/<seq>.msgpack`` with
``bucket = seq // 256``. Writing N messages rewrites their bucket trees and the root: O(N), not
O(session). A fork's first commit has the source's log commit as parent; a conversation rewind is
a commit whose tree drops the later messages, the old tip staying in history.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pygit2

from . import codec, packread, packwriter, refs
from .errors import NotFound, OxideError
from .model import Message, Session, message_id_for

BUCKET = 256
PACK_MIN = 64  # messages written at once from which they go to a pack, not loose files
SESSION_FILE = "session.msgpack"
MESSAGES_DIR = "messages"
IDENTITY = ("git oxide", "oxide@localhost")
_TREE = pygit2.enums.FileMode.TREE
_BLOB = pygit2.enums.FileMode.BLOB


def bucket_name(seq: int) -> str:
    return f"{seq // BUCKET:06d}"


def entry_name(seq: int) -> str:
    return f"{seq:08d}.msgpack"


@dataclass(frozen=True)
class Log:
    """A session log at one commit."""

    session: Session
    commit: pygit2.Commit
    count: int

    @property
    def tip(self) -> pygit2.Oid:
        return self.commit.id


def _signature(now_ms: int) -> pygit2.Signature:
    return pygit2.Signature(*IDENTITY, now_ms // 1000, 0)


def _seq_of(name: str | None) -> int:
    """The number a log entry or bucket is named by; a log from elsewhere may name it anything."""
    try:
        return int((name or "").split(".")[0])
    except ValueError:
        raise OxideError(f"session log entry {name!r} is not a message number") from None


_OBJ_BLOB = int(pygit2.enums.ObjectType.BLOB)


def _blob(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    # Read through the object database: no Object wrapper per message (the hot loop of show/resume).
    try:
        kind, data = repo.odb.read(oid)
    except KeyError:
        raise OxideError(f"session log entry {oid} is missing from the object store") from None
    if kind != _OBJ_BLOB:
        raise OxideError(f"session log entry {oid} is not a blob")
    return data


def load(repo: pygit2.Repository, session_id: str) -> Log | None:
    """The session's log at its ref's tip, or None if there is no such session."""
    oid = refs.read(repo, refs.session_ref(session_id))
    return None if oid is None else load_commit(repo, oid)


def load_required(repo: pygit2.Repository, session_id: str, ref: str | None = None) -> Log:
    """``load``, or NotFound naming ``ref`` (what the user gave) when the session has no log."""
    log = load(repo, session_id)
    if log is None:
        raise NotFound(f"session {ref or session_id} has no log in git", hint="run `git oxide reindex`")
    return log


def load_commit(repo: pygit2.Repository, oid: pygit2.Oid) -> Log:
    commit = repo.get(oid)
    if not isinstance(commit, pygit2.Commit):
        raise OxideError(f"session log {oid} is not a commit")
    tree = commit.tree
    if SESSION_FILE not in tree:
        raise OxideError(f"session log {oid} has no {SESSION_FILE}")
    session = codec.decode_session(_blob(repo, tree[SESSION_FILE].id))
    return Log(session, commit, count_messages(repo, tree))


def _messages_tree(repo: pygit2.Repository, tree: pygit2.Tree) -> pygit2.Tree | None:
    if MESSAGES_DIR not in tree:
        return None
    obj = repo[tree[MESSAGES_DIR].id]
    return obj if isinstance(obj, pygit2.Tree) else None


def count_messages(repo: pygit2.Repository, tree: pygit2.Tree) -> int:
    msgs = _messages_tree(repo, tree)
    if msgs is None or len(msgs) == 0:
        return 0
    last_bucket = repo[msgs[len(msgs) - 1].id]
    if not isinstance(last_bucket, pygit2.Tree) or len(last_bucket) == 0:
        return 0
    return _seq_of(last_bucket[len(last_bucket) - 1].name) + 1


def iter_messages(
    repo: pygit2.Repository, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, Message]]:
    """Messages in sequence order from ``start``; reads one blob at a time (streams)."""
    for seq, data in _iter_blobs(repo, tree, start, stop):
        yield seq, codec.decode_message(data)


def iter_message_dicts(
    repo: pygit2.Repository, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The same messages as plain dicts (what JSON output needs), without model objects."""
    for seq, data in _iter_blobs(repo, tree, start, stop):
        yield seq, codec.decode_message_dict(data)


def _iter_blobs(
    repo: pygit2.Repository, tree: pygit2.Tree, start: int, stop: int | None
) -> Iterator[tuple[int, bytes]]:
    msgs = _messages_tree(repo, tree)
    if msgs is None:
        return
    first_bucket = start // BUCKET
    # Blobs come straight from the packs that imports write (one lookup in libgit2's odb per
    # message was most of the cost of a long resume); anything else through the odb.
    with packread.PackReader(refs.common_dir(repo) / "objects") as packs:
        for bentry in msgs:
            if _seq_of(bentry.name) < first_bucket:
                continue
            bucket = repo[bentry.id]
            if not isinstance(bucket, pygit2.Tree):
                continue
            entries = [(_seq_of(e.name), e.id) for e in bucket]
            done = stop is not None and entries and entries[-1][0] >= stop
            entries = [e for e in entries if e[0] >= start and (stop is None or e[0] < stop)]
            for (seq, oid), data in zip(entries, packs.blobs([o.raw for _, o in entries]), strict=True):
                yield seq, _blob(repo, oid) if data is None else data
            if done:
                return


def message_at(repo: pygit2.Repository, tree: pygit2.Tree, seq: int) -> Message | None:
    path = f"{MESSAGES_DIR}/{bucket_name(seq)}/{entry_name(seq)}"
    try:
        entry = tree[path]
    except KeyError:
        return None
    return codec.decode_message(_blob(repo, entry.id))


def _blob_ids(repo: pygit2.Repository, blobs: list[bytes]) -> list[pygit2.Oid]:
    """Store message blobs: a batch as one pack (imports), a few as loose objects (appends)."""
    if len(blobs) < PACK_MIN:
        return [repo.create_blob(b) for b in blobs]
    raw = packwriter.write_pack(refs.common_dir(repo) / "objects", [(packwriter.BLOB, b) for b in blobs])
    return [pygit2.Oid(raw=r) for r in raw]


def build_tree(
    repo: pygit2.Repository,
    base: pygit2.Tree | None,
    session: Session,
    puts: Mapping[int, Message],
    truncate_at: int | None = None,
    blobs: Mapping[int, bytes] | None = None,
) -> pygit2.Oid:
    """The tree of ``base`` with ``session`` written, ``puts`` placed and seqs >= truncate_at dropped
    (``blobs``: the puts already encoded)."""
    root = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    root.insert(SESSION_FILE, repo.create_blob(codec.encode_session(session)), _BLOB)
    msgs = _messages_tree(repo, base) if base is not None else None
    mb = repo.TreeBuilder(msgs) if msgs is not None else repo.TreeBuilder()
    data = [blobs[q] for q in puts] if blobs is not None else [codec.encode_message(m) for m in puts.values()]
    oids = dict(zip(puts, _blob_ids(repo, data), strict=True))
    by_bucket: dict[str, dict[int, Message]] = {}
    for seq, m in puts.items():
        by_bucket.setdefault(bucket_name(seq), {})[seq] = m
    if truncate_at is not None and msgs is not None:
        cut = bucket_name(truncate_at)
        for bentry in list(msgs):
            name = bentry.name or ""
            if name > cut:
                mb.remove(name)
            elif name == cut:
                by_bucket.setdefault(name, {})
    for name, items in sorted(by_bucket.items()):
        existing = mb.get(name)
        old = repo[existing.id].peel(pygit2.Tree) if existing is not None else None
        bt = repo.TreeBuilder(old) if old is not None else repo.TreeBuilder()
        if truncate_at is not None and name == bucket_name(truncate_at) and existing is not None:
            for entry in old or []:
                if int((entry.name or "0").split(".")[0]) >= truncate_at:
                    bt.remove(entry.name or "")
        for seq in items:
            bt.insert(entry_name(seq), oids[seq], _BLOB)
        if len(bt) == 0:
            if existing is not None:
                mb.remove(name)
        else:
            mb.insert(name, bt.write(), _TREE)
    if len(mb) == 0:
        if MESSAGES_DIR in (base or []):
            root.remove(MESSAGES_DIR)
    else:
        root.insert(MESSAGES_DIR, mb.write(), _TREE)
    return root.write()


def with_ids(session_id: str, puts: Mapping[int, Message]) -> dict[int, Message]:
    """The messages by seq, each without an id given its deterministic one."""
    return {q: m if m.id else m.with_id(message_id_for(session_id, q, m.created_at))
            for q, m in puts.items()}


def commit(
    repo: pygit2.Repository,
    session: Session,
    puts: Mapping[int, Message],
    *,
    blobs: Mapping[int, bytes] | None = None,
    now_ms: int,
    summary: str,
    truncate_at: int | None = None,
    base: pygit2.Commit | None = None,
    expected: pygit2.Oid | None = None,
    parents: list[pygit2.Oid] | None = None,
) -> pygit2.Oid | None:
    """Write a log commit on ``refs/oxide/sessions/<session.id>`` if anything changed.

    ``base`` is the commit whose tree is modified (the tip, or a fork's source); ``expected`` the
    ref's current value (compare-and-swap; RefMoved when another writer moved it). Returns the
    new tip, or None when the tree came out identical to the tip's (idempotent imports).
    """
    tree = build_tree(repo, base.tree if base is not None else None, session, puts, truncate_at, blobs)
    if base is not None and expected == base.id and base.tree_id == tree:
        return None
    if parents is None:
        parents = [expected] if expected is not None else []
    sig = _signature(now_ms)
    text = f"{summary}\n\nOxide-Session: {session.id}\n"
    oid = repo.create_commit(None, sig, sig, text, tree, parents)
    refs.update(repo, {refs.session_ref(session.id): (expected, oid)}, f"oxide: {summary}")
    return oid
