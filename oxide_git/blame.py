"""`git oxide blame`: for each line of a file, the session, prompt, agent and model whose turn
wrote it, or ``human``, or ``agent or user`` (both changed it and nothing says which), or
``before oxide`` (older than the first checkpoint that covers it).

Committed lines go through `git blame` to their commit, and through its note on refs/notes/oxide
(which rebases and amends carry, see ``hook_impl.job_rewrite``) to the checkpoint taken as it was
made; from there, and for lines not committed yet, the worktree's checkpoints are walked back
(``blame_timeline``) to the interval in which the line first appeared, and the tool calls that
ran in that interval say whose it is (``blame_calls``).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

import pygit2

from . import notes
from .blame_calls import AGENT, BEFORE, EITHER, HUMAN, Label
from .blame_timeline import Placed, Timeline, Version
from .context import Context
from .errors import NotFound, OxideError
from .model import to_iso
from .repo import clean_git_env

WHO = (AGENT, HUMAN, EITHER, BEFORE)
_ZERO = "0" * 40


class BadRevision(OxideError):
    """A revision or path git cannot blame."""


@dataclass
class LineBlame:
    number: int  # 1-based, in the blamed version
    text: str
    who: str  # agent | human | agent or user | before oxide
    session_id: str | None = None
    message_id: str | None = None  # the prompt of the turn that wrote it
    agent: str | None = None
    model: str | None = None
    commit: str | None = None  # the commit that brought it (None: not committed)
    checkpoint: str | None = None  # the first checkpoint holding it (None: none yet)
    when_ms: int | None = None
    before_checkpoint: str | None = None  # the last checkpoint without it (rewind there to undo it)


@dataclass
class BlameResult:
    path: str
    rev: str | None
    lines: list[LineBlame]
    short: dict[str, str] = field(default_factory=dict)  # full id -> as people type it

    def id(self, full: str | None) -> str | None:
        return None if full is None else self.short.get(full, full)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: ids as `list` and `show` print them (shortest unique prefixes), times ISO."""
        rows = []
        for ln in self.lines:
            d = asdict(ln)
            for k in ("session_id", "checkpoint", "before_checkpoint", "commit"):
                d[k] = self.id(d[k])
            d["when"] = to_iso(ln.when_ms)
            rows.append(d)
        return {"path": self.path, "rev": self.rev, "lines": rows, "summary": summary(self)}


def blame_file(ctx: Context, path: str, *, rev: str | None = None,
               lines: tuple[int, int] | None = None, commits: set[str] | None = None) -> BlameResult:
    """Blame ``path`` (relative to the worktree's top, or absolute) in the worktree, or at ``rev``
    (a commit); ``lines`` (first, last), 1-based and inclusive, as `git blame -L` takes them;
    ``commits``: only lines of these commits are attributed (the others are left unknown)."""
    rel = _relative(ctx, path)
    entries = _git_blame(ctx, rel, rev, lines)
    run = _Run(ctx)
    final: Version | None = None
    pending: list[int] = []
    for e in entries:
        if e.commit == _ZERO:
            pending.append(e.final - 1)
    if pending:  # not committed: this worktree's own checkpoints, up to now
        try:
            data = (ctx.repo.workdir / rel).read_bytes()
            mtime = int(os.stat(ctx.repo.workdir / rel).st_mtime * 1000)
        except OSError as e:
            raise NotFound(f"cannot read {rel}: {e.strerror}") from e
        final = Version.of_bytes(data)
        tl = run.timeline(ctx.repo.worktree_id, str(ctx.repo.workdir))
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
    for e in entries:
        key = (e.commit, e.final - 1) if e.commit == _ZERO else (e.commit, e.orig - 1)
        p = run.placed.get(key) or Placed(Label(BEFORE))
        lb = p.label
        out.append(LineBlame(
            e.final, e.text, lb.who, lb.session_id, lb.message_id, lb.agent, lb.model,
            None if e.commit == _ZERO else e.commit, p.checkpoint,
            lb.when_ms if lb.when_ms is not None else (e.time * 1000 if e.time else None),
            p.before))
    res = BlameResult(rel, rev, out)
    res.short = _short_ids(ctx, out)
    return res


# committed lines -------------------------------------------------------------------------------


class _Run:
    """What one blame learns once: timelines, notes, anchors."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.git = ctx.repo.git
        self.timelines: dict[tuple[str, str], Timeline] = {}
        self.placed: dict[tuple[str, int], Placed] = {}

    def timeline(self, worktree: str, path: str) -> Timeline:
        key = (worktree, path)
        if key not in self.timelines:
            self.timelines[key] = Timeline(self.ctx, worktree, path)
        return self.timelines[key]

    def anchor(self, commit: str) -> tuple[dict[str, Any] | None, list[str]]:
        """The checkpoint taken as ``commit`` was made (its note's, else the last one on its
        parent before it), and the sessions its note names."""
        note = notes.read_note(self.git, commit)
        named = [c for c in note.get("checkpoints", []) if isinstance(c, str)]
        rows: list[Any] = []
        if named:
            marks = ",".join("?" * len(named))
            rows = self.ctx.index.query(
                f"SELECT id, worktree, worktree_path, created_at FROM checkpoints WHERE id IN ({marks}) "
                "ORDER BY created_at DESC, rowid DESC LIMIT 1", named)
        if not rows:
            obj = self.git.get(commit)
            if isinstance(obj, pygit2.Commit) and obj.parent_ids:
                rows = self.ctx.index.query(
                    "SELECT id, worktree, worktree_path, created_at FROM checkpoints WHERE head=? AND "
                    "created_at<=? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                    (str(obj.parent_ids[0]), obj.commit_time * 1000 + 999))
        return (dict(rows[0]) if rows else None), [s for s in note.get("sessions", []) if isinstance(s, str)]

    def commit_lines(self, commit: str, entries: list[Any]) -> None:
        anchor, sessions = self.anchor(commit)
        wanted = sorted({e.orig - 1 for e in entries})
        placed: dict[int, Placed] = {}
        if anchor is not None:
            tl = self.timeline(anchor["worktree"], anchor["worktree_path"] or "")
            version = self._version(commit, entries[0].filename)
            upto = tl.position.get(anchor["id"], len(tl.states))
            placed = tl.walk(entries[0].filename, version, upto, int(anchor["created_at"] or 0), wanted,
                             final_id=anchor["id"])
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
        tree = self.git[commit].peel(pygit2.Commit).tree
        entry = tree[path]
        return Version(entry.id, self.git[entry.id])


# git blame -------------------------------------------------------------------------------------


@dataclass
class _Entry:
    commit: str
    orig: int
    final: int
    filename: str
    text: str
    time: int | None


def _relative(ctx: Context, path: str) -> str:
    top = str(ctx.repo.workdir)
    full = os.path.normpath(path if os.path.isabs(path) else os.path.join(top, path))
    real_full, real_top = os.path.realpath(full), os.path.realpath(top)
    for f, t in ((full, top), (real_full, real_top)):
        if f == t or f.startswith(t.rstrip("/") + "/"):
            return os.path.relpath(f, t).replace(os.sep, "/")
    raise NotFound(f"{path} is outside the repository at {top}")


def _git_blame(ctx: Context, rel: str, rev: str | None, lines: tuple[int, int] | None) -> list[_Entry]:
    args = ["git", "blame", "--porcelain"]
    if lines:
        args += ["-L", f"{lines[0]},{lines[1]}"]
    if rev:
        args.append(rev)
    r = subprocess.run([*args, "--", rel], cwd=ctx.repo.workdir, capture_output=True, env=clean_git_env())
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip().removeprefix("fatal: ")
        if rev is None and os.path.isfile(ctx.repo.workdir / rel) and ("no such path" in err or "HEAD" in err):
            return _untracked(ctx, rel, lines)  # not in HEAD (new, or no commit yet): all of it is new
        raise BadRevision(f"cannot blame {rel}{' at ' + rev if rev else ''}: {err}",
                          hint="check the path and the revision (`git log -- PATH`)")
    return parse_porcelain(r.stdout)


def _untracked(ctx: Context, rel: str, lines: tuple[int, int] | None) -> list[_Entry]:
    data = (ctx.repo.workdir / rel).read_bytes()
    texts = data.decode("utf-8", "replace").splitlines()
    first, last = (lines if lines else (1, len(texts)))
    if lines and (first < 1 or first > max(len(texts), 1)):
        raise BadRevision(f"file {rel} has only {len(texts)} lines")
    return [_Entry(_ZERO, n, n, rel, texts[n - 1], None) for n in range(first, min(last, len(texts)) + 1)]


def parse_porcelain(out: bytes) -> list[_Entry]:
    """`git blame --porcelain` output as one entry per line."""
    entries: list[_Entry] = []
    names: dict[str, str] = {}
    times: dict[str, int] = {}
    current: list[str] | None = None
    for raw in out.split(b"\n"):
        if raw.startswith(b"\t"):
            if current is not None:
                sha, orig, final = current[0], int(current[1]), int(current[2])
                entries.append(_Entry(sha, orig, final, names.get(sha, ""),
                                      raw[1:].decode("utf-8", "replace"), times.get(sha)))
            current = None
            continue
        line = raw.decode("utf-8", "surrogateescape")
        word, _, rest = line.partition(" ")
        if current is None and len(word) in (40, 64) and all(c in "0123456789abcdef" for c in word):
            current = line.split(" ")
        elif current is not None and word == "filename":
            names[current[0]] = _unquote(rest)
        elif current is not None and word == "author-time":
            times[current[0]] = int(rest or 0)
    return entries


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        return name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode(
            "latin-1").decode("utf-8", "surrogateescape")
    return name


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
    git = ctx.repo.git
    for c in {ln.commit for ln in lines if ln.commit}:
        try:
            out[c] = git[c].short_id
        except (KeyError, ValueError):
            out[c] = c[:12]
    return out


# summary ---------------------------------------------------------------------------------------


def summary(result: BlameResult) -> dict[str, Any]:
    """Lines by agent, by session, written by you (human), and unknown (agent or user, before
    oxide)."""
    by_agent: dict[str, int] = {}
    by_session: dict[str, dict[str, Any]] = {}
    counts = dict.fromkeys(WHO, 0)
    for ln in result.lines:
        counts[ln.who] = counts.get(ln.who, 0) + 1
        if ln.who == AGENT:
            name = ln.agent or "?"
            by_agent[name] = by_agent.get(name, 0) + 1
            if ln.session_id:
                s = by_session.setdefault(result.id(ln.session_id) or "", {"agent": name, "lines": 0})
                s["lines"] += 1
    return {
        "path": result.path, "lines": len(result.lines),
        "agent": counts[AGENT], "by_agent": dict(sorted(by_agent.items(), key=lambda kv: -kv[1])),
        "by_session": dict(sorted(by_session.items(), key=lambda kv: -kv[1]["lines"])),
        "human": counts[HUMAN], "agent_or_user": counts[EITHER], "before_oxide": counts[BEFORE],
        "unknown": counts[EITHER] + counts[BEFORE],
    }
