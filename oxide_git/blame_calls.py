"""Which agent tool calls ran in a worktree between two checkpoints, and what they did to a file.

For `git oxide blame`: the calls come from the index (tool-call parts and their messages' times,
the results' times and errors) for the sessions that worked in the worktree; a call's arguments
are read from its session log only when it may have touched the file. ``explain`` turns the calls
that touched a file between two states into the steps that replay them (``agents.file_effects``):
a line the replay produces is the agent's, a line it does not is the user's, and when a replay
cannot apply (the file was not what the agent saw) the rest is "agent or user".
"""

from __future__ import annotations

import os
import posixpath
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from . import sessionlog
from .agents import file_effects, tools
from .context import Context
from .model import Message, PartType
from .titles import is_real_prompt

AGENT, HUMAN, EITHER, BEFORE = "agent", "human", "agent or user", "before oxide"


@dataclass(frozen=True)
class Label:
    """Who wrote a line and in which turn (``message_id`` is that turn's prompt)."""

    who: str
    session_id: str | None = None
    message_id: str | None = None
    agent: str | None = None
    model: str | None = None
    when_ms: int | None = None


@dataclass
class Call:
    session_id: str
    seq: int
    idx: int
    name: str
    start: int | None  # ms: the call was recorded
    end: int | None  # ms: its result was recorded (the call's work was done by then)
    failed: bool = False


@dataclass
class Explanation:
    """Replay of the calls that touched a file in one interval: each step's text and whose it is
    (from the interval's first state on), and the label of the lines no step explains."""

    steps: list[tuple[str | None, Label]] = field(default_factory=list)
    rest: Label = Label(HUMAN)


def canon(path: str, aliases: tuple[tuple[str, str], ...]) -> str:
    p = posixpath.normpath(path)
    for raw, real in aliases:
        if p == raw or p.startswith(raw + "/"):
            return real + p[len(raw):]
    return p


class WorktreeCalls:
    """The tool calls of every session that worked in one worktree (by its id and path)."""

    def __init__(self, ctx: Context, worktree: str, path: str) -> None:
        self.ctx = ctx
        self.path = path
        real = os.path.realpath(path) if path else path
        self.aliases = ((path.rstrip("/"), real.rstrip("/")),) if path and real != path else ()
        rows = ctx.index.query(
            "SELECT id, agent, cwd, model FROM sessions WHERE worktree=? OR cwd=? OR cwd LIKE ?",
            (worktree, path, path.rstrip("/") + "/%"))
        inside = [r for r in rows if not r["cwd"] or not path or self._inside(r["cwd"])]
        self.sessions: dict[str, Any] = {r["id"]: dict(r) for r in inside}
        self.timed: set[str] = set()
        self.calls: list[Call] = []
        self._messages: dict[tuple[str, int], Message | None] = {}
        self._logs: dict[str, Any] = {}
        self._prompts: dict[str, list[tuple[int, str]]] = {}
        if self.sessions:
            self._load()
        self._starts = [c.start if c.start is not None else 0 for c in self.calls]
        self._longest = max((c.end - c.start for c in self.calls
                             if c.start is not None and c.end is not None), default=0) + 1

    def _inside(self, cwd: str) -> bool:
        c, top = canon(cwd, self.aliases), canon(self.path, self.aliases)
        return c == top or c.startswith(top.rstrip("/") + "/")

    def _load(self) -> None:
        ids = list(self.sessions)
        marks = ",".join("?" * len(ids))
        for r in self.ctx.index.query(
                f"SELECT session_id, count(DISTINCT created_at) FROM messages WHERE session_id IN ({marks}) "
                "GROUP BY session_id", ids):
            if r[1] > 1:  # one time for every message (Aider's): no order in time to go by
                self.timed.add(r[0])
        results = {(r[0], r[1]): (r[2], bool(r[3])) for r in self.ctx.index.query(
            "SELECT p.session_id, p.call_id, m.created_at, p.is_error FROM parts p JOIN messages m "
            f"ON m.session_id=p.session_id AND m.seq=p.seq WHERE p.type='tool_result' "
            f"AND p.session_id IN ({marks})", ids)}
        for r in self.ctx.index.query(
                "SELECT p.session_id, p.seq, p.idx, p.name, p.call_id, m.created_at FROM parts p JOIN messages m "
                f"ON m.session_id=p.session_id AND m.seq=p.seq WHERE p.type IN ('tool_call', 'patch') "
                f"AND p.session_id IN ({marks}) ORDER BY m.created_at, p.session_id, p.seq, p.idx", ids):
            if r["name"] in file_effects.READ_ONLY:
                continue
            end, failed = results.get((r["session_id"], r["call_id"]), (None, False))
            timed = r["session_id"] in self.timed
            self.calls.append(Call(r["session_id"], r["seq"], r["idx"], r["name"] or "",
                                   r["created_at"] if timed else None, end if timed else None, failed))
        self.calls.sort(key=lambda c: (c.start is not None, c.start or 0, c.session_id, c.seq, c.idx))

    # calls in an interval -------------------------------------------------------------------------

    def between(self, t0: int, t1: int, governing: tuple[str, str | None] | None) -> list[Call]:
        """Calls whose work overlaps (t0, t1], in order; calls of sessions without times count when
        they belong to the governing prompt's turn (the prompt checkpoint the interval starts in)."""
        # Calls are sorted by start; one that started before t0 - (the longest call) ended before t0.
        lo = bisect_right(self._starts, t0 - self._longest)
        out = []
        hi = bisect_right(self._starts, t1)
        for c in self.calls[lo:hi]:
            if c.start is None or c.failed:
                continue
            if (c.end if c.end is not None else c.start) > t0:
                out.append(c)
        if governing is not None and governing[0] in self.sessions and governing[0] not in self.timed:
            first, stop = self._turn_span(governing[0], governing[1])
            out += [c for c in self.calls if c.start is None and not c.failed and c.session_id == governing[0]
                    and first <= c.seq < stop]
        return out

    def _turn_span(self, sid: str, message_id: str | None) -> tuple[int, int]:
        prompts = self.prompts(sid)
        at = 0
        if message_id:
            rows = self.ctx.index.query("SELECT seq FROM messages WHERE session_id=? AND id=?", (sid, message_id))
            at = int(rows[0][0]) if rows else 0
        seqs = [q for q, _ in prompts]
        i = bisect_left(seqs, at)
        first = seqs[i] if i < len(seqs) else at
        return first, (seqs[i + 1] if i + 1 < len(seqs) else 1 << 62)

    # what a call did -----------------------------------------------------------------------------

    def message(self, sid: str, seq: int) -> Message | None:
        key = (sid, seq)
        if key not in self._messages:
            log = self._logs.get(sid)
            if log is None and sid not in self._logs:
                log = self._logs[sid] = sessionlog.load(self.ctx.repo.git, sid)
            self._messages[key] = sessionlog.message_at(self.ctx.repo.git, log.commit.tree, seq) if log else None
        return self._messages[key]

    def prompts(self, sid: str) -> list[tuple[int, str]]:
        """The session's real prompts (seq, message id): what a person typed, not tool results or
        the harness's context."""
        got = self._prompts.get(sid)
        if got is None:
            rows = self.ctx.index.query(
                "SELECT m.seq, m.id FROM messages m WHERE m.session_id=? AND m.role='user' AND m.text!='' "
                "AND NOT EXISTS (SELECT 1 FROM parts p WHERE p.session_id=m.session_id AND p.seq=m.seq "
                "AND p.type='tool_result') ORDER BY m.seq", (sid,))
            got = []
            for r in rows:
                m = self.message(sid, r[0])
                if m is not None and is_real_prompt(m):
                    got.append((int(r[0]), str(r[1])))
            self._prompts[sid] = got
        return got

    def label(self, c: Call | None, who: str) -> Label:
        """The label of a line ``c``'s turn wrote (``who`` agent or agent or user); a human line
        carries no session: when a checkpoint does not follow the turn's end, whether the user
        wrote it during that turn or after it cannot be known."""
        if c is None or who == HUMAN:
            return Label(who)
        prompts = self.prompts(c.session_id)
        i = bisect_right([q for q, _ in prompts], c.seq) - 1
        m = self.message(c.session_id, c.seq)
        s = self.sessions.get(c.session_id, {})
        return Label(who, c.session_id, prompts[i][1] if i >= 0 else None, s.get("agent"),
                     (m.model if m else None) or s.get("model"), c.end or c.start)

    def touches(self, c: Call, target: str) -> list[file_effects.Effect] | None:
        """What call ``c`` did to the file at absolute path ``target``: its effects on it (an
        ``opaque`` one when it cannot be replayed: a shell command naming it), or None."""
        m = self.message(c.session_id, c.seq)
        if m is None or c.idx >= len(m.parts):
            return None
        part = m.parts[c.idx]
        s = self.sessions.get(c.session_id, {})
        cwd = canon(str(s.get("cwd") or self.path), self.aliases)
        if part.type == PartType.PATCH:
            names = [part.get("path"), *(part.get("files") or [])]
            hit = any(isinstance(n, str) and self._resolve(n, cwd) == target for n in names)
            return [file_effects.Effect(target, "opaque")] if hit else None
        args = tools.args_of(part.get("input"))
        if isinstance(args, dict) and isinstance(args.get("workdir"), str):
            cwd = canon(tools.absolute(args["workdir"], cwd), self.aliases)
        found = file_effects.effects(c.name, args)
        if found is not None:
            mine = []
            for e in found:
                if e.move_to is not None and self._resolve(e.move_to, cwd) == target:
                    mine.append(file_effects.Effect(target, "opaque"))
                elif self._resolve(e.path, cwd) == target:
                    mine.append(e if e.move_to is None else file_effects.Effect(target, "delete"))
            return mine or None
        cmd = tools.command(c.name, args) if c.name in tools.SHELL else None
        if cmd and file_effects.shell_names(cmd, target, cwd):
            return [file_effects.Effect(target, "opaque")]
        return None

    def _resolve(self, p: str, cwd: str) -> str:
        return canon(tools.absolute(p, cwd), self.aliases)

    # an interval, explained -----------------------------------------------------------------------

    def explain(self, rel: str, before: str | None, after: str | None, t0: int, t1: int,
                governing: tuple[str, str | None] | None, *, unknown: bool = False) -> Explanation:
        """How the file ``rel`` went from ``before`` (at ``t0``) to ``after`` (at ``t1``): the
        replayed steps of the calls that touched it, and who wrote what no step explains.

        The calls are replayed forwards from ``before``; when one does not apply (the user
        changed the file first), the rest are replayed backwards from ``after``, and the gap
        between the two is the user's. ``unknown``: the interval before the first checkpoint,
        where only a replayed call says anything (the rest is older than oxide for all we know)."""
        target = canon(posixpath.join(self.path, rel), self.aliases)
        calls = self.between(t0, t1, governing)
        touching = [(c, e) for c in calls for e in [self.touches(c, target)] if e]
        rest_who, either = (BEFORE, BEFORE) if unknown else (HUMAN, EITHER)
        if not touching:
            return Explanation(rest=Label(rest_who))
        last = touching[-1][0]
        opaque = any(e.kind == "opaque" for _, es in touching for e in es) or any(
            c.start is None for c, _ in touching)
        if opaque:
            return Explanation(rest=Label(BEFORE) if unknown else self.label(last, AGENT))
        steps: list[tuple[str | None, Label]] = []
        text = before
        for k, (c, es) in enumerate(touching):
            try:
                for e in es:
                    text = file_effects.apply(e, text)
            except file_effects.NotReplayable:
                if c.start is not None and c.start <= t0:
                    continue  # it ran across the first state: its change may be there already
                back = self._backwards(touching[k:], after)
                if back is None:
                    return Explanation(steps, Label(BEFORE) if unknown else self.label(c, either))
                return Explanation([*steps, *back], Label(rest_who))
            steps.append((text, self.label(c, AGENT)))
        return Explanation(steps, Label(rest_who))

    def _backwards(self, touching: list[tuple[Call, list[file_effects.Effect]]], after: str | None,
                   ) -> list[tuple[str | None, Label]] | None:
        """The steps of ``touching`` replayed backwards from ``after``: first the text before the
        first of them (its step is the user's), then each call's text after it."""
        texts: list[str | None] = [after]
        try:
            for _c, es in reversed(touching):
                text = texts[-1]
                for e in reversed(es):
                    text = file_effects.unapply(e, text)
                texts.append(text)
        except file_effects.NotReplayable:
            return None
        texts.reverse()  # texts[0]: before the first call; texts[j + 1]: after call j
        out: list[tuple[str | None, Label]] = [(texts[0], Label(HUMAN))]
        out += [(texts[j + 1], self.label(c, AGENT)) for j, (c, _) in enumerate(touching)]
        return out
