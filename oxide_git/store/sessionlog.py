"""Reading session logs with pygit2 (show, resume, export, fork): the log at a ref's tip, its
messages in order. The layout and the write path are ``logwrite``'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pygit2

from oxide_git.core import codec
from oxide_git.core.errors import NotFound, OxideError
from oxide_git.core.model import Message, Session
from oxide_git.git import packread, refs
from oxide_git.store.logwrite import (  # noqa: F401 - the layout, named here for the readers of a log
    BUCKET,
    IDENTITY,
    MESSAGES_DIR,
    SESSION_FILE,
    Tip,
    bucket_name,
    entry_name,
    seq_of,
)


@dataclass(frozen=True)
class Log:
    """A session log at one commit."""

    session: Session
    commit: pygit2.Commit
    count: int

    @property
    def tip(self) -> pygit2.Oid:
        return self.commit.id

    def as_base(self) -> Tip:
        """This commit as the base of a write (``logwrite.commit``)."""
        return Tip(self.session, self.commit.id.raw, self.commit.tree_id.raw, self.count)


_OBJ_BLOB = int(pygit2.enums.ObjectType.BLOB)


def _blob(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    # Read through the object database: no Object wrapper per message (the hot loop of show/resume).
    # Sized from its header first: an entry over the limit is refused without being inflated.
    try:
        kind, size = repo.odb.read_header(oid)
        if kind != _OBJ_BLOB:
            raise OxideError(f"session log entry {oid} is not a blob")
        if size > codec.MAX_PAYLOAD:
            raise OxideError(f"session log entry {oid} is {size} bytes, larger than the "
                             f"{codec.MAX_PAYLOAD} git oxide reads")
        kind, data = repo.odb.read(oid)
    except KeyError:
        raise OxideError(f"session log entry {oid} is missing from the object store") from None
    return data


def _object(repo: pygit2.Repository, oid: pygit2.Oid, what: str) -> pygit2.Object:
    """A tree or commit of a log, sized from its header before libgit2 parses it."""
    try:
        _kind, size = repo.odb.read_header(oid)
    except KeyError:
        raise OxideError(f"{what} {oid} is missing from the object store") from None
    if size > codec.MAX_PAYLOAD:
        raise OxideError(f"{what} {oid} is {size} bytes, larger than the {codec.MAX_PAYLOAD} git oxide reads")
    return repo[oid]


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
    commit = _object(repo, oid, "session log")
    if not isinstance(commit, pygit2.Commit):
        raise OxideError(f"session log {oid} is not a commit")
    tree = _object(repo, commit.tree_id, "session log tree")
    if not isinstance(tree, pygit2.Tree):
        raise OxideError(f"session log {oid} has no tree")
    if SESSION_FILE not in tree:
        raise OxideError(f"session log {oid} has no {SESSION_FILE}")
    session = codec.decode_session(_blob(repo, tree[SESSION_FILE].id))
    return Log(session, commit, count_messages(repo, tree))


def _messages_tree(repo: pygit2.Repository, tree: pygit2.Tree) -> pygit2.Tree | None:
    if MESSAGES_DIR not in tree:
        return None
    obj = _object(repo, tree[MESSAGES_DIR].id, "session log folder")
    return obj if isinstance(obj, pygit2.Tree) else None


def first_difference(repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree) -> int:
    """The first seq whose bucket differs between two log trees (0 when there is no old tree)."""
    a = _messages_tree(repo, old) if old is not None else None
    b = _messages_tree(repo, new)
    if a is None or b is None:
        return 0
    old_buckets = {e.name: e.id for e in a}
    for entry in b:
        if old_buckets.get(entry.name) != entry.id:
            return seq_of(entry.name) * BUCKET
    return len(b) * BUCKET


def count_messages(repo: pygit2.Repository, tree: pygit2.Tree) -> int:
    msgs = _messages_tree(repo, tree)
    if msgs is None or len(msgs) == 0:
        return 0
    last_bucket = _object(repo, msgs[len(msgs) - 1].id, "session log bucket")
    if not isinstance(last_bucket, pygit2.Tree) or len(last_bucket) == 0:
        return 0
    return seq_of(last_bucket[len(last_bucket) - 1].name) + 1


def iter_messages(
    repo: pygit2.Repository, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, Message]]:
    """Messages in sequence order from ``start``; reads one blob at a time (streams)."""
    for seq, data in iter_blobs(repo, tree, start, stop):
        yield seq, codec.decode_message(data)


def iter_message_dicts(
    repo: pygit2.Repository, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The same messages as plain dicts (what JSON output needs), without model objects."""
    for seq, data in iter_blobs(repo, tree, start, stop):
        yield seq, codec.decode_message_dict(data)


def iter_blobs(
    repo: pygit2.Repository, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """The stored (encoded) messages in sequence order from ``start``."""
    msgs = _messages_tree(repo, tree)
    if msgs is None:
        return
    first_bucket = start // BUCKET
    # Blobs come straight from the packs that imports write (one lookup in libgit2's odb per
    # message was most of the cost of a long resume); anything else through the odb.
    with packread.PackReader(refs.common_dir(repo) / "objects") as packs:
        for bentry in msgs:
            if seq_of(bentry.name) < first_bucket:
                continue
            bucket = _object(repo, bentry.id, "session log bucket")
            if not isinstance(bucket, pygit2.Tree):
                continue
            entries = [(seq_of(e.name), e.id) for e in bucket]
            if any(q // BUCKET != seq_of(bentry.name) for q, _ in entries):
                raise OxideError(f"session log bucket {bentry.name} holds messages of another bucket")
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
