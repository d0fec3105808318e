"""One file's import, session by session: messages buffered and handed to the store in batches.

A native session that oxide itself wrote into the agent's store (``resume --into``, recorded in
the original session's ``source.exports``) is that session again: nothing is stored until the
agent adds to it, and then it is a continuation hanging on the original.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Protocol

from oxide_git.core.model import Message, Session
from oxide_git.imports.place import Placement
from oxide_git.imports.report import FileReport
from oxide_git.store import logread
from oxide_git.store.context import Context

IMPORTED_BY_PATH = "imported_by_path"  # source key: the worktree that imported the file by path
BATCH = 2000  # messages per write; also written when FLUSH_BYTES of the file were read


class Sink(Protocol):
    def save(self, s: Session, start: int, msgs: list[Message]) -> Session: ...


class Writer:
    """Buffers one file's messages per session and hands them to ``sink`` in batches (None: a dry
    run, which only counts them). ``tips``: the log commit the file's last import left at each
    session's tip (the cursor's); a session whose tip is elsewhere now is written by what it
    holds (``import_place``), not at the cursor's numbers ``seqs``."""

    def __init__(self, ctx: Context, report: FileReport, seqs: dict[str, int], sink: Sink | None,
                 run: dict[str, Any] | None = None, here: str | None = None,
                 tips: dict[str, str] | None = None) -> None:
        self.ctx, self.report, self.sink = ctx, report, sink
        self.here = here  # the worktree that imports these files by path (see ``session``)
        self.tips = tips or {}
        self.place: dict[str, Placement] = {}  # sessions written by what their tip holds
        self.run = run  # what the files of one import share: the sessions oxide exported
        self.sessions: dict[str, Session] = {}
        self.pending: dict[str, list[Message]] = {}
        self.next_seq = dict(seqs)
        self.resume: tuple[int, Any, dict[str, int]] | None = None  # the last restart point
        self.saved_meta: set[str] = set()
        self._exports: dict[tuple[str, str], tuple[str, int]] | None = None
        self.held: dict[str, int] = {}  # continuations not stored until they outgrow our export
        self._counts: dict[str, int] = {}  # messages stored per session before this file's writes
        # a folder's worktree, worked out once per import (it lists the worktrees and reads each
        # one's gitdir file: 3% of parsing 1,500 small sessions when done for each)
        self._worktrees: dict[str | None, str | None] = (
            run.setdefault("worktree_of", {}) if run is not None else {})

    def exported_as(self, agent: str, native_id: str | None) -> tuple[str, int] | None:
        """(session, messages) when oxide wrote this native session itself (`resume --into`)."""
        if native_id is None:
            return None
        if self._exports is None and self.run is not None:
            self._exports = self.run.get("exports")
        if self._exports is None:
            self._exports = {}
            if self.run is not None:  # read once for a bulk import's 1,500 files, not once each
                self.run["exports"] = self._exports
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

    def _worktree_of(self, cwd: str | None) -> str | None:
        if cwd not in self._worktrees:
            self._worktrees[cwd] = self.ctx.repo.worktree_of(cwd)
        return self._worktrees[cwd]

    def session(self, s: Session) -> None:
        repo = self.ctx.repo
        old = self.sessions.get(s.id)
        if old is None and s.id not in self.place:
            tip = logread.tip(repo.objects, repo.common_dir, s.id)
            old = tip.session if tip else None
            self._anchor(s.id, tip)
        elif old is None:
            old = self.stored(s.id)
        s = replace(
            s, project_id=s.project_id or repo.project_id(),
            worktree=self._worktree_of(s.cwd), source={**s.source},
        )
        if s.worktree is None and (old is None or old.worktree is None) and self.here is not None:
            # Imported by path, from a folder that is no worktree here (another machine's): the
            # session is the importing worktree's (`list` shows it), and says so in its source.
            s = replace(s, worktree=self.here, source={**s.source, IMPORTED_BY_PATH: self.here})
        if old is not None:
            # a folder that is no worktree here keeps the session where it was
            s = replace(s, worktree=s.worktree or old.worktree, parent_id=s.parent_id or old.parent_id,
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

    def stored_count(self, sid: str) -> int:
        """How many messages the store held for ``sid`` when this file's import began."""
        if sid not in self._counts:
            log = logread.tip(self.ctx.repo.objects, self.ctx.repo.common_dir, sid)
            self._counts[sid] = log.count if log else 0
        return self._counts[sid]

    def stored(self, sid: str) -> Session | None:
        """The session as its log holds it now (None: it has no log)."""
        log = logread.tip(self.ctx.repo.objects, self.ctx.repo.common_dir, sid)
        return log.session if log else None

    def _anchor(self, sid: str, tip: logread.Tip | None) -> None:
        """Where this file's messages of ``sid`` go: at the cursor's numbers while the tip is the
        commit its last import left; else by what the tip holds."""
        if tip is None or self.tips.get(sid) == tip.commit.hex():
            return
        floor = min(self.next_seq.get(sid, 0), tip.count)  # a grown file: what it wrote before is not read
        self.place[sid] = Placement.of_tip(self.ctx.repo.objects, tip, floor)
        self.next_seq[sid] = self.place[sid].next

    def message(self, sid: str, m: Message) -> None:
        if sid not in self.sessions:
            self.report.problems.append(f"{self.report.path}: message for an unknown session, skipped")
            return
        self.pending[sid].append(m)
        if sid in self.place:
            self.place[sid].note(m)
        if len(self.pending[sid]) >= BATCH:
            self.flush(sid)

    def seqs_at_this_point(self) -> dict[str, int]:
        return {sid: self.place[sid].projected() if sid in self.place
                else self.next_seq[sid] + len(self.pending[sid]) for sid in self.sessions}

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
        runs = self.place[sid].place(msgs) if sid in self.place else [(start, msgs)] if msgs else []
        if self.sink is not None:
            for at, run in runs or ([] if sid in self.saved_meta else [(start, [])]):
                if run and at < self.stored_count(sid):
                    from oxide_git.store.kept_ids import keep_stored

                    run = keep_stored(self.ctx, sid, at, run)  # ids shown stay
                s = self.sink.save(s, at, run)
            self.saved_meta.add(sid)
        self.sessions[sid] = s
        self.report.messages += len(msgs)
        self.next_seq[sid] = self.place[sid].next if sid in self.place else start + len(msgs)
        self.pending[sid] = []

    def flush_all(self, final: bool = False) -> None:
        for sid in list(self.sessions):
            self.flush(sid, final)
