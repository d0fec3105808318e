"""How `pull` brings one session's log up to date without losing a message.

The rule: a pull never moves a session's tip to a commit that lacks a message the tip holds, and
a place (seq) in the log never gets another message. So the local tip moves only to a log that
holds every local message at its own place (``holds``): a fast-forward, or a merge commit with
the other side's tree. When the two sides put different messages at the same places, the tip keeps
ours and the other side's line becomes a fork (its id made from the other side's tip, so pulling
twice, or on two clones, makes it once), unless a fork here already holds it. A merge commit with
both tips as parents then lets `push` fast-forward the remote; when the other side's tip already
descends from ours (it made our line its fork), ours stays as it is, behind the remote on purpose
(`push` says "kept"), so two clones do not answer each other's merges forever.

A session removed here (``tombstones``) is not taken again unless the remote changed it after the
removal; then its log comes back as a fork of the removed session, said so. A removal is a change
like any other and comes the other way too: a session the remote no longer has (a teammate's
`rm --remote` or `push --prune`) is removed here as `rm` removes it (to the trash, a tombstone,
journaled with the pull) when this clone holds nothing the remote did not have; otherwise it stays,
said so, and a push gives it back to the remote.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

import pygit2

from oxide_git.core import codec, log_layout
from oxide_git.core.errors import OxideError
from oxide_git.core.model import message_key, new_session_id
from oxide_git.git import refs
from oxide_git.git.repo import Repo
from oxide_git.ops import incoming
from oxide_git.store import journal, logwrite, sessionlog, tombstones, trees
from oxide_git.store.context import Context


class Result(Protocol):
    """What a pull reports (``share.ShareResult``)."""

    remote: str
    updated: dict[str, str]
    forks: list[dict[str, Any]]
    moved: dict[str, list[str | None]]

    def move(self, name: str, before: pygit2.Oid | None, after: pygit2.Oid) -> None: ...


def common_prefix(git: pygit2.Repository, a: pygit2.Tree, b: pygit2.Tree) -> int:
    """How many leading messages two session logs share. Two blobs at one place are the same
    message when they are one blob, or when they decode to the same message (``message_key``): an
    import rewrites a message it read again whole (aider's blank line after a prompt goes to the
    next block once the file grows), and that is the same message, not another."""
    ma = git[a[log_layout.MESSAGES_DIR].id] if log_layout.MESSAGES_DIR in a else None
    mb = git[b[log_layout.MESSAGES_DIR].id] if log_layout.MESSAGES_DIR in b else None
    if ma is None or mb is None:
        return 0
    n = 0
    for ea, eb in zip(ma, mb, strict=False):  # type: ignore[call-overload]
        if ea.id == eb.id:
            n += len(git[ea.id])  # type: ignore[arg-type]
            continue
        for xa, xb in zip(git[ea.id], git[eb.id], strict=False):  # type: ignore[call-overload]
            if xa.name != xb.name or (xa.id != xb.id and not _same_message(git, xa.id, xb.id)):
                return n
            n += 1
        return n
    return n


def _same_message(git: pygit2.Repository, a: pygit2.Oid, b: pygit2.Oid) -> bool:
    try:
        ma, mb = codec.decode_message(git[a].data), codec.decode_message(git[b].data)  # type: ignore[attr-defined]
    except (OxideError, ValueError, KeyError):  # (what a pull takes was checked to decode)
        return False
    return message_key(ma) == message_key(mb)


def holds(repo: Repo, big: pygit2.Tree, small: pygit2.Tree) -> bool:
    """Whether the log ``big`` holds every message of ``small`` at the same place."""
    n = sessionlog.count_messages(repo, small)
    return n == 0 or common_prefix(repo.git, big, small) >= n


def reconcile(ctx: Context, sid: str, theirs: pygit2.Oid, res: Result) -> None:
    """Bring session ``sid`` up to date with the remote's log ``theirs`` (already screened)."""
    git = ctx.repo.git
    name = refs.session_ref(sid)
    ours = refs.read(git, name)
    if ours == theirs:
        return
    remote_log = sessionlog.load_commit(ctx.repo, theirs)
    if ours is None:
        removed = tombstones.removed_tip(git, sid)
        if removed is None and not _own_line(ctx.repo, remote_log):
            incoming.check_log(ctx.repo, sid, theirs, None)
            _move(ctx, name, None, theirs, "new", res)
        elif removed is not None and tombstones.changed_since(git, removed, theirs):
            incoming.check_log(ctx.repo, sid, theirs, None)
            _fork(ctx, sid, None, remote_log, 0, res, removed=True)
        return  # removed here and not changed there since, or our own line: nothing to take
    incoming.check_log(ctx.repo, sid, theirs, ours)  # every message we may take decodes
    local = git[ours].peel(pygit2.Commit)
    remote = remote_log.commit
    if holds(ctx.repo, remote.tree, local.tree):  # theirs has all of ours, in place
        if git.descendant_of(theirs, ours):
            _move(ctx, name, ours, theirs, "fast-forward", res)
        elif not git.descendant_of(ours, theirs):
            _merge(ctx, name, ours, theirs, remote.tree_id, res)
        return
    if holds(ctx.repo, local.tree, remote.tree):  # ours has all of theirs: push sends it
        if not (git.descendant_of(ours, theirs) or git.descendant_of(theirs, ours)):
            _merge(ctx, name, ours, theirs, local.tree_id, res)
        return  # (theirs descending from ours with less: their rewind, or their merge: ours stays)
    if git.descendant_of(ours, theirs):
        return  # merged here already: its fork was made then, and push sends the merge
    _keep_their_line(ctx, sid, local, remote_log, res)
    if not git.descendant_of(theirs, ours):
        _merge(ctx, name, ours, theirs, local.tree_id, res)


def _move(ctx: Context, name: str, ours: pygit2.Oid | None, theirs: pygit2.Oid, what: str,
          res: Result) -> None:
    refs.update(ctx.repo.git, {name: (ours, theirs)}, f"oxide: pull {res.remote}")
    res.move(name, ours, theirs)
    res.updated[name] = what


def _merge(ctx: Context, name: str, ours: pygit2.Oid, theirs: pygit2.Oid, tree: pygit2.Oid,
           res: Result) -> None:
    """A merge commit (``tree``; both tips its parents) at the session's ref."""
    git = ctx.repo.git
    sid = name[len(refs.SESSIONS):]
    text = f"pull {res.remote}: merge diverged session\n\nOxide-Session: {sid}\n"
    merged = pygit2.Oid(raw=ctx.repo.objects.write_commit(tree.raw, [ours.raw, theirs.raw], text,
                                                          logwrite.signature_at(ctx.now_ms)))
    refs.update(git, {name: (ours, merged)}, f"oxide: pull {res.remote}")
    res.move(name, ours, merged)
    res.updated[name] = "merged"


def _own_line(repo: Repo, log: sessionlog.Log) -> bool:
    """Whether ``log`` is a pull's fork (made on another clone) of a session whose tip here holds
    all of it: our own line, as the other side kept it; taking it would only repeat it here."""
    parent = log.session.parent_id
    if not parent or "diverged_from" not in log.session.extra:
        return False
    tip = refs.read(repo.git, refs.session_ref(parent))
    return tip is not None and holds(repo, repo.git[tip].peel(pygit2.Tree), log.commit.tree)


def _forks(ctx: Context, sid: str, res: Result) -> list[sessionlog.Log]:
    """The forks of ``sid`` here: indexed, or taken or made by this pull."""
    forks = {r[0] for r in ctx.index.query("SELECT id FROM sessions WHERE parent_id=?", (sid,))}
    forks |= {n[len(refs.SESSIONS):] for n in res.updated if n.startswith(refs.SESSIONS)}
    logs = [sessionlog.load(ctx.repo, f) for f in sorted(forks)]
    return [log for log in logs if log is not None and log.session.parent_id == sid]


def _keep_their_line(ctx: Context, sid: str, local: pygit2.Commit, remote: sessionlog.Log,
                     res: Result) -> None:
    """The other side's line kept here: nothing to do when a fork holds it; else the pull's fork
    that holds its beginning grows to it (one fork per line, not one per pull); else a new fork."""
    git = ctx.repo.git
    tree = remote.commit.tree
    grow = None
    for log in _forks(ctx, sid, res):
        if holds(ctx.repo, log.commit.tree, tree):
            return
        if "diverged_from" in log.session.extra and holds(ctx.repo, tree, log.commit.tree) and (
                grow is None or log.count > grow.count):
            grow = log
    if grow is None:
        _fork(ctx, sid, local, remote, common_prefix(git, local.tree, tree), res)
        return
    objects = ctx.repo.objects
    session = (grow.commit.tree[log_layout.SESSION_FILE].id.raw, trees.FILE_MODE)
    built = trees.apply_changes(objects, tree.id.raw, {log_layout.SESSION_FILE: session})
    text = (f"fork {sid[:12]}: the other side's messages up to {remote.count}\n\n"
            f"Oxide-Session: {grow.session.id}\n")
    parents = [grow.tip.raw, remote.tip.raw]
    grown = pygit2.Oid(raw=objects.write_commit(built or trees.empty_tree(objects), parents, text,
                                                logwrite.signature_at(ctx.now_ms)))
    name = refs.session_ref(grow.session.id)
    refs.update(git, {name: (grow.tip, grown)}, f"oxide: pull {res.remote}")
    res.move(name, grow.tip, grown)
    res.updated[name] = "fork grown"
    res.forks.append({"session": sid, "fork": grow.session.id, "from": str(remote.tip)})


def _fork(ctx: Context, sid: str, local: pygit2.Commit | None, remote: sessionlog.Log, shared: int,
          res: Result, removed: bool = False) -> None:
    """The other side's log as a fork of ``sid`` after its first ``shared`` messages (reported
    when it is new: a pull again makes nothing)."""
    at = sessionlog.message_at(ctx.repo, local.tree, shared - 1) if shared and local is not None else None
    fid, oid = fork_log(ctx, sid, remote, seed=f"pull-fork:{sid}:{remote.tip}", at_id=at.id if at else None,
                        fork_seq=shared, title="the other side of a pull",
                        summary=f"fork {sid[:12]}: messages of the other side after {shared}")
    if oid is None:
        return
    res.move(refs.session_ref(fid), None, oid)
    made = {"session": sid, "fork": fid, "from": str(remote.tip)}
    res.forks.append({**made, "removed": True} if removed else made)
    res.updated[refs.session_ref(fid)] = "fork"


def fork_log(ctx: Context, sid: str, log: sessionlog.Log, *, seed: str, at_id: str | None, fork_seq: int,
             title: str, summary: str) -> tuple[str, pygit2.Oid | None]:
    """``log`` (a commit of session ``sid``'s history, or another side's) as a new fork of ``sid``
    whose first commit has it as parent; its id made from ``seed``, so it is made once. Returns the
    fork's id and its new ref's commit (None: it was there)."""
    fid = new_session_id(log.commit.commit_time * 1000, seed.encode())
    if refs.read(ctx.repo.git, refs.session_ref(fid)) is not None:
        return fid, None
    src = log.session
    fork = replace(src, id=fid, native_id=None, parent_id=sid, fork_message_id=at_id,
                   title=f"{src.title or sid[:12]} ({title})",
                   extra={**src.extra, "fork_seq": fork_seq, "diverged_from": str(log.tip)})
    when = log.commit.commit_time * 1000
    oid = logwrite.commit(ctx.repo.objects, ctx.repo.common_dir, fork, {}, now_ms=when, summary=summary,
                          base=log.as_base(), expected=None, parents=[log.tip.raw])
    assert oid is not None
    return fid, pygit2.Oid(raw=oid)


def removed_there(ctx: Context, sid: str, was: pygit2.Oid, res: Result) -> None:
    """Session ``sid``, whose log the remote had at ``was`` (our mirror of it) and no longer has."""
    git = ctx.repo.git
    name = refs.session_ref(sid)
    ours = refs.read(git, name)
    if ours is None:
        return
    if ours != was and not git.descendant_of(was, ours):
        res.updated[name] = "kept (removed on the remote, changed here since)"
        return
    changes = tombstones.removal(ctx.repo, sid, str(ours), ctx.now_ms)  # as `rm` removes it
    journal.move_refs(ctx, changes, f"oxide: pull {res.remote}: removed on the remote")
    for ref, (before, after) in changes.items():
        res.moved[ref] = [before, after]
    res.updated[name] = "removed on the remote"
