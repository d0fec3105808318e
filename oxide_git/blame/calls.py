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
from typing import TYPE_CHECKING, Any, NamedTuple

from oxide_git.core import tool_kinds
from oxide_git.core.titles import is_harness_text
from oxide_git.store.context import Context

if TYPE_CHECKING:  # read only when a call's message is (a blame whose intervals are all kept does not)
    from oxide_git.agents import file_effects
    from oxide_git.blame.lookups import Lookups

AGENT, HUMAN, EITHER, BEFORE = "agent", "human", "agent or user", "before oxide"


class Label(NamedTuple):
    """Who wrote a line and in which turn (``message_id`` is that turn's prompt)."""

    who: str
    session_id: str | None = None
    message_id: str | None = None
    agent: str | None = None
    model: str | None = None
    when_ms: int | None = None


class Call(NamedTuple):
    session_id: str
    seq: int
    idx: int
    name: str
    start: int | None  # ms: the call was recorded
    end: int | None  # ms: its result was recorded (the call's work was done by then)
    failed: bool = False


class Explanation:
    """Replay of the calls that touched a file in one interval: each step's text and whose it is
    (from the interval's first state on), and the label of the lines no step explains."""

    def __init__(self, steps: list[tuple[str | None, Label]] | None = None,
                 rest: Label | None = None) -> None:
        self.steps = steps if steps is not None else []
        self.rest = rest if rest is not None else Label(HUMAN)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Explanation) and (self.steps, self.rest) == (other.steps, other.rest)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Explanation(steps={self.steps!r}, rest={self.rest!r})"


def canon(path: str, aliases: tuple[tuple[str, str], ...]) -> str:
    p = posixpath.normpath(path)
    for raw, real in aliases:
        if p == raw or p.startswith(raw + "/"):
            return real + p[len(raw):]
    return p


class WorktreeCalls:
    """The tool calls of every session that worked in one worktree (by its id and path)."""

    def __init__(self, ctx: Context, objects: Lookups, worktree: str, path: str) -> None:
        self.ctx = ctx
        self.objects = objects
        self.path = path
        real = os.path.realpath(path) if path else path
        self.aliases = ((path.rstrip("/"), real.rstrip("/")),) if path and real != path else ()
        rows = ctx.index.query(
            "SELECT id, agent, cwd, model FROM sessions WHERE worktree=? OR cwd=? OR cwd LIKE ?",
            (worktree, path, path.rstrip("/") + "/%"))
        inside = [r for r in rows if not r["cwd"] or not path or self._inside(r["cwd"])]
        self.sessions: dict[str, Any] = {r["id"]: dict(r) for r in inside}
        self.timed: set[str] = set()
        self._span: dict[str, tuple[int, int]] = {}  # session -> its first and last message time
        self._calls: dict[str, list[Call]] = {}  # a session's calls, read when a window needs them
        self._starts: dict[str, list[int]] = {}
        self._longest: dict[str, int] = {}
        self._messages: dict[tuple[str, int], tuple[Any, list[Any]] | None] = {}
        self._prompts: dict[str, list[tuple[int, str]]] = {}
        self._texts: dict[tuple[str, int], str] = {}
        self._seqs: dict[str, list[int]] = {}
        self.latest = 0  # the newest message time of these sessions (the cache's clock check)
        if self.sessions:
            ids = list(self.sessions)
            marks = ",".join("?" * len(ids))
            for r in self.ctx.index.query(
                    "SELECT session_id, count(DISTINCT created_at), min(created_at), max(created_at) "
                    f"FROM messages WHERE session_id IN ({marks}) GROUP BY session_id", ids):
                self.latest = max(self.latest, int(r[3] or 0))
                if r[1] > 1:  # one time for every message (Aider's): no order in time to go by
                    self.timed.add(r[0])
                    self._span[r[0]] = (int(r[2]), int(r[3]))

    def _inside(self, cwd: str) -> bool:
        c, top = canon(cwd, self.aliases), canon(self.path, self.aliases)
        return c == top or c.startswith(top.rstrip("/") + "/")

    def calls_of(self, sid: str) -> list[Call]:
        """The calls of one session that may write files, in order (its results' times and errors
        with them)."""
        got = self._calls.get(sid)
        if got is not None:
            return got
        from oxide_git.core.tool_kinds import READ_ONLY

        results = {r[0]: (r[1], bool(r[2])) for r in self.ctx.index.query(
            "SELECT p.call_id, m.created_at, p.is_error FROM parts p JOIN messages m "
            "ON m.session_id=p.session_id AND m.seq=p.seq WHERE p.type='tool_result' AND p.session_id=?",
            (sid,))}
        timed = sid in self.timed
        got = []
        for r in self.ctx.index.query(
                "SELECT p.seq, p.idx, p.name, p.call_id, m.created_at FROM parts p JOIN messages m "
                "ON m.session_id=p.session_id AND m.seq=p.seq WHERE p.type IN ('tool_call', 'patch') "
                "AND p.session_id=? ORDER BY p.seq, p.idx", (sid,)):
            if r["name"] in READ_ONLY:
                continue
            end, failed = results.get(r["call_id"], (None, False))
            got.append(Call(sid, r["seq"], r["idx"], r["name"] or "", r["created_at"] if timed else None,
                            end if timed else None, failed))
        got.sort(key=lambda c: (c.start or 0, c.seq, c.idx))
        self._calls[sid] = got
        self._starts[sid] = [c.start or 0 for c in got]
        self._longest[sid] = max((c.end - c.start for c in got if c.start is not None and c.end is not None),
                                 default=0) + 1
        return got

    # calls in an interval -------------------------------------------------------------------------

    def between(self, t0: int, t1: int, governing: tuple[str, str | None] | None) -> list[Call]:
        """Calls whose work overlaps (t0, t1], in order; calls of sessions without times count when
        they belong to the governing prompt's turn (the prompt checkpoint the interval starts in).
        Only the sessions whose messages span the window are read."""
        out = []
        for sid, (first, last) in self._span.items():
            if first > t1 or last < t0:  # a call's result comes after it: the session ended before
                continue
            calls = self.calls_of(sid)
            starts = self._starts[sid]
            # sorted by start: one that started before t0 - (the longest call) ended before t0
            for c in calls[bisect_right(starts, t0 - self._longest[sid]):bisect_right(starts, t1)]:
                if not c.failed and (c.end if c.end is not None else c.start or 0) > t0:
                    out.append(c)
        out.sort(key=lambda c: (c.start or 0, c.session_id, c.seq, c.idx))
        if governing is not None and governing[0] in self.sessions and governing[0] not in self.timed:
            first_seq, stop = self._turn_span(governing[0], governing[1])
            out += [c for c in self.calls_of(governing[0]) if not c.failed and first_seq <= c.seq < stop]
        return out

    def _turn_span(self, sid: str, message_id: str | None) -> tuple[int, int]:
        prompts = self.prompts(sid)
        at = 0
        if message_id:
            rows = self.ctx.index.query("SELECT seq FROM messages WHERE session_id=? AND id=?",
                                        (sid, message_id))
            at = int(rows[0][0]) if rows else 0
        seqs = [q for q, _ in prompts]
        i = bisect_left(seqs, at)
        first = seqs[i] if i < len(seqs) else at
        return first, (seqs[i + 1] if i + 1 < len(seqs) else 1 << 62)

    # what a call did -----------------------------------------------------------------------------

    def message(self, sid: str, seq: int) -> tuple[Any, list[Any]] | None:
        """A message's model and parts as ``payload.message_parts`` reads them (no model objects:
        the model's dataclasses, the codec's import, cost more than the replay itself)."""
        key = (sid, seq)
        if key not in self._messages:
            self._messages[key] = self._read(sid, seq)
        return self._messages[key]

    def _read(self, sid: str, seq: int) -> tuple[Any, list[Any]] | None:
        """A message of a session log at its ref's tip (its trees read once for the run)."""
        oid = self.objects.message_blob(sid, seq)
        if oid is None:
            return None
        from oxide_git.core.payload import message_parts

        return message_parts(self.objects.blob(oid))

    def _candidates(self, sid: str) -> list[tuple[int, str]]:
        """The session's user messages with text and no tool result (seq, id): its prompts, and
        the harness's context, which only decoding tells apart."""
        got = self._prompts.get(sid)
        if got is None:
            rows = self.ctx.index.query(
                "SELECT m.seq, m.id, substr(m.text, 1, 200) FROM messages m WHERE m.session_id=? "
                "AND m.role='user' AND m.text!='' AND NOT EXISTS (SELECT 1 FROM parts p "
                "WHERE p.session_id=m.session_id AND p.seq=m.seq AND p.type='tool_result') ORDER BY m.seq",
                (sid,))
            got = self._prompts[sid] = [(int(r[0]), str(r[1])) for r in rows]
            self._texts.update({(sid, int(r[0])): str(r[2]) for r in rows})
        return got

    def _real(self, sid: str, seq: int) -> bool:
        """Whether a candidate is a real prompt: by its text in the index, as the index finds a
        session's first prompt (decoding each would tell the harness's flagged context too, at
        a blob read per turn)."""
        return not is_harness_text(self._texts.get((sid, seq), ""))

    def prompt_of(self, sid: str, seq: int) -> str | None:
        """The prompt (message id) of the turn message ``seq`` is in: the last real prompt at or
        before it."""
        cands = self._candidates(sid)
        seqs = self._seqs.get(sid)
        if seqs is None:
            seqs = self._seqs[sid] = [q for q, _ in cands]
        i = bisect_right(seqs, seq) - 1
        while i >= 0:
            if self._real(sid, cands[i][0]):
                return cands[i][1]
            i -= 1
        return None

    def prompts(self, sid: str) -> list[tuple[int, str]]:
        """The session's real prompts (seq, message id): what a person typed."""
        return [(q, m) for q, m in self._candidates(sid) if self._real(sid, q)]

    def label(self, c: Call | None, who: str) -> Label:
        """The label of a line ``c``'s turn wrote (``who`` agent or agent or user); a human line
        carries no session: when a checkpoint does not follow the turn's end, whether the user
        wrote it during that turn or after it cannot be known."""
        if c is None or who == HUMAN:
            return Label(who)
        m = self.message(c.session_id, c.seq)
        s = self.sessions.get(c.session_id, {})
        return Label(who, c.session_id, self.prompt_of(c.session_id, c.seq), s.get("agent"),
                     (m[0] if m else None) or s.get("model"), c.end or c.start)

    def touches(self, c: Call, target: str) -> list[file_effects.Effect] | None:
        """What call ``c`` did to the file at absolute path ``target``: its effects on it (an
        ``opaque`` one when it cannot be replayed: a shell command naming it), or None."""
        from oxide_git.agents import file_effects, tools
        from oxide_git.core.payload import part_get, part_type

        m = self.message(c.session_id, c.seq)
        if m is None or c.idx >= len(m[1]):
            return None
        part = m[1][c.idx]
        s = self.sessions.get(c.session_id, {})
        cwd = canon(str(s.get("cwd") or self.path), self.aliases)
        if part_type(part) == "patch":
            names = [part_get(part, "path"), *(part_get(part, "files") or [])]
            hit = any(isinstance(n, str) and self._resolve(n, cwd) == target for n in names)
            return [file_effects.Effect(target, "opaque")] if hit else None
        args = tools.args_of(part_get(part, "input"))
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
        cmd = tools.command(c.name, args) if c.name in tool_kinds.SHELL else None
        if cmd and file_effects.shell_names(cmd, target, cwd):
            return [file_effects.Effect(target, "opaque")]
        return None

    def _resolve(self, p: str, cwd: str) -> str:
        from oxide_git.agents import tools

        return canon(tools.absolute(p, cwd), self.aliases)

    def key(self, rel: str, before: str | None, after: str | None, t0: int, t1: int,
            governing: tuple[str, str | None] | None, unknown: bool) -> bytes:
        """The memo key of ``explain`` of an interval (``before`` and ``after``: the two versions'
        blob ids): everything it reads. The calls ``between`` finds, and of each what ``touches``
        and ``label`` read: its message (by blob id), its session's row, its turn's prompt."""
        rows = []
        for c in self.between(t0, t1, governing):
            s = self.sessions.get(c.session_id, {})
            rows.append((c.session_id, c.seq, c.idx, c.name, c.start, c.end, c.failed,
                         self.objects.message_blob(c.session_id, c.seq), s.get("agent"), s.get("cwd"),
                         s.get("model"), self.prompt_of(c.session_id, c.seq)))
        from oxide_git.blame.memo import digest

        # t1 is not in it: ``explain`` reads it only through ``between``, whose calls are (the
        # last interval of an uncommitted file ends at the clock)
        return digest(("explain", rel, self.path, self.aliases, before, after, t0, governing, unknown,
                       tuple(rows)))

    # an interval, explained -----------------------------------------------------------------------

    def explain(self, rel: str, before: str | None, after: str | None, t0: int, t1: int,
                governing: tuple[str, str | None] | None, *, unknown: bool = False) -> Explanation:
        """How the file ``rel`` went from ``before`` (at ``t0``) to ``after`` (at ``t1``): the
        replayed steps of the calls that touched it, and who wrote what no step explains.

        The calls are replayed forwards from ``before``; when one does not apply (the user
        changed the file first), the rest are replayed backwards from ``after``, and the gap
        between the two is the user's. ``unknown``: the interval before the first checkpoint,
        where only a replayed call says anything (the rest is older than oxide for all we know)."""
        from oxide_git.agents import file_effects

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
        from oxide_git.agents import file_effects

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
