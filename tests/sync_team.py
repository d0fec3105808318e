"""A team continuing one Claude Code session on several clones of one repository (issue 39).

Each clone has its own transcript of the session (a JSONL file in its own agent folder, as after
`resume --into claude` there), which its agent grows and `import` brings in; the clones push to
and pull from one bare remote, fork, rewind, undo and rm. ``Team`` runs those operations in
process on real git and checks, as it goes:

- ``pull`` never moves a session's tip to a commit lacking a message the tip had;
- a place (seq) of a clone's log never holds two different messages over time (a place a clone
  gave up itself, by rm, rewind or undo, may be used again);

and, once every clone has synced (``sync``), that every message imported anywhere and not
removed on purpose is, in every clone, in the session or in a fork of it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from oxide_git.core.errors import OxideError
from oxide_git.git import refs
from oxide_git.imports import importing
from oxide_git.ops import fork, rewind, rm, share, undo
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.store import sessionlog
from tests.conftest import NOW_MS, git, make_ctx, new_repo

NATIVE = "70000000-0000-4000-8000-000000000039"
FIRST_TS = "2026-02-01T10:00:00.000Z"


class Broken(AssertionError):
    """An invariant of issue 39 does not hold."""


@dataclass
class Clone:
    name: str
    root: Path
    transcript: Path
    lines: list[str] = field(default_factory=list)  # the transcript's lines, as written
    places: dict[int, str] = field(default_factory=dict)  # seq -> text, as seen at the tip


class Team:
    def __init__(self, tmp: Path, n: int = 2) -> None:
        self.tmp = tmp
        self.bare = tmp / "shared.git"
        self.clock = 0
        self.said: dict[str, str] = {}  # text -> the line that said it (any clone)
        self.dropped: set[str] = set()  # texts removed on purpose somewhere (rm, rewind)
        self.log: list[str] = []
        first = new_repo(tmp / "c0")
        git(tmp, "init", "-q", "--bare", "-b", "main", str(self.bare))
        git(first, "remote", "add", "origin", str(self.bare))
        git(first, "push", "-q", "origin", "main")
        roots = [first] + [tmp / f"c{i}" for i in range(1, n)]
        for r in roots[1:]:
            git(tmp, "clone", "-q", str(self.bare), str(r))
        self.clones = [Clone("ABCDEFG"[i], r, tmp / f"agent{i}" / "projects" / "p" / f"{NATIVE}.jsonl")
                       for i, r in enumerate(roots)]
        for c in self.clones:
            with self.ctx(c) as ctx:
                ctx.index  # noqa: B018 - the store made here (as `git oxide init` does)
        a = self.clones[0]
        a.transcript.parent.mkdir(parents=True)
        self.talk(0)

    # -- plumbing ---------------------------------------------------------------------------

    class _Ctx:
        def __init__(self, ctx):  # type: ignore[no-untyped-def]
            self.ctx = ctx

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self.ctx

        def __exit__(self, *exc: object) -> None:
            self.ctx.close()

    def ctx(self, c: Clone) -> Team._Ctx:
        self.clock += 1000
        return Team._Ctx(make_ctx(c.root, NOW_MS + self.clock))

    def _line(self, c: Clone, role: str, text: str) -> str:
        self.clock += 1000
        n = len(self.said)
        ts = FIRST_TS if not self.said else f"2026-02-01T11:{n // 60 % 60:02d}:{n % 60:02d}.{self.clock % 1000:03d}Z"
        uuid = f"00000000-0000-4000-8000-{n + 1:012d}"
        message: dict[str, object] = {"role": role, "content": text}
        if role == "assistant":
            message = {"role": "assistant", "id": f"msg_{n}", "type": "message", "model": "claude-test",
                       "content": [{"type": "text", "text": text}]}
        parent = json.loads(c.lines[-1])["uuid"] if c.lines else None
        line = json.dumps({"parentUuid": parent, "isSidechain": False, "type": role, "cwd": str(c.root),
                           "sessionId": NATIVE, "uuid": uuid, "timestamp": ts, "message": message})
        self.said[text] = line
        return line

    def texts(self, c: Clone, sid: str | None = None) -> list[str] | None:
        with self.ctx(c) as ctx:
            log = sessionlog.load(ctx.repo, sid or self.sid)
            if log is None:
                return None
            return [m.text() for _q, m in sessionlog.iter_messages(ctx.repo, log.commit.tree)]

    def family(self, c: Clone) -> dict[str, list[str]]:
        """The session and every session forked from it (at any depth), with their texts."""
        with self.ctx(c) as ctx:
            logs = {}
            for name, _oid in refs.iter_refs(ctx.repo.git, refs.SESSIONS):
                log = sessionlog.load(ctx.repo, name[len(refs.SESSIONS):])
                if log is not None:
                    logs[log.session.id] = log
            out = {}
            for sid, log in logs.items():
                at, seen = sid, set()
                while at is not None and at != self.sid and at not in seen:
                    seen.add(at)
                    at = logs[at].session.parent_id if at in logs else None
                if at == self.sid:
                    out[sid] = [m.text() for _q, m in sessionlog.iter_messages(ctx.repo, log.commit.tree)]
            return out

    def _look(self, c: Clone, op: str) -> list[str] | None:
        """The tip's texts; a place that changed its message is a defect."""
        now = self.texts(c)
        for seq, text in enumerate(now or []):
            was = c.places.get(seq)
            if was is not None and was != text:
                raise Broken(f"{c.name} {op}: place {seq} held {was!r}, now {text!r}\n" + self.story())
            c.places[seq] = text
        return now

    def story(self) -> str:
        return "steps: " + ", ".join(self.log)

    # -- the operations ----------------------------------------------------------------------

    def talk(self, i: int) -> None:
        c = self.clones[i]
        if not c.lines and i != 0:
            return  # this clone's agent has not taken the session up yet
        self.log.append(f"{c.name} talk")
        k = len(self.said)
        for role in ("user", "assistant"):
            c.lines.append(self._line(c, role, f"{c.name}{k} {role}"))
        c.transcript.parent.mkdir(parents=True, exist_ok=True)
        c.transcript.write_text("".join(ln + "\n" for ln in c.lines))
        with self.ctx(c) as ctx:
            report = importing.import_file(ctx, "claude", c.transcript)
        assert report.state != "failed", report.problems
        self.sid = getattr(self, "sid", None) or report.sessions[0]
        self._look(c, "talk")

    def push(self, i: int) -> None:
        c = self.clones[i]
        self.log.append(f"{c.name} push")
        with self.ctx(c) as ctx:
            res = share.push(ctx)
        assert not res.problems, res.problems

    def pull(self, i: int) -> None:
        c = self.clones[i]
        self.log.append(f"{c.name} pull")
        before = self.texts(c)
        with self.ctx(c) as ctx:
            res = share.pull(ctx)
        assert not res.problems, res.problems
        after = self._look(c, "pull")
        lost = sorted(set(before or ()) - set(after or ()))
        if before is not None and lost:
            raise Broken(f"{c.name} pull moved the tip to a log without {lost}\n" + self.story())
        if after is not None and not c.lines:  # its agent takes the session up (resume --into claude)
            c.lines = [self.said[t] for t in after]
            c.transcript.parent.mkdir(parents=True, exist_ok=True)
            c.transcript.write_text("".join(ln + "\n" for ln in c.lines))

    def fork(self, i: int) -> None:
        c = self.clones[i]
        self.log.append(f"{c.name} fork")
        with self.ctx(c) as ctx:
            if refs.read(ctx.repo.git, refs.session_ref(self.sid)) is not None:
                fork.fork(ctx, self.sid)

    def rewind(self, i: int) -> None:
        """Drop the tip's last message (a conversation rewind to a checkpoint at the one before)."""
        c = self.clones[i]
        now = self.texts(c)
        if not now or len(now) < 3:
            return
        self.log.append(f"{c.name} rewind")
        with self.ctx(c) as ctx:
            mid = ctx.index.query("SELECT id FROM messages WHERE session_id=? AND seq=?", (self.sid, len(now) - 2))
            cp = checkpoint(ctx, session=self.sid, message_id=mid[0][0], text="before the last answer")
        with self.ctx(c) as ctx:
            rewind.rewind(ctx, cp.id, code=False, conversation=True)
        self.dropped.add(now[-1])
        c.places = {q: t for q, t in c.places.items() if q < len(now) - 1}
        self._look(c, "rewind")

    def undo(self, i: int) -> None:
        c = self.clones[i]
        self.log.append(f"{c.name} undo")
        with self.ctx(c) as ctx:
            try:
                undo.undo(ctx)
            except OxideError:
                return
        c.places = {}  # undo gives places back on purpose (a rewind's, a pull's)
        self._look(c, "undo")

    def rm(self, i: int) -> None:
        c = self.clones[i]
        now = self.texts(c)
        if now is None:
            return
        self.log.append(f"{c.name} rm")
        with self.ctx(c) as ctx:
            rm.rm(ctx, self.sid, keep_forks=True)
        self.dropped.update(now)
        c.places = {}

    # -- the end -----------------------------------------------------------------------------

    def sync(self) -> None:
        """pull; push on every clone, twice, then pull on all; then every message is everywhere."""
        self.log.append("sync")
        for _round in range(2):
            for i in range(len(self.clones)):
                self.pull(i)
                self.push(i)
        for i in range(len(self.clones)):
            self.pull(i)
        self.check_all_kept()

    def check_all_kept(self) -> None:
        for c in self.clones:
            family = self.family(c)
            held = {t for texts in family.values() for t in texts}
            missing = sorted(set(self.said) - self.dropped - held)
            if missing:
                raise Broken(f"{c.name} lacks {missing} (in no session and no fork)\n" + self.story())

    def run(self, steps: str) -> None:
        """Steps as the issue writes them: ``A talk, B push, ...``."""
        for step in steps.split(","):
            who, op = step.split()
            getattr(self, op)(ord(who) - ord("A"))


def examples() -> int:
    """``OXIDE_SYNC_EXAMPLES``, else 20 with OXIDE_RELIABILITY_QUICK (CI's form), else 0 (the default)."""
    quick = os.environ.get("OXIDE_RELIABILITY_QUICK", "") not in ("", "0")
    return int(os.environ.get("OXIDE_SYNC_EXAMPLES", "20" if quick else "0"))
