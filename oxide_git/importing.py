"""`git oxide import`: bring the agents' sessions into the store, incrementally and idempotently.

Agent modules parse (pure); this module decides what to read (discovery, per-file cursors) and
writes what they found through ``store`` in batches, so memory stays flat on huge transcripts.
A file is re-read from the last restart point its parser gave (``Resumable``); messages land at
fixed sequence numbers, so reading the same bytes twice rewrites identical trees and makes no
commit. Cursors live in the index (a cache): without them a file is parsed again from the start,
with the same result.
"""

from __future__ import annotations

import gc
import inspect
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .agents import (
    AGENT_NAMES,
    AgentEnv,
    FoundMessage,
    FoundSession,
    Problem,
    Resumable,
    Unknown,
    registry,
)
from .agents import agent as agent_module
from .context import Context
from .errors import OxideError, UnsupportedFormat
from .model import Message, Session

BATCH = 2000  # messages per write; also written when FLUSH_BYTES of the file were read
FLUSH_BYTES = 16 * 1024 * 1024
BACKGROUND_BYTES = 4 * 1024 * 1024  # from this much new data, index rows are written on a thread
WORKER_BYTES = 8 * 1024 * 1024  # from this much, the file is parsed in a child process (import_worker)
Progress = Callable[[int, int], None]


@dataclass
class FileReport:
    agent: str
    path: str
    state: str  # new, grown, changed, unchanged, failed
    sessions: list[str] = field(default_factory=list)
    messages: int = 0
    problems: list[str] = field(default_factory=list)
    # (record type, agent version) -> how many records of a type the importer does not know
    unknown: dict[tuple[str, str | None], int] = field(default_factory=dict)
    unknown_at_resume: dict[tuple[str, str | None], int] = field(default_factory=dict)
    held: list[str] = field(default_factory=list)  # what oxide wrote itself, with nothing new yet

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        del d["unknown_at_resume"], d["held"]
        d["unknown"] = [{"type": k, "version": v, "count": n} for (k, v), n in self.unknown.items()]
        return d


@dataclass
class ImportReport:
    files: list[FileReport] = field(default_factory=list)
    dry_run: bool = False

    @property
    def messages(self) -> int:
        return sum(f.messages for f in self.files)

    @property
    def sessions(self) -> int:
        return len({s for f in self.files for s in f.sessions})

    @property
    def problems(self) -> list[str]:
        return [p for f in self.files for p in f.problems]

    def unknown(self) -> dict[tuple[str, str, str | None], int]:
        """(agent, record type, agent version) -> count, over every file."""
        out: dict[tuple[str, str, str | None], int] = {}
        for f in self.files:
            for (kind, version), n in f.unknown.items():
                key = (f.agent, kind, version)
                out[key] = out.get(key, 0) + n
        return out

    def drift_warnings(self) -> list[str]:
        """One line per record type no importer knows: format drift is never silent."""
        out = []
        for (agent, kind, version), n in sorted(self.unknown().items(), key=lambda x: (x[0][0], x[0][1])):
            what = "record" if n == 1 else "records"
            made = f" ({version})" if version else ""
            out.append(f"{n} {agent} {what} of unknown type '{kind}'{made} kept as other parts")
        return out


def agent_env(ctx: Context) -> AgentEnv:
    return AgentEnv(
        home=ctx.home, environ=ctx.environ,
        worktrees=tuple(ctx.repo.worktrees()), project_id=ctx.repo.project_id(),
    )


def discover(ctx: Context, agents: list[str] | None = None) -> list[tuple[str, Path]]:
    """Every (agent, file) in the agents' own stores that holds sessions of this project."""
    env = agent_env(ctx)
    found: list[tuple[str, Path]] = []
    reg = registry()
    for name in agents or AGENT_NAMES:
        try:
            found += [(name, p) for p in reg[name].discover(env)]
        except OSError:
            continue
    return found


def expand(agent: str, paths: list[Path]) -> list[tuple[str, Path]]:
    """Files given on the command line: folders are searched for the agent's files."""
    patterns = {"claude": ["*.jsonl"], "codex": ["*.jsonl", "*.json"], "aider": [".aider.chat.history.md"],
                "opencode": ["*.json", "opencode.db"]}[agent]
    out: list[tuple[str, Path]] = []
    for p in paths:
        if p.is_dir():
            if agent == "opencode" and (p / "storage" / "session").is_dir():
                p = p / "storage"
            if agent == "opencode" and (p / "session").is_dir():
                out += [(agent, f) for f in sorted((p / "session").glob("*/*.json"))]
                continue
            for pat in patterns:
                out += [(agent, f) for f in sorted(p.rglob(pat)) if f.is_file()]
        elif p.exists():
            out.append((agent, p))
        else:
            raise OxideError(f"{p}: no such file or directory")
    return out


class _Store:
    """Where a file's batches go: git, then this process's index (its rows on a thread of their
    own for a big file). Also links a new session to the one whose history it copied."""

    def __init__(self, ctx: Context, background: bool) -> None:
        self.ctx = ctx
        # A big file: its index rows are written on another core while the next batch is parsed.
        self.queue = None
        if background:
            from .index_queue import IndexQueue

            self.queue = IndexQueue(ctx.index.path)
        self.linked: dict[str, Session] = {}  # sessions found to be forks, by id

    @property
    def later(self) -> Callable[[Callable[[Any], None]], None] | None:
        return self.queue.submit if self.queue is not None else None

    def link(self, s: Session, start: int, native_ids: list[str | None]) -> Session:
        """``s`` with the parent its first batch revealed (an agent's resume-by-copy or fork)."""
        if s.parent_id is not None:
            return s
        known = self.linked.get(s.id)
        if known is not None:
            return replace(s, parent_id=known.parent_id, fork_message_id=known.fork_message_id)
        if start != 0 or not native_ids:
            return s
        if self.queue is not None:
            self.queue.drain()  # it reads what earlier batches indexed
        s = _link_copied_history(self.ctx, s, native_ids)
        if s.parent_id is not None:
            self.linked[s.id] = s
        return s

    def save(self, s: Session, start: int, msgs: list[Message]) -> Session:
        from . import store  # git and what writes to it: not loaded when nothing changed

        s = self.link(s, start, [m.native_id for m in msgs])
        store.save(self.ctx, s, dict(enumerate(msgs, start)), summary=summary(s, len(msgs)), later=self.later)
        return s

    def close(self, raise_error: bool = True) -> None:
        """Every batch indexed (raises what an index write raised)."""
        if self.queue is not None:
            queue, self.queue = self.queue, None
            queue.close(raise_error)


def summary(s: Session, n: int) -> str:
    return f"import {n} message(s) from {s.agent}"


class Sink(Protocol):
    def save(self, s: Session, start: int, msgs: list[Message]) -> Session: ...


class _Writer:
    """Buffers one file's messages per session and hands them to ``sink`` in batches (None: a dry
    run, which only counts them)."""

    def __init__(self, ctx: Context, report: FileReport, seqs: dict[str, int], sink: Sink | None) -> None:
        self.ctx, self.report, self.sink = ctx, report, sink
        self.sessions: dict[str, Session] = {}
        self.pending: dict[str, list[Message]] = {}
        self.next_seq = dict(seqs)
        self.resume: tuple[int, Any, dict[str, int]] | None = None  # the last restart point
        self.saved_meta: set[str] = set()
        self._exports: dict[tuple[str, str], tuple[str, int]] | None = None
        self.held: dict[str, int] = {}  # continuations not stored until they outgrow our export

    def exported_as(self, agent: str, native_id: str | None) -> tuple[str, int] | None:
        """(session, messages) when oxide wrote this native session itself (`resume --into`)."""
        if native_id is None:
            return None
        if self._exports is None:
            self._exports = {}
            for sid, source in self.ctx.index.query(
                    "SELECT id, source FROM sessions WHERE source LIKE '%\"exports\"%'"):
                try:
                    exports = json.loads(source).get("exports") or {}
                except (ValueError, AttributeError):
                    continue
                for a, e in exports.items():
                    if isinstance(e, dict) and isinstance(e.get("native_id"), str):
                        self._exports[(a, e["native_id"])] = (sid, int(e.get("messages") or 0))
        return self._exports.get((agent, native_id))

    def session(self, s: Session) -> None:
        repo = self.ctx.repo
        s = replace(
            s, project_id=s.project_id or repo.project_id(),
            worktree=repo.worktree_of(s.cwd), source={**s.source},
        )
        old = self.sessions.get(s.id) or self._stored(s.id)
        if old is not None:
            s = replace(s, parent_id=s.parent_id or old.parent_id,
                        fork_message_id=s.fork_message_id or old.fork_message_id,
                        redactions=old.redactions or s.redactions, source={**old.source, **s.source})
        origin = self.exported_as(s.agent, s.native_id)
        if origin is not None and origin[0] != s.id:
            # What we wrote ourselves is that session: only what the agent added after it makes
            # a session of its own, a continuation hanging on the original.
            s = replace(s, parent_id=origin[0], source={**s.source, "continues": origin[0]})
            if old is None:
                self.held.setdefault(s.id, origin[1])
        self.sessions[s.id] = s
        self.pending.setdefault(s.id, [])
        self.next_seq.setdefault(s.id, 0)
        if s.id not in self.report.sessions:
            self.report.sessions.append(s.id)

    def _stored(self, sid: str) -> Session | None:
        from . import logwrite

        log = logwrite.tip(self.ctx.repo.objects, self.ctx.repo.common_dir, sid)
        return log.session if log else None

    def message(self, sid: str, m: Message) -> None:
        if sid not in self.sessions:
            self.report.problems.append(f"{self.report.path}: message for an unknown session, skipped")
            return
        self.pending[sid].append(m)
        if len(self.pending[sid]) >= BATCH:
            self.flush(sid)

    def seqs_at_this_point(self) -> dict[str, int]:
        return {sid: self.next_seq[sid] + len(self.pending[sid]) for sid in self.sessions}

    def flush(self, sid: str, final: bool = False) -> None:
        msgs = self.pending[sid]
        s = self.sessions[sid]
        start = self.next_seq[sid]
        if sid in self.held:
            if start + len(msgs) <= self.held[sid]:
                if final:  # nothing of the agent's own yet: no session, and the file stays unread
                    self.report.sessions.remove(sid) if sid in self.report.sessions else None
                    self.report.held.append(sid)
                return  # kept pending: stored whole once the agent adds to it
            del self.held[sid]
        if msgs:
            last = max((m.created_at for m in msgs if m.created_at), default=None)
            if last and (s.updated_at is None or last > s.updated_at):
                s = replace(s, updated_at=last)
        if self.sink is not None and (msgs or sid not in self.saved_meta):
            s = self.sink.save(s, start, msgs)
            self.saved_meta.add(sid)
        self.sessions[sid] = s
        self.report.messages += len(msgs)
        self.next_seq[sid] = start + len(msgs)
        self.pending[sid] = []

    def flush_all(self, final: bool = False) -> None:
        for sid in list(self.sessions):
            self.flush(sid, final)


def _link_copied_history(ctx: Context, s: Session, native_ids: list[str | None]) -> Session:
    """A session whose first messages (their ``native_ids``) are another session's (an agent's
    resume-by-copy or fork) becomes a fork of it instead of an unrelated session."""
    first = next((n for n in native_ids if n), None)
    hint = s.extra.get("forked_from") or s.extra.get("parent_native_id")
    if hint:
        rows = ctx.index.query("SELECT id FROM sessions WHERE native_id=? AND id!=?", (str(hint), s.id))
        if rows:
            return replace(s, parent_id=rows[0][0])
    if not first:
        return s
    rows = ctx.index.query(
        "SELECT m.session_id FROM messages m JOIN sessions x ON x.id=m.session_id "
        "WHERE m.native_id=? AND m.session_id!=? AND x.agent=? LIMIT 1", (first, s.id, s.agent))
    if not rows:
        return s
    parent = rows[0][0]
    theirs = ctx.index.query(
        "SELECT id, native_id FROM messages WHERE session_id=? ORDER BY seq", (parent,))
    shared = None
    for mine, (mid, nid) in zip(native_ids, theirs, strict=False):
        if mine != nid:
            break
        shared = mid
    return replace(s, parent_id=parent, fork_message_id=shared)


def _feed(writer: _Writer, events: Any, path: Path, size: int, flushed_at: int,
          progress: Progress | None) -> None:
    report = writer.report
    try:
        for ev in events:
            if isinstance(ev, FoundMessage):
                writer.message(ev.session_id, ev.message)
            elif isinstance(ev, FoundSession):
                writer.session(ev.session)
            elif isinstance(ev, Resumable):
                if ev.offset - flushed_at > FLUSH_BYTES:  # bounded memory on huge transcripts
                    writer.flush_all()
                    flushed_at = ev.offset
                writer.resume = (ev.offset, ev.state, writer.seqs_at_this_point())
                if report.unknown:
                    report.unknown_at_resume = dict(report.unknown)
                if progress:
                    progress(ev.offset, size)
            elif isinstance(ev, Problem):
                where = f"{path}:{ev.line}" if ev.line else str(path)
                report.problems.append(f"{where}: {ev.text}")
            elif isinstance(ev, Unknown):
                key = (ev.kind, ev.version)
                report.unknown[key] = report.unknown.get(key, 0) + 1
    except (UnsupportedFormat, OSError, UnicodeError) as e:
        report.problems.append(f"{path}: {getattr(e, 'message', e)}")
        report.state = "failed"


def import_file(
    ctx: Context, agent: str, path: Path, *, dry_run: bool = False,
    progress: Progress | None = None,
) -> FileReport:
    parser = agent_module(agent)
    key = str(path.resolve())
    try:
        st = path.stat()
    except OSError as e:
        return FileReport(agent, str(path), "failed", problems=[f"{path}: {e.strerror}"])
    cur = ctx.index.cursor(key)
    offset, state, seqs = 0, None, {}
    if cur is None:
        kind = "new"
    elif cur["size"] == st.st_size and cur["mtime_ns"] == st.st_mtime_ns:
        return FileReport(agent, str(path), "unchanged")
    elif st.st_size >= cur["size"] and cur["offset"] > 0:
        kind, offset = "grown", cur["offset"]
        state, seqs = cur["state"].get("parser"), cur["state"].get("seqs", {})
    else:
        kind = "changed"
    report = FileReport(agent, str(path), kind)
    kwargs: dict[str, Any] = {"offset": offset, "state": state}
    if "env" in inspect.signature(parser.parse).parameters:
        kwargs["env"] = agent_env(ctx)  # a shared store (opencode.db) holds other projects too

    def read(sink: Sink | None, progress: Progress | None) -> tuple[int, Any, dict[str, int]] | None:
        """Parse the file into ``sink``; the last restart point reached."""
        writer = _Writer(ctx, report, seqs, sink)
        if state is not None:
            for sid in seqs:
                stored = writer._stored(sid)
                if stored is not None:
                    writer.session(stored)
        _feed(writer, parser.parse(path, **kwargs), path, st.st_size, offset, progress)
        writer.flush_all(final=True)
        return writer.resume

    big = st.st_size - offset
    if dry_run:
        resume = read(None, progress)
    elif big >= WORKER_BYTES and _worker_available():
        from . import import_worker

        resume = import_worker.run(_Store(ctx, background=True), report, read, progress)
    else:
        sink = _Store(ctx, background=big >= BACKGROUND_BYTES)
        try:
            resume = read(sink, progress)
            sink.close()
        finally:
            sink.close(raise_error=False)  # on an unexpected error: stop the index thread, keep the error
    if report.held and not report.sessions:
        report.state = "unchanged"  # only what oxide wrote there itself
    if report.held:
        resume = (0, {}, {})  # read whole again next time: the continuation needs every message
    if not report.sessions and report.state not in ("failed", "unchanged"):
        report.problems.append(f"{path}: no {agent} session found in it")
        report.state = "failed"
    if not dry_run and report.state != "failed" and resume is not None:
        with ctx.index.write() as conn:
            ctx.index.put_cursor(conn, key, agent, st.st_size, st.st_mtime_ns, resume[0],
                                 {"parser": dict(resume[1]), "seqs": resume[2],
                                  **_count_unknown(cur if kind == "grown" else None, report)})
    return report


def _count_unknown(cur: dict[str, Any] | None, report: FileReport) -> dict[str, list[list[Any]]]:
    """The file's unknown record types as its cursor keeps them (``doctor`` sums them), and
    ``report.unknown`` made what this import added. A file that grew is read again from the last
    restart point, so the counts are kept both at that point and at the end of what was read."""
    def load(key: str) -> dict[tuple[str, str | None], int]:
        return {(k, v): int(n) for k, v, n in (cur or {}).get("state", {}).get(key, [])}

    def dump(c: dict[tuple[str, str | None], int]) -> list[list[Any]]:
        return [[k, v, n] for (k, v), n in sorted(c.items(), key=lambda x: x[0][0]) if n]

    base, before = load("unknown_at_resume"), load("unknown")
    at_resume = {k: base.get(k, 0) + report.unknown_at_resume.get(k, 0)
                 for k in base.keys() | report.unknown_at_resume.keys()}
    total = {k: base.get(k, 0) + report.unknown.get(k, 0) for k in base.keys() | report.unknown.keys()}
    report.unknown = {k: n - before.get(k, 0) for k, n in total.items() if n > before.get(k, 0)}
    return {"unknown": dump(total), "unknown_at_resume": dump(at_resume)}


def import_sessions(
    ctx: Context, items: list[tuple[str, Path]], *, dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Import every (agent, path); a failing file never stops the others."""
    # Parsing allocates millions of short-lived objects that form no cycles: the cyclic
    # collector's passes over them cost 12-15% of a large import and freed nothing (the peak RSS
    # of a 200 MB import is the same without them).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _import_all(ctx, items, dry_run, progress)
    finally:
        if collecting:
            gc.enable()


def _import_all(ctx: Context, items: list[tuple[str, Path]], dry_run: bool,
                progress: Progress | None) -> ImportReport:
    report = ImportReport(dry_run=dry_run)
    total = sum(_size(p) for _a, p in items) or 1
    done = 0
    for agent, path in items:
        base = done

        def on_progress(n: int, _size_: int, base: int = base) -> None:
            if progress:
                progress(base + n, total)

        report.files.append(import_file(ctx, agent, path, dry_run=dry_run, progress=on_progress))
        done += _size(path)
        if progress:
            progress(done, total)
    if not dry_run:
        _follow_latest(ctx, {s for f in report.files for s in f.sessions})
    return report


def _follow_latest(ctx: Context, imported: set[str]) -> None:
    """This worktree's current session becomes the newest session just imported into it."""
    if not imported:
        return
    rows = [r for r in ctx.index.session_rows(worktree=ctx.repo.worktree_id) if r["id"] in imported]
    if not rows:
        return
    from . import store

    current = store.current_session(ctx)
    latest = rows[0]
    cur_rows = ctx.index.session_rows(ids=[current]) if current else []
    if not cur_rows or (latest["updated_at"] or 0) >= (cur_rows[0]["updated_at"] or 0):
        store.set_current_session(
            ctx, latest["id"], why="the newest session `git oxide import` brought into this worktree")


def _worker_available() -> bool:
    from .import_worker import available

    return available()


def _size(p: Path) -> int:
    try:
        return os.stat(p).st_size
    except OSError:
        return 0
