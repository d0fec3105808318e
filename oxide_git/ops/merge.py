"""`git oxide merge`: a fork's turns and code back into the session (and worktree) it left.

The conversation: the target session gets the fork's messages after the point where the two
diverged (``merge_lineage``), as they were (tool calls and results included), under a marker
message naming the fork; ``digest`` puts only its prompts, final answers and the files it changed.
The marker records which messages it brought, so merging again adds only what is new.

The code: the fork's latest checkpoint merged three-way (``merge_code``) into a checkpoint of the
worktree as it is now, against the checkpoint where the two diverged; uncommitted changes are the
worktree's side of the merge, so none is overwritten. The state before is checkpointed and the
operation journaled (the session ref and the files), so `git oxide undo` reverts both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.core import agent_files
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message, Part, PartType, Role, Session, to_iso
from oxide_git.git import refs, restore
from oxide_git.git.repo import Repo
from oxide_git.ops import merge_code, merge_lineage
from oxide_git.ops.merge_marks import FROM_KEY, MARKER, MARKER_KEY
from oxide_git.store import journal, sessionlog, snapshots
from oxide_git.store import writes as store
from oxide_git.store.context import Context


@dataclass
class MergeResult:
    fork: dict[str, Any]
    target: dict[str, Any]
    ancestor: str | None
    fork_point: int | None  # seq of the ancestor's last message both hold (None: unrelated)
    base: str | None  # the checkpoint (or commit) the code is merged against
    theirs: str | None  # the fork's checkpoint merged
    files: dict[str, list[str]]
    conflicts: list[dict[str, str]]
    messages_added: int
    already_merged: int  # messages of the fork earlier merges brought already
    digest: bool
    dry_run: bool
    uncommitted: list[str] = field(default_factory=list)  # the worktree's own changes, merged as a side
    notes: list[str] = field(default_factory=list)
    before_checkpoint: str | None = None
    after_checkpoint: str | None = None
    written: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _describe(log: sessionlog.Log) -> dict[str, Any]:
    s = log.session
    return {"id": s.id, "title": s.title, "agent": s.agent, "created_at": to_iso(s.created_at),
            "messages": log.count}


def _markers(ctx: Context, repo: Repo, log: sessionlog.Log) -> list[dict[str, Any]]:
    """What earlier merges into ``log``'s session brought (their markers' records)."""
    out = []
    for (seq,) in ctx.index.query(
            "SELECT seq FROM messages WHERE session_id=? AND role='user' AND text LIKE ? ORDER BY seq",
            (log.session.id, MARKER + "%")):
        m = sessionlog.message_at(repo, log.commit.tree, int(seq))
        if m is not None and isinstance(m.extra.get(MARKER_KEY), dict):
            out.append(dict(m.extra[MARKER_KEY]))
    return out


def _not_merged(segments: list[merge_lineage.Segment], earlier: list[dict[str, Any]]
                ) -> tuple[list[merge_lineage.Segment], int]:
    """The parts of ``segments`` no earlier merge brought, and how many messages those had."""
    done: dict[str, list[tuple[int, int]]] = {}
    for rec in earlier:
        for sid, a, b in rec.get("segments") or []:
            done.setdefault(str(sid), []).append((int(a), int(b)))
    out, skipped = [], 0
    for seg in segments:
        pieces = [(seg.start, seg.stop)]
        for a, b in done.get(seg.session_id, []):
            pieces = [p for x, y in pieces for p in ((x, min(y, a)), (max(x, b), y)) if p[0] < p[1]]
        kept = sum(y - x for x, y in pieces)
        skipped += (seg.stop - seg.start) - kept
        out += [merge_lineage.Segment(seg.log, x, y) for x, y in pieces]
    return out, skipped


def _messages(repo: Repo, segments: list[merge_lineage.Segment], target_agent: str) -> list[Message]:
    """The segments' messages as they were, each new to the target (its id is the target's to
    give) and naming where it came from, and whose record it is (``Message.made_by``: an exporter
    writes another agent's records as foreign ones, never as its own). A record of the target's
    own agent keeps that agent's id for it: `resume --into` writes it under that id, and an import
    of the agent's file knows it by it (another agent's is known by ``model.merge_key``)."""
    out = []
    for seg in segments:
        for seq, m in sessionlog.iter_messages(repo, seg.log.commit.tree, seg.start, seg.stop):
            came = {"session": seg.session_id, "seq": seq, "agent": m.made_by(seg.log.session.agent)}
            native_id = m.native_id if came["agent"] == target_agent else None
            out.append(dataclasses.replace(m, id="", native_id=native_id, extra={**m.extra, FROM_KEY: came}))
    return out


def _is_prompt(m: Message) -> bool:
    return (m.role == Role.USER and not m.is_harness() and bool(m.text().strip())
            and not any(p.type == PartType.TOOL_RESULT for p in m.parts))


def digest(messages: list[Message]) -> list[Message]:
    """The prompts and, after each, the last answer with text before the next prompt (text only)."""
    out: list[Message] = []
    answer: Message | None = None

    def text_only(m: Message) -> Message:
        return dataclasses.replace(m, parts=tuple(p for p in m.parts if p.type == PartType.TEXT))

    for m in messages:
        if _is_prompt(m):
            if answer is not None:
                out.append(text_only(answer))
            answer = None
            out.append(text_only(m))
        elif m.role == Role.ASSISTANT and m.text().strip() and out:
            answer = m
    if answer is not None:
        out.append(text_only(answer))
    return out


def _title(repo: Repo, s: Session) -> str | None:
    """The fork's title: a continuation (an agent's, after `resume --into`) takes the one of the
    fork it continues, as the user named it; the agent's own is its first prompt, the history's."""
    for _ in range(merge_lineage.MAX_DEPTH):
        continues = s.source.get("continues")
        parent = sessionlog.load(repo, continues) if continues and continues == s.parent_id else None
        if parent is None:
            break
        s = parent.session
    return s.title


def _marker(ctx: Context, repo: Repo, lin: merge_lineage.Lineage, segments: list[merge_lineage.Segment],
            n: int, files: list[str] | None, prompts: int = 0) -> Message:
    s = lin.fork.session
    title = _title(repo, s) or s.title
    what = f"a digest of fork {s.id}" if files is not None else f"{n} message(s) from fork {s.id}"
    where = (f", which left this conversation after its message #{lin.at - 1}"
             if lin.ancestor == lin.target.session.id and lin.at else "")
    text = (f"{MARKER} What follows is {what}" + (f" \"{title}\"" if title else "")
            + f" ({s.agent}, started {to_iso(s.created_at) or 'at an unknown time'}){where}; "
            f"merged {to_iso(ctx.now_ms)}.")
    if files is not None:
        text += f" Its {prompts} prompt(s) and {n - prompts} final answer(s) follow. Files it changed: " + (
            ", ".join(files) if files else "none") + "."
    record = {"fork": s.id, "title": title, "agent": s.agent, "tip": str(lin.fork.tip),
              "segments": [seg.to_list() for seg in segments], "messages": n, "digest": files is not None,
              "files": files, "ancestor": lin.ancestor, "fork_point": lin.at - 1 if lin.ancestor else None}
    return Message(Role.USER, (Part.text(text),), created_at=ctx.now_ms, extra={MARKER_KEY: record})


def _tree(git: pygit2.Repository, oid: str | None) -> pygit2.Tree | None:
    obj = git.get(oid) if oid else None
    return obj.peel(pygit2.Tree) if isinstance(obj, pygit2.Commit) else None


def _changed(git: pygit2.Repository, a: pygit2.Tree | None, b: pygit2.Tree | None) -> list[str]:
    return [] if a is None or b is None else [p for p, _o, _n in restore.diff_trees(git, a, b)]


def _base(ctx: Context, lin: merge_lineage.Lineage, theirs: pygit2.Commit,
          ours_head: str | None) -> str | None:
    """The divergence checkpoint, or (unrelated sessions, or none recorded) the merge base of the
    commits the two checkpoints were made on."""
    if lin.base and _tree(ctx.repo.git, lin.base) is not None:
        return lin.base
    if ours_head and theirs.parents:
        found = ctx.repo.git.merge_base(theirs.parents[0].id, ours_head)
        return str(found) if found else None
    return None


def code_merged(ctx: Context, fork_id: str) -> str | None:
    """The fork's checkpoint whose code a merge brought into this worktree, if no undo took it back
    (the journal's summaries: ``merge F into T, code of C``; an undo's is ``undo `` and that)."""
    merged = None
    for e in journal.entries(ctx):
        what, undone = e.summary, 0
        while what.startswith("undo "):
            what, undone = what[5:], undone + 1
        hit = re.fullmatch(rf"merge {fork_id[:12]} into \S+, code of ([0-9a-f]+)", what)
        if hit:
            merged = None if undone % 2 else hit.group(1)
    try:  # the summary names it by its first 12 digits
        return None if merged is None else str(ctx.repo.git.revparse_single(merged).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _work_after(ctx: Context, lin: merge_lineage.Lineage) -> list[str]:
    """A note when the fork made tool calls after its latest checkpoint: the files they wrote are
    not in it (a checkpoint is taken at each prompt), and the merge cannot bring them."""
    rows = ctx.index.query(
        "SELECT c.session_id, c.worktree_path, m.seq FROM checkpoints c LEFT JOIN messages m "
        "ON m.session_id = c.session_id AND m.id = c.message_id WHERE c.id=?", (lin.theirs,))
    if not rows or rows[0][2] is None:
        return []
    sid, where, seq = rows[0]
    calls = ctx.index.query("SELECT count(*) FROM parts WHERE session_id=? AND seq>? AND type='tool_call'",
                            (sid, seq))[0][0]
    if not calls:
        return []
    return [f"the fork made {calls} tool call(s) after its latest checkpoint ({str(lin.theirs)[:7]}): "
            f"what they wrote is not merged; `git oxide checkpoint` in {where or 'its worktree'} first "
            "brings it"]


def merge(ctx: Context, fork_ref: str, *, into: str | None = None, code: bool = True,
          conversation: bool = True, digest_only: bool = False, dry_run: bool = False) -> MergeResult:
    lin = merge_lineage.find(ctx, fork_ref, into)
    if code and not ctx.repo.workdir.is_dir():
        raise OxideError(f"the worktree {ctx.repo.workdir} no longer exists")
    if not dry_run:
        journal.ensure_writable(ctx)  # a merge that could not be journaled changes nothing
    with contextlib.ExitStack() as stack:  # a dry run builds its objects in scratch: writes nothing
        repo = stack.enter_context(snapshots.scratch(ctx.repo)) if dry_run else ctx.repo
        return _merge(ctx, repo, lin, code=code, conversation=conversation, digest_only=digest_only,
                      dry_run=dry_run)


def _merge(ctx: Context, repo: Repo, lin: merge_lineage.Lineage, *, code: bool, conversation: bool,
           digest_only: bool, dry_run: bool) -> MergeResult:
    git = repo.git
    fork_id, target_id = lin.fork.session.id, lin.target.session.id
    earlier = _markers(ctx, repo, lin.target) if conversation else []
    segments, already = _not_merged(lin.segments, earlier)
    res = MergeResult(_describe(lin.fork), _describe(lin.target), lin.ancestor,
                      lin.at - 1 if lin.ancestor else None, None, lin.theirs, restore.FilePlan().to_dict(),
                      [], 0, already, digest_only, dry_run)
    theirs = git.get(lin.theirs) if lin.theirs else None
    if code and isinstance(theirs, pygit2.Commit):
        res.notes += _work_after(ctx, lin)
    # without a divergence checkpoint, the merge base of the commits the fork's checkpoint and
    # this worktree stand on (HEAD's): the digest's files are counted from it too
    head = None if git.head_is_unborn else str(git.head.target)
    base_id = _base(ctx, lin, theirs, head) if isinstance(theirs, pygit2.Commit) else lin.base
    res.base = base_id
    fork_files = _changed(git, _tree(git, base_id), _tree(git, lin.theirs))
    current = fp = merged = None
    prior = code_merged(ctx, fork_id) if code else None
    if code:
        if not isinstance(theirs, pygit2.Commit):
            res.notes.append("the fork has no checkpoint: there is no code of it to merge")
        elif prior == str(theirs.id):
            res.notes.append(f"its code (checkpoint {prior[:7]}) was merged into this worktree already")
        else:
            if prior and _tree(git, prior) is not None:  # merged before: what the fork changed since
                base_id = prior
                res.notes.append(f"its code was merged here before (checkpoint {prior[:7]}): only what it "
                                 "changed since comes in")
            current = snapshots.take(repo, kind="before-rewind", now_ms=ctx.now_ms, session_id=target_id,
                                     text=f"before merge of {fork_id[:12]}", keep=not dry_run)
            base_id = base_id or _base(ctx, lin, theirs, current.head)
            res.base = base_id
            base_tree = _tree(git, base_id)
            if base_tree is None:
                raise OxideError(f"no common state of the code of {fork_id[:12]} and this worktree",
                                 hint="merge the conversation alone with --conversation")
            ours_tree = git[current.tree].peel(pygit2.Tree)
            labels = ("worktree", f"base {str(base_id)[:12]}", f"fork {fork_id[:12]}")
            merged = merge_code.merge(git, base_tree, ours_tree, theirs.peel(pygit2.Tree), labels)
            # what the fork's checkpoint does not hold as it was (too large, unreadable, or taken
            # out when it was pushed) stays as it is here
            held_out = {str(s["path"]).rstrip("/"): str(s.get("reason") or "")
                        for s in snapshots.parse_commit(theirs, "").skipped if s.get("path")}
            mine_out = {str(s["path"]).rstrip("/") for s in current.skipped if s.get("path")}
            fp = restore.plan(git, ours_tree, git[merged.tree].peel(pygit2.Tree),
                              exclude=set(held_out) | mine_out, leave=agent_files.session_files(ctx.environ))
            res.files = fp.to_dict()
            res.conflicts = [c for c in merged.conflicts if c["path"] not in held_out]
            res.notes += [f"left {p} as it is: the fork's checkpoint does not hold it ({why})"
                          for p, why in sorted(held_out.items())]
            head = git.get(current.head) if current.head else None
            dirty = _changed(git, head.peel(pygit2.Tree) if head is not None else None, ours_tree)
            res.uncommitted = sorted(dirty)
    added: list[Message] = []
    if conversation:
        msgs = _messages(repo, segments, lin.target.session.agent)
        if digest_only and msgs:
            msgs = digest(msgs)
        if msgs:
            marker = _marker(ctx, repo, lin, segments, len(msgs), fork_files if digest_only else None,
                             prompts=sum(1 for m in msgs if _is_prompt(m)))
            added = [marker, *msgs]
    res.messages_added = len(added)
    t = lin.target.session
    if added and t.native_id:  # the agent's own file of it lacks them (its later turns import after them)
        res.notes.append(
            f"{t.agent}'s own copy of {t.id[:8]} does not hold the merged turns: for {t.agent} to see "
            f"them, continue it with `git oxide resume {t.id[:8]} --into {t.agent}`")
    if dry_run or (not added and (fp is None or not fp.paths)):
        return res
    assert current is None or current.id
    entry = journal.Entry("merge", ctx.now_ms, f"merge {fork_id[:12]} into {target_id[:12]}")
    if current is not None and fp is not None and merged is not None and fp.paths:
        entry.summary += f", code of {str(lin.theirs)[:12]}"
        store.record_checkpoint(ctx, current)
        res.before_checkpoint = current.id
        res.after_checkpoint = _after_checkpoint(ctx, current, merged.tree, fork_id)
        entry.files_before, entry.files_after = current.id, res.after_checkpoint
    if added:
        name = refs.session_ref(target_id)
        before = refs.read(ctx.repo.git, name)
        store.append(ctx, dataclasses.replace(lin.target.session, updated_at=ctx.now_ms), added)
        after = refs.read(ctx.repo.git, name)
        entry.refs[name] = [str(before) if before else None, str(after) if after else None]
    journal.record(ctx, entry)
    if fp is not None and fp.paths:
        res.written = restore.apply(git, ctx.repo.workdir, fp)
    return res


def _after_checkpoint(ctx: Context, before: snapshots.Checkpoint, tree: pygit2.Oid, fork_id: str) -> str:
    """A checkpoint of the worktree as the merge leaves it (what undo's journal names as after)."""
    git = ctx.repo.git
    old = git[before.id].peel(pygit2.Commit)
    body = old.message.replace(f"oxide: before merge of {fork_id[:12]}", f"oxide: merge of {fork_id[:12]}", 1)
    body = body.replace("Oxide-Kind: before-rewind", "Oxide-Kind: manual", 1)
    oid = pygit2.Oid(raw=ctx.repo.objects.rewrite_commit(old.id.raw, body, tree.raw))
    ref = refs.checkpoint_ref(before.session_id or "manual", str(oid))
    refs.update(git, {ref: (None, oid)}, "oxide: merge checkpoint")
    store.record_checkpoint(ctx, snapshots.parse_commit(git[oid].peel(pygit2.Commit), ref))
    return str(oid)
