"""`git oxide blame`: for each line of a file, the session, prompt, agent and model whose turn
wrote it, or ``human``, or ``agent or user`` (both changed it and nothing says which), or
``before oxide`` (older than the first checkpoint that covers it).

Committed lines go through `git blame` to their commit, and through its note on refs/notes/oxide
(which rebases and amends carry, see ``hooks.impl.job_rewrite``) to the checkpoint taken as it was
made; from there, and for lines not committed yet, the worktree's checkpoints are walked back
(``blame.timeline``) to the interval in which the line first appeared, and the tool calls that
ran in that interval say whose it is (``blame.calls``).
"""

from __future__ import annotations

import os
from typing import Any

from oxide_git.blame.calls import BEFORE, EITHER, Label
from oxide_git.blame.foreign import ForeignNotes
from oxide_git.blame.lookups import Lookups
from oxide_git.blame.memo import open_memo
from oxide_git.blame.porcelain import ZERO as _ZERO
from oxide_git.blame.porcelain import BadRevision, git_blame, relative
from oxide_git.blame.result import BlameResult, LineBlame
from oxide_git.blame.timeline import Placed, Timeline
from oxide_git.blame.versions import Version
from oxide_git.core.errors import NotFound, OxideError
from oxide_git.store.context import Context

__all__ = ["BadRevision", "blame_file"]


def blame_file(ctx: Context, path: str, *, rev: str | None = None,
               lines: tuple[int, int] | None = None, commits: set[str] | None = None) -> BlameResult:
    """Blame ``path`` (relative to the worktree's top, or absolute) in the worktree, or at ``rev``
    (a commit); ``lines`` (first, last), 1-based and inclusive, as `git blame -L` takes them;
    ``commits``: only lines of these commits are attributed (the others are left unknown)."""
    rel = relative(ctx, path)
    run = _Run(ctx, rel)
    result = _blame_file(ctx, run, rel, rev, lines, commits)
    run.objects.memo.save()
    return result


def _blame_file(ctx: Context, run: _Run, rel: str, rev: str | None, lines: tuple[int, int] | None,
                commits: set[str] | None) -> BlameResult:
    run.prepare()
    entries = git_blame(ctx, rel, rev, lines)
    final: Version | None = None
    pending: list[int] = []
    for e in entries:
        if e.commit == _ZERO:
            pending.append(e.final - 1)
    if pending:  # not committed: this worktree's own checkpoints, up to now
        try:
            data = (ctx.repo.workdir / rel).read_bytes()
            mtime = int(os.stat(ctx.repo.workdir / rel).st_mtime * 1000)
        except OSError as err:
            raise NotFound(f"cannot read {rel}: {err.strerror}") from err
        final = Version.of_bytes(data)
        head = run.objects.head(str(ctx.repo.git_dir))
        tl = run.timeline(ctx.repo.worktree_id, str(ctx.repo.workdir), head)
        placed = tl.walk(rel, final, len(tl.states), max(ctx.now_ms, mtime), pending, when_final=mtime)
        for ln, p in placed.items():
            run.placed[(_ZERO, ln)] = p
    by_commit: dict[str, list[Any]] = {}
    for e in entries:
        if e.commit != _ZERO:
            by_commit.setdefault(e.commit, []).append(e)
    for commit, es in by_commit.items():
        if commits is None or commit in commits:
            run.commit_lines(commit, es)
    out = []
    foreign: ForeignNotes | None = None
    for e in entries:
        key = (e.commit, e.final - 1) if e.commit == _ZERO else (e.commit, e.orig - 1)
        p = run.placed.get(key) or Placed(Label(BEFORE))
        lb, source = p.label, None
        if lb.who == BEFORE and e.commit != _ZERO and (commits is None or e.commit in commits):
            foreign = foreign or ForeignNotes(ctx.repo, ctx.repo.common_dir)
            got = foreign.label(e.commit, e.filename, e.orig)
            if got is not None:
                lb, source = got
        out.append(LineBlame(
            e.final, e.text, lb.who, lb.session_id, lb.message_id, lb.agent, lb.model,
            None if e.commit == _ZERO else e.commit, p.checkpoint,
            lb.when_ms if lb.when_ms is not None else (e.time * 1000 if e.time else None),
            p.before, source))
    res = BlameResult(rel, rev, out, _short_ids(ctx, out), _commit_abbrev(ctx, run.objects))
    res.after_now = any(tl.latest_message() > ctx.now_ms for tl in run.timelines.values())
    res.missing = _missing(ctx, run, out)
    return res


def _missing(ctx: Context, run: _Run, out: list[LineBlame]) -> dict[str, Any] | None:
    """What keeps lines from being attributed in this clone (None: nothing): commits whose notes
    name checkpoints that are not here, or sessions and no checkpoint at all (a clone pulled
    without ``--checkpoints``): the lines are then no older than oxide, only not told apart."""
    unknown = [ln for ln in out if ln.who in (BEFORE, EITHER)]
    if not unknown:
        return None
    if run.missing:
        lines = sum(ln.commit in run.missing for ln in unknown)
        if lines:
            return {"reason": "notes name checkpoints this clone does not have", "lines": lines,
                    "checkpoints": len({c for cps in run.missing.values() for c in cps}),
                    "hint": FETCH_HINT}
    try:
        bare = not run.checkpoint_count() and ctx.index.session_count()
    except OxideError:  # no index to ask: nothing to say
        return None
    if bare:
        return {"reason": "sessions but no checkpoints in this clone", "lines": len(unknown),
                "checkpoints": 0, "hint": FETCH_HINT}
    return None


FETCH_HINT = ("`git oxide pull --checkpoints` fetches them if they were pushed "
              "(`git oxide push --checkpoints` where they were made)")


# committed lines -------------------------------------------------------------------------------


class _Run:
    """What one blame learns once: timelines, notes, anchors."""

    def __init__(self, ctx: Context, rel: str) -> None:
        self.ctx = ctx
        common = str(ctx.repo.common_dir)
        self.objects = Lookups(common, open_memo(common, rel, ctx.environ))
        self.timelines: dict[tuple[str, str], Timeline] = {}
        self.placed: dict[tuple[str, int], Placed] = {}
        self.blobs: dict[str, Version] = {}
        self._checkpoints: dict[str, dict[str, Any]] | None = None
        self._by_head: dict[str, list[dict[str, Any]]] = {}
        self._holders: dict[str, dict[str, list[dict[str, Any]]]] = {}  # path -> blob -> checkpoints
        self.missing: dict[str, list[str]] = {}  # commit -> the checkpoints its note names, not here

    def checkpoint_count(self) -> int:
        self._load_checkpoints()
        return len(self._checkpoints or {})

    def timeline(self, worktree: str, path: str, default_base: str | None = None) -> Timeline:
        key = (worktree, path)
        if key not in self.timelines:
            self.timelines[key] = Timeline(self.ctx, self.objects, worktree, path, default_base, self.blobs)
        return self.timelines[key]

    def prepare(self) -> None:
        """What a blame reads whatever `git blame` says, read while it runs (the wait for its
        answer is most of a blame's time): the index's checkpoints, the notes tree, this
        worktree's timeline and the sessions that worked in it. A failure here is left for the
        reading that needs it to raise, after `git blame`'s own."""
        from oxide_git.core.errors import OxideError

        try:
            self._load_checkpoints()
            self.objects.notes_tree()
            ctx = self.ctx
            head = self.objects.head(str(ctx.repo.git_dir))
            tl = self.timeline(ctx.repo.worktree_id, str(ctx.repo.workdir), head)
            if len(tl.states) > 1:
                tl.prepare()
                if self._memo_older_than_index():
                    # a checkpoint or call the memo has not seen: an interval to replay, most
                    # likely, with the payload reader and the agents' tools, now
                    from oxide_git.agents import file_effects  # noqa: F401
                    from oxide_git.core import payload  # noqa: F401
        except (OxideError, OSError, ValueError):
            pass

    def _memo_older_than_index(self) -> bool:
        """Whether the index was written after the memo (a guess at what the run will need: the
        memo's keys, not this, decide what it serves)."""
        memo = self.objects.memo
        if memo.path is None:
            return False
        oxide = str(self.ctx.repo.oxide_dir)
        newest = 0
        for name in ("index.db", "index.db-wal"):  # an empty WAL is the one opening the index made
            try:
                st = os.stat(os.path.join(oxide, name))
            except OSError:
                continue
            if st.st_size:
                newest = max(newest, st.st_mtime_ns)
        return newest >= memo.written_ns

    def _load_checkpoints(self) -> None:
        if self._checkpoints is None:  # every checkpoint once: a query per commit costs more
            rows = [dict(r) for r in self.ctx.index.query(
                "SELECT id, worktree, worktree_path, created_at, head, tree FROM checkpoints "
                "ORDER BY created_at, rowid")]
            by_head: dict[str, list[dict[str, Any]]] = {}
            for r in rows:
                by_head.setdefault(r["head"], []).append(r)
            self._checkpoints, self._by_head = {r["id"]: r for r in rows}, by_head

    def anchor(self, commit: str,
               path: str | None = None) -> tuple[dict[str, Any] | None, list[str], int | None]:
        """The checkpoint taken as ``commit`` was made (its note's), else the last one on its
        parent before it and the commit's time (ms: the end of its second), which closes the
        interval after that checkpoint, else (no note, no checkpoint on the parent: a squash or
        rebase merge a host made, a cherry-pick without the hooks) the last checkpoint before it
        whose ``path`` is the commit's very file; and the sessions its note names."""
        note_checkpoints, note_sessions = self.objects.note(commit)
        self._load_checkpoints()
        assert self._checkpoints is not None
        named = [self._checkpoints[c] for c in note_checkpoints if c in self._checkpoints]
        if len(named) < len(note_checkpoints):
            self.missing[commit] = [c for c in note_checkpoints if c not in self._checkpoints]
        anchor = max(named, key=lambda r: int(r["created_at"] or 0)) if named else None
        closed_at = None
        if anchor is None:
            got = self.objects.commit(commit)
            if got is not None and got[2] is not None:
                limit = got[1] * 1000 + 999
                before = [r for r in self._by_head.get(got[2], []) if int(r["created_at"] or 0) <= limit]
                anchor = before[-1] if before else None
                closed_at = limit
                if anchor is None and path is not None:
                    anchor = self._holding(path, self.objects.blob_at(got[0], path), limit)
                    closed_at = None if anchor is not None else limit
        return anchor, list(note_sessions), closed_at

    def _holding(self, path: str, blob: str | None, limit: int) -> dict[str, Any] | None:
        """The last checkpoint made by ``limit`` (ms) whose ``path`` is blob ``blob``: where a
        commit that has no note nor a checkpoint on its parent took that file from. A host's
        squash or rebase merge copies the file of a commit the hooks noted, and the checkpoint
        that commit's note names holds it (a pull with --checkpoints brings both)."""
        assert self._checkpoints is not None
        first = next(iter(self._checkpoints.values()), None)
        if blob is None or first is None or int(first["created_at"] or 0) > limit:
            return None  # (a commit older than every checkpoint: nothing read)
        holders = self._holders.get(path)
        if holders is None:  # every checkpoint's version of the file, read once
            holders = self._holders[path] = {}
            for r in self._checkpoints.values():  # by time
                got = self.objects.blob_at(r["tree"], path) if r["tree"] else None
                if got is not None:
                    holders.setdefault(got, []).append(r)
        found = [r for r in holders.get(blob, ()) if int(r["created_at"] or 0) <= limit]
        return found[-1] if found else None

    def commit_lines(self, commit: str, entries: list[Any]) -> None:
        anchor, sessions, closed_at = self.anchor(commit, entries[0].filename)
        wanted = sorted({e.orig - 1 for e in entries})
        placed: dict[int, Placed] = {}
        if anchor is not None:
            tl = self.timeline(anchor["worktree"], anchor["worktree_path"] or "")
            version = self._version(commit, entries[0].filename)
            upto = tl.position.get(anchor["id"], len(tl.states))
            if closed_at is None:  # the commit's own checkpoint: the walk starts there
                placed = tl.walk(entries[0].filename, version, upto, int(anchor["created_at"] or 0), wanted,
                                 final_id=anchor["id"])
            else:  # no checkpoint of the commit (no git hooks): the commit closes the last interval
                placed = tl.walk(entries[0].filename, version, min(upto + 1, len(tl.states)), closed_at,
                                 wanted, slot=f"commit {commit}")
        for ln in wanted:
            p = placed.get(ln)
            if (p is None or p.label.who == BEFORE) and sessions and anchor is None:
                # the note names sessions but no checkpoint to tell their lines from yours
                p = Placed(Label(EITHER, self._session(sessions[0])))
            if p is not None:
                self.placed[(commit, ln)] = p

    def _session(self, ref: str) -> str | None:
        try:
            return self.ctx.index.resolve_session(ref)
        except OxideError:
            return ref

    def _version(self, commit: str, path: str) -> Version:
        got = self.objects.commit(commit)
        oid = self.objects.blob_at(got[0], path) if got is not None else None
        if oid is None:
            raise NotFound(f"{path} is not a file of commit {commit}")
        version = self.blobs.get(oid)
        if version is None:
            version = self.blobs[oid] = Version(oid, None, lambda: self.objects.blob(oid))
        return version


def _short_ids(ctx: Context, lines: list[LineBlame]) -> dict[str, str]:
    out: dict[str, str] = {}
    sessions = {ln.session_id for ln in lines if ln.session_id}
    cps = {c for ln in lines for c in (ln.checkpoint, ln.before_checkpoint) if c}
    if sessions:
        ab = ctx.index.session_abbrev()
        out.update({s: ab.of(s) for s in sessions})
    if cps:
        ab = ctx.index.checkpoint_abbrev()
        out.update({c: ab.of(c) for c in cps})
    return out


def _commit_abbrev(ctx: Context, objects: Lookups) -> Any:
    """A commit's abbreviation as pygit2's ``short_id`` gives it, worked out without pygit2 unless
    core.abbrev is set (the length libgit2 starts from then is its to read)."""
    default: list[bool] = []

    def short(c: str) -> str:
        if not default:
            from oxide_git.blame.cache import config_files

            files = config_files(str(ctx.repo.git_dir), str(ctx.repo.common_dir), ctx.environ)
            # no file names it (read raw: no `git config` process): libgit2 starts from 7
            named = files is None or any(b"abbrev" in (f or b"").lower() for f in files)
            default.append(not named or ctx.config("core.abbrev") is None)
        if len(c) == 40 and default[0]:
            try:
                return objects.short_id(c) or c[:12]
            except (OSError, ValueError):
                return c[:12]
        try:
            return str(ctx.repo.git[c].short_id)
        except (KeyError, ValueError):
            return c[:12]
    return short
