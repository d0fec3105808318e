"""What `rm` leaves behind so that a pull does not bring a removed session back: a tombstone.

``refs/oxide/removed/<session-id>`` points at a small commit (the empty tree, no parent: it keeps
nothing of the session alive past `git oxide gc`) whose message names the log commit that was
removed (``Oxide-Removed-Tip``). `pull` takes a remote's session that has a tombstone here only
when the remote changed it after the removal (its tip is neither the removed one nor an older
one), and then as a fork. `rm` journals the tombstone with the session's ref, so `undo` of the rm
removes it as it puts the session back. Tombstones are local: they are never pushed; `rm --remote`
and `push --prune` carry the removal itself to a remote (``prune``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pygit2

from oxide_git.git import refs
from oxide_git.git.objects import Objects
from oxide_git.git.repo import Repo
from oxide_git.store.logwrite import signature_at
from oxide_git.store.trees import empty_tree

REMOVED = "refs/oxide/removed/"
_TRAILER = "Oxide-Removed-Tip: "


def ref(sid: str) -> str:
    return REMOVED + sid


def make(objects: Objects, sid: str, tip: str, now_ms: int) -> str:
    """A tombstone commit for session ``sid`` removed at log commit ``tip`` (the ref is the
    caller's to set, journaled)."""
    text = f"rm {sid[:12]}\n\nOxide-Session: {sid}\n{_TRAILER}{tip}\n"
    return objects.write_commit(empty_tree(objects), [], text, signature_at(now_ms)).hex()


def removed_tip(git: pygit2.Repository, sid: str) -> str | None:
    """The log commit session ``sid`` had when it was removed here, or None (no tombstone)."""
    oid = refs.read(git, ref(sid))
    if oid is None:
        return None
    commit = git.get(oid)
    if not isinstance(commit, pygit2.Commit):
        return None
    for line in commit.message.splitlines():
        if line.startswith(_TRAILER):
            return line[len(_TRAILER):].strip()
    return None


def all_removed(git: pygit2.Repository) -> Iterator[tuple[str, str]]:
    """(session id, removed tip) of every tombstone here."""
    for name, _oid in refs.iter_refs(git, REMOVED):
        sid = name[len(REMOVED):]
        tip = removed_tip(git, sid)
        if tip is not None:
            yield sid, tip


def changed_since(git: pygit2.Repository, removed: str, theirs: pygit2.Oid) -> bool:
    """Whether ``theirs`` holds more than the removed tip: not it, and not one of its ancestors."""
    if str(theirs) == removed:
        return False
    try:
        return not git.descendant_of(pygit2.Oid(hex=removed), theirs)
    except (KeyError, ValueError, pygit2.GitError):
        return True  # the removed log is gone here (collected): theirs is something else


def removal(repo: Repo, sid: str, tip: str, now_ms: int) -> dict[str, tuple[str | None, str | None]]:
    """The ref moves that remove session ``sid`` at log commit ``tip``: its ref goes, its tombstone
    comes (for ``journal.move_refs``; journaled by the caller, so `undo` takes both back)."""
    stone = refs.read(repo.git, ref(sid))
    return {refs.session_ref(sid): (tip, None),
            ref(sid): (str(stone) if stone else None, make(repo.objects, sid, tip, now_ms))}
