"""`git oxide push` / `pull`: exchange sessions, memory and notes with any git remote.

Pull fetches into ``refs/oxide/remotes/<remote>/`` and reconciles from there; a local ref is never
force-overwritten. A session appended on both sides stays local, and the other side's messages
become a fork session, so nothing is lost (see ``pull_session``). Every local ref a pull
moves is journaled, so `git oxide undo` puts them back (refs it created go to the trash).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pygit2

from oxide_git.core.errors import OxideError, Refused
from oxide_git.git import refs
from oxide_git.ops import checkpoint_screen, incoming, pull_session
from oxide_git.ops.remote_refs import REMOTES, RemoteError, git_cmd, mirror, namespace
from oxide_git.ops.remote_refs import fetch as fetch
from oxide_git.store import journal, logwrite
from oxide_git.store.context import Context
from oxide_git.store.notesmerge import merge_notes


@dataclass
class ShareResult:
    remote: str
    updated: dict[str, str] = field(default_factory=dict)  # ref -> what happened
    forks: list[dict[str, str]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    screened: list[dict[str, Any]] = field(default_factory=list)  # checkpoints redacted or withheld
    moved: dict[str, list[str | None]] = field(default_factory=dict, repr=False)  # ref -> [before, after]
    notes: list[str] = field(default_factory=list, repr=False)  # what the push says of ``screened``

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("moved", "notes")}

    def move(self, name: str, before: pygit2.Oid | None, after: pygit2.Oid) -> None:
        """Note a local ref this pull moved (the first before, the last after) for the journal."""
        first = self.moved[name][0] if name in self.moved else (str(before) if before else None)
        self.moved[name] = [first, str(after)]

    def summary(self) -> Counter[str]:
        return Counter(self.updated.values())


def remote_name(ctx: Context, remote: str | None) -> str:
    return remote or ctx.config("oxide.remote") or "origin"


def _kinds() -> list[str]:
    """What a push sends as it is (checkpoints go screened: ``checkpoint_screen``)."""
    return [refs.SESSIONS + "*", refs.MEMORY, refs.NOTES, *refs.TRACE_NOTES]


def pull(ctx: Context, remote: str | None = None, *, checkpoints: bool = False) -> ShareResult:
    """Fetch, screen (``incoming``), then bring every session, memory, notes (and checkpoints)
    up to date; reindex. A ref refused is named in ``problems`` and changes nothing here."""
    from oxide_git.store.reindex import reindex

    name = remote_name(ctx, remote)
    res = ShareResult(name)
    ns, git = namespace(name), ctx.repo.git
    # one pass over every ref (a team's store holds 200,000 with their mirrors: 130 ms a pass),
    # not a read per ref; the fetch moves only mirrors, which it returns
    everything = dict(refs.iter_refs(git, "refs/"))
    mirrored = {n: oid for n, oid in everything.items() if n.startswith(ns)}
    local = {n: str(oid) for n, oid in everything.items() if not n.startswith(REMOTES)}
    fetched = fetch(ctx, name, checkpoints=checkpoints, problems=res.problems, mirrored=mirrored)
    changed = {r: oid for r, oid in fetched.items() if local.get(r, "") != oid}
    # a session's log, the notes and the memory share objects only with their own older tips
    sessions_only = not any(r.startswith(refs.CHECKPOINTS) for r in changed)
    have = [local[r] for r in changed if r in local] if sessions_only else None
    refused = incoming.screen(ctx, changed, incoming.limits(ctx), have)
    for rname in sorted(changed):
        theirs = refs.read(git, mirror(rname, ns))
        if theirs is None:
            continue
        if rname in refused:
            res.problems.append(f"{name} {rname}: {refused[rname]}")
            continue
        try:
            _is_commit(git, theirs)
            if rname.startswith(refs.SESSIONS):
                _retry(pull_session.reconcile, ctx, rname[len(refs.SESSIONS):], theirs, res)
            elif rname.startswith(refs.CHECKPOINTS):
                _take_checkpoint(ctx, rname, theirs, res)
            elif rname == refs.NOTES:
                _retry(_reconcile_notes, ctx, theirs, res)
            elif rname in refs.TRACE_NOTES:
                _retry(_reconcile_notes, ctx, theirs, res, rname)
            elif rname == refs.MEMORY:
                _retry(_reconcile_memory, ctx, theirs, res)
        except OxideError as e:
            res.problems.append(f"{name} {rname}: {e.message}, left alone")
    session_ns = mirror(refs.SESSIONS + "x", ns)[:-1]
    for gone in sorted(n for n in mirrored if n.startswith(session_ns) and refs.read(git, n) is None):
        try:  # the fetch pruned its mirror: the remote no longer has the session
            _retry(pull_session.removed_there, ctx, gone[len(session_ns):], mirrored[gone], res)
        except OxideError as e:
            res.problems.append(f"{name} {refs.SESSIONS}{gone[len(session_ns):]}: {e.message}, left alone")
    if res.moved:  # a pull that changed nothing is not journaled: undo reverts what came before it
        journal.record(ctx, journal.Entry("pull", ctx.now_ms, f"pull {name}", refs=dict(res.moved)))
    done = reindex(ctx, sessions={r[len(refs.SESSIONS):] for r in res.moved if r.startswith(refs.SESSIONS)},
                   checkpoints=any(r.startswith(refs.CHECKPOINTS) for r in res.moved))
    res.problems.extend(done.problems or [])
    return res


def _is_commit(git: pygit2.Repository, oid: pygit2.Oid) -> None:
    kind, _size = git.odb.read_header(oid)
    if kind != pygit2.enums.ObjectType.COMMIT:
        raise OxideError(f"it points at a {pygit2.enums.ObjectType(kind).name.lower()}, not a commit")


def _take_checkpoint(ctx: Context, name: str, theirs: pygit2.Oid, res: ShareResult) -> None:
    """A checkpoint the store lacks: its ref names the commit it points at (its id), a commit, or
    the real checkpoint the commit is the redacted twin of (``checkpoint_screen``)."""
    git = ctx.repo.git
    if name.rsplit("/", 1)[1] not in (str(theirs), checkpoint_screen.twin_of(git[theirs])):
        raise OxideError("not a checkpoint (its name is not the commit it points at)")
    if refs.read(git, name) is None:
        refs.update(git, {name: (None, theirs)}, f"oxide: pull {res.remote}")
        res.move(name, None, theirs)
        res.updated[name] = "new"


def _retry(fn: Callable[..., None], *args: Any) -> None:
    refs.retry_on_move(lambda: fn(*args))  # another writer moved the ref: reconcile again on its tip


def _simple(git: pygit2.Repository, name: str, theirs: pygit2.Oid, res: ShareResult) -> pygit2.Oid | None:
    """New, equal, fast-forward or behind: done and None; diverged: the local tip to merge."""
    ours = refs.read(git, name)
    if ours == theirs:
        return None
    if ours is None or git.descendant_of(theirs, ours):
        refs.update(git, {name: (ours, theirs)}, f"oxide: pull {res.remote}")
        res.move(name, ours, theirs)
        res.updated[name] = "new" if ours is None else "fast-forward"
        return None
    if git.descendant_of(ours, theirs):
        return None  # we are ahead: push sends it
    return ours


def _merge_commit(ctx: Context, name: str, ours: pygit2.Oid, theirs: pygit2.Oid, tree: bytes,
                  what: str, res: ShareResult) -> pygit2.Oid:
    git = ctx.repo.git
    written = ctx.repo.objects.write_commit(tree, [ours.raw, theirs.raw], f"pull: merge {what}\n",
                                            logwrite.signature_at(ctx.now_ms))
    oid = pygit2.Oid(raw=written)
    refs.update(git, {name: (ours, oid)}, f"oxide: merge {what}")
    res.move(name, ours, oid)
    return oid


def _reconcile_memory(ctx: Context, theirs: pygit2.Oid, res: ShareResult) -> None:
    """Diverged memory: a three-way merge of the trees; a path changed on both sides keeps ours."""
    git = ctx.repo.git
    ours = _simple(git, refs.MEMORY, theirs, res)
    if ours is None:
        return
    index = git.merge_commits(ours, theirs)
    if index.conflicts is not None:
        for base, mine, other in list(index.conflicts):
            path = (mine or other or base).path
            del index.conflicts[path]
            keep = mine or other
            if keep is not None:
                index.add(pygit2.IndexEntry(keep.path, keep.id, keep.mode))
            res.problems.append(f"memory: {path} changed on both sides, kept ours")
    _merge_commit(ctx, refs.MEMORY, ours, theirs, index.write_tree(git).raw, "memory", res)
    res.updated[refs.MEMORY] = "merged"


def _reconcile_notes(ctx: Context, theirs: pygit2.Oid, res: ShareResult, name: str = refs.NOTES) -> None:
    """Diverged notes: oxide's are united per commit; a commit's Agent Trace or Git AI note
    (``name`` one of ``refs.TRACE_NOTES``) present on both sides keeps ours."""
    git = ctx.repo.git
    ours = _simple(git, name, theirs, res)
    if ours is None:
        return
    tree = merge_notes(ctx.repo.objects, git[ours].peel(pygit2.Tree).id.raw,
                       git[theirs].peel(pygit2.Tree).id.raw, union=name == refs.NOTES)
    _merge_commit(ctx, name, ours, theirs, tree, "notes", res)
    res.updated[name] = "merged"


def push(ctx: Context, remote: str | None = None, *, checkpoints: bool = False,
         dry_run: bool = False) -> ShareResult:
    """Push every oxide ref that is ahead (never forced); diverged refs are reported as rejected,
    but not a session kept behind the remote on purpose (``pull_session``: the remote's tip
    descends from ours and made our line its fork)."""
    name = remote_name(ctx, remote)
    res = ShareResult(name)
    git = ctx.repo.git
    specs = []
    for kind in _kinds():
        if kind.endswith("*"):
            if any(True for _ in refs.iter_refs(git, kind[:-1])):
                specs.append(f"{kind}:{kind}")
        elif refs.read(git, kind) is not None:
            specs.append(f"{kind}:{kind}")
    if checkpoints:  # never as they are: screened first (checkpoint_screen)
        screened = checkpoint_screen.screen_all(ctx)
        specs += checkpoint_screen.outgoing(ctx, screened)
        res.screened = [s.to_dict() for s in screened if not s.clean]
        res.notes = checkpoint_screen.report_lines(screened, name)
    if not specs:
        return res
    r = git_cmd(ctx, "push", "--porcelain", "--no-verify", *(["--dry-run"] if dry_run else []), name, *specs)
    kept = 0
    for line in r.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        flag, ref = parts[0], parts[1].partition(":")[2]
        if flag == "!" and "remote rejected" in parts[2]:  # not diverged: the remote would not take it
            res.problems.append(f"{name} {ref}: the remote refused it {parts[2].partition('] ')[2]}")
        elif flag == "!" and _behind(git, ref, namespace(name)):
            kept += 1
        elif flag == "!":
            res.rejected.append(ref)
        elif flag in ("*", " ", "+"):
            res.updated[ref] = "new" if flag == "*" else "pushed"
    if r.returncode != 0 and not res.rejected and not res.problems and not kept:
        raise RemoteError(f"push to {name!r} failed: {r.stderr.strip()}",
                          hint="check the remote with `git remote -v`, or set `git config oxide.remote`")
    return res


def _behind(git: pygit2.Repository, ref: str, ns: str) -> bool:
    """A session whose tip the remote's (as the last pull saw it) descends from: kept as it is."""
    if not ref.startswith(refs.SESSIONS):
        return False
    ours, theirs = refs.read(git, ref), refs.read(git, mirror(ref, ns))
    return ours is not None and theirs is not None and git.descendant_of(theirs, ours)


def check_pushed(res: ShareResult) -> None:
    """Raise when a push left refs behind (they diverged on the remote, or it refused them)."""
    if res.problems and not res.rejected:
        raise RemoteError(f"{res.remote} refused {len(res.problems)} ref(s)",
                          hint="`git fsck` on the remote says what it lacks; the refs stay here")
    if res.rejected:
        raise Refused(f"{len(res.rejected)} ref(s) changed on {res.remote} since your last pull: "
                      + ", ".join(res.rejected[:5]),
                      hint=f"run `git oxide pull {res.remote}` (it keeps both sides), then push again")
