"""Session logs for the commands that want a log's commit as pygit2 gives it (show, resume,
export, fork, pull): the log at a ref's tip with its ``pygit2.Commit`` (its time, its parents, a
walk over its history), its messages in order. Every function takes oxide's ``Repo``: every
object of the log is read by ``logread`` through ``repo.objects`` (the one object store of that
repository view: a dry run's scratch view, ``snapshots.scratch``, gives its own), and
``repo.git``, the pygit2 handle, is used only to hand out the commit and to read a ref.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pygit2

from oxide_git.core import codec
from oxide_git.core.log_layout import MESSAGES_DIR, SESSION_FILE, bucket_name, entry_name  # noqa: F401 - named here for the readers of a log
from oxide_git.core.model import Message
from oxide_git.git import refs
from oxide_git.git.repo import Repo
from oxide_git.store import logread
from oxide_git.store.logread import Tip
from oxide_git.store.logwrite import IDENTITY  # noqa: F401 - who writes a log, named here for its readers


@dataclass(frozen=True)
class Log:
    """A session log at one commit."""

    session: Any  # core.model.Session
    commit: pygit2.Commit
    count: int

    @property
    def tip(self) -> pygit2.Oid:
        return self.commit.id

    def as_base(self) -> Tip:
        """This commit as the base of a write (``logwrite.commit``)."""
        return Tip(self.session, self.commit.id.raw, self.commit.tree_id.raw, self.count)


def _tree_id(tree: pygit2.Tree | pygit2.Oid | bytes) -> bytes:
    if isinstance(tree, bytes):
        return tree
    return tree.raw if isinstance(tree, pygit2.Oid) else tree.id.raw


def load(repo: Repo, session_id: str) -> Log | None:
    """The session's log at its ref's tip, or None if there is no such session."""
    oid = refs.read(repo.git, refs.session_ref(session_id))
    return None if oid is None else load_commit(repo, oid)


def load_required(repo: Repo, session_id: str, ref: str | None = None) -> Log:
    """``load``, or NotFound naming ``ref`` (what the user gave) when the session has no log."""
    tip = logread.tip_required(repo.objects, repo.common_dir, session_id, ref)
    commit = repo.git[pygit2.Oid(raw=tip.commit)]
    assert isinstance(commit, pygit2.Commit)  # tip_required read it as one
    return Log(tip.session, commit, tip.count)


def load_commit(repo: Repo, oid: pygit2.Oid) -> Log:
    tip = logread.tip_at(repo.objects, oid.raw)  # every object checked and sized on the way
    commit = repo.git[oid]
    assert isinstance(commit, pygit2.Commit)  # tip_at read it as one
    return Log(tip.session, commit, tip.count)


def first_difference(repo: Repo, old: pygit2.Tree | None, new: pygit2.Tree) -> int:
    """The first seq whose bucket differs between two log trees (0 when there is no old tree)."""
    return logread.first_difference(repo.objects, None if old is None else _tree_id(old), _tree_id(new))


def count_messages(repo: Repo, tree: pygit2.Tree) -> int:
    return logread.count(repo.objects, _tree_id(tree))


def iter_messages(
    repo: Repo, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, Message]]:
    """Messages in sequence order from ``start``; reads one blob at a time (streams)."""
    for seq, data in iter_blobs(repo, tree, start, stop):
        yield seq, codec.decode_message(data)


def iter_message_dicts(
    repo: Repo, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The same messages as plain dicts (what JSON output needs), without model objects."""
    for seq, data in iter_blobs(repo, tree, start, stop):
        yield seq, codec.decode_message_dict(data)


def iter_blobs(
    repo: Repo, tree: pygit2.Tree, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """The stored (encoded) messages in sequence order from ``start``."""
    yield from logread.iter_blobs(repo.objects, _tree_id(tree), start, stop)


def message_at(repo: Repo, tree: pygit2.Tree, seq: int) -> Message | None:
    data = logread.blob_at(repo.objects, _tree_id(tree), seq)
    return None if data is None else codec.decode_message(data)
