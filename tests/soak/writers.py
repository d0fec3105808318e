"""Four agents writing their transcripts the way they do, and remembering every record written.

- Claude Code: JSONL lines appended to ``projects/<cwd>/<uuid>.jsonl`` (a line sometimes reaches
  the disk in two writes), a compaction now and then (``compact_boundary`` + the summary the
  harness injects), and a sub-agent in ``<uuid>/subagents/agent-<id>.jsonl``.
- Codex: a rollout in ``sessions/YYYY/MM/DD/``, with a ``compacted`` record and its event.
- OpenCode 1.18: rows in ``opencode.db`` (a copy of a database the real release made), an
  assistant part inserted first and its text updated as it streams, as OpenCode does.
- Aider: ``.aider.chat.history.md`` in the worktree, a prompt, then later its reply.

The lines of Claude and Codex come from the benchmark's generators (``bench.importing``). Every
record written is kept (``written``) so that the checks can say it is in the store exactly once.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.importing import _claude_lines, _codex_lines

from .world import ROOT, World

T0 = 1_767_225_600_000  # 2026-01-01


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


class Writer(ABC):
    """An agent appending a transcript; ``step`` writes a little, ``written`` is the truth."""

    name = "agent"
    every = (0.2, 1.5)  # seconds between steps

    def __init__(self, world: World) -> None:
        self.world = world
        self.rng = world.rng
        self.lock = threading.Lock()
        self.records = 0

    @abstractmethod
    def step(self) -> None:
        """Write the next record(s) the way the agent does."""

    def loop(self) -> None:
        w = self.world
        while w.loop_step(f"writer {self.name}"):
            try:
                with self.lock:
                    self.step()
            except Exception as e:  # a writer never stops the soak; it is reported
                w.tally.problem(f"{self.name} writer: {e!r}")
            w.nap(self.rng.uniform(*self.every))


class JsonlWriter(Writer):
    """A JSONL transcript: lines kept as written (parsed), per file."""

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.written: dict[Path, list[dict[str, Any]]] = {}
        self.t = T0

    def append(self, path: Path, line: dict[str, Any]) -> None:
        data = (json.dumps(line) + "\n").encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            if len(data) > 200 and self.rng.random() < 0.15:  # the reader may see half a line
                cut = self.rng.randrange(1, len(data) - 1)
                f.write(data[:cut])
                f.flush()
                time.sleep(self.rng.uniform(0.0, 0.2))
                f.write(data[cut:])
            else:
                f.write(data)
        self.written.setdefault(path, []).append(line)
        self.records += 1


class ClaudeWriter(JsonlWriter):
    name = "claude"

    def __init__(self, world: World, n: int = 1) -> None:
        super().__init__(world)
        from oxide_git.agents.claude.export import encode_cwd

        self.sid = f"5a0a0000-0000-4000-8000-{n:012d}"
        cwd = str(world.repo)
        folder = Path(world.env["CLAUDE_CONFIG_DIR"]) / "projects" / encode_cwd(cwd)
        self.path = folder / f"{self.sid}.jsonl"
        self.sub = folder / self.sid / "subagents" / "agent-a5a0a0a.jsonl"
        self.lines = _claude_lines(cwd, self.sid, 1000 + n, T0)
        self.sub_lines = _claude_lines(cwd, self.sid, 2000 + n, T0 + 60_000)
        self.parent: str | None = None
        self.sub_parent: str | None = None
        self.since_compaction = 0

    def _chain(self, line: dict[str, Any], sub: bool = False) -> dict[str, Any]:
        if "uuid" in line:
            line["parentUuid"] = self.sub_parent if sub else self.parent
            if sub:
                line["isSidechain"], line["agentId"] = True, "a5a0a0a"
                line["uuid"] = "5b" + line["uuid"][2:]
                line["parentUuid"] = self.sub_parent
                self.sub_parent = line["uuid"]
            else:
                self.parent = line["uuid"]
        return line

    def step(self) -> None:
        for _ in range(self.rng.randint(1, 5)):
            self.append(self.path, self._chain(next(self.lines)))
            self.since_compaction += 1
        if self.since_compaction > 120 and self.rng.random() < 0.3:
            self.compaction()
        n = len(self.written.get(self.path, []))
        if 30 < n < 400 and self.rng.random() < 0.5:  # a sub-agent works for a while
            for _ in range(self.rng.randint(1, 3)):
                self.append(self.sub, self._chain(next(self.sub_lines), sub=True))

    def compaction(self) -> None:
        base = {"isSidechain": False, "userType": "external", "cwd": str(self.world.repo),
                "sessionId": self.sid, "version": "2.1.39", "gitBranch": "main"}
        self.t += 1000
        k = self.records
        boundary = {"parentUuid": None, **base, "logicalParentUuid": self.parent, "type": "system",
                    "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                    "level": "info", "compactMetadata": {"trigger": "auto", "preTokens": 170_000 + k},
                    "uuid": f"5c0c0000-0000-4000-8000-{k:012d}", "timestamp": _iso(self.t)}
        self.append(self.path, boundary)
        self.parent = boundary["uuid"]
        summary = {"parentUuid": self.parent, **base, "type": "user", "message": {
            "role": "user", "content": f"This session is being continued from a previous conversation.\n"
                                       f"Summary {k}: the work so far."},
            "isVisibleInTranscriptOnly": True, "isCompactSummary": True,
            "uuid": f"5c0d0000-0000-4000-8000-{k:012d}", "timestamp": _iso(self.t)}
        self.append(self.path, summary)
        self.parent = summary["uuid"]
        self.since_compaction = 0
        self.world.tally.op("claude compactions")


class CodexWriter(JsonlWriter):
    name = "codex"

    def __init__(self, world: World) -> None:
        super().__init__(world)
        sid = "019c5a0a-0000-7000-8000-000000000001"
        folder = Path(world.env["CODEX_HOME"]) / "sessions" / "2026" / "01" / "01"
        self.path = folder / f"rollout-2026-01-01T00-00-00-{sid}.jsonl"
        self.lines = _codex_lines(str(world.repo), sid, 3000, T0)
        self.since_compaction = 0
        self.last_ts = _iso(T0)

    def step(self) -> None:
        for _ in range(self.rng.randint(1, 6)):
            line = next(self.lines)
            self.last_ts = line.get("timestamp", self.last_ts)
            self.append(self.path, line)
            self.since_compaction += 1
        if self.since_compaction > 150 and self.rng.random() < 0.3:
            self.append(self.path, {"timestamp": self.last_ts, "type": "compacted", "payload": {
                "message": "", "replacement_history": [
                    {"type": "message", "role": "user", "content": [
                        {"type": "input_text", "text": f"summary after {self.records} records"}]},
                    {"type": "compaction", "encrypted_content": f"gAAAAcompact{self.records}"}]}})
            self.append(self.path, {"timestamp": self.last_ts, "type": "event_msg",
                                    "payload": {"type": "context_compacted"}})
            self.since_compaction = 0
            self.world.tally.op("codex compactions")


class OpenCodeWriter(Writer):
    """OpenCode 1.18's rows: a session, then for each turn a user message and an assistant message
    whose text part is inserted early and updated as the answer streams."""

    name = "opencode"
    every = (2.0, 6.0)  # a turn: its database is read whole on each change (see the README)
    FIXTURE = ROOT / "fixtures" / "opencode" / "db-1.18.33" / "opencode.db"

    def __init__(self, world: World) -> None:
        super().__init__(world)
        folder = Path(world.env["XDG_DATA_HOME"]) / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        self.db = folder / "opencode.db"
        shutil.copyfile(self.FIXTURE, self.db)
        self.texts: list[str] = []  # every message's text, in order
        self.sid = "ses_5a0a0000000aSoakSessionAA"
        self.n = 0
        self.t = T0
        repo = str(world.repo)
        with self._db() as c:
            proj = "5a0a" + "0" * 36
            c.execute("INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) "
                      "VALUES (?, ?, 'git', ?, ?, '[]')", (proj, repo, T0, T0))
            row = c.execute("SELECT * FROM session LIMIT 1").fetchone()
            cols = [d[0] for d in c.execute("SELECT * FROM session LIMIT 1").description]
            new = dict(zip(cols, row, strict=True))
            new.update(id=self.sid, project_id=proj, directory=repo, title="Soak session", slug="soak-run",
                       time_created=T0, time_updated=T0)
            c.execute(f"INSERT INTO session ({','.join(new)}) VALUES ({','.join('?' * len(new))})",
                      tuple(new.values()))

    def _db(self) -> sqlite3.Connection:
        c = sqlite3.connect(self.db, timeout=30, isolation_level=None)
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("BEGIN IMMEDIATE")
        return _Tx(c)  # type: ignore[return-value]

    def _id(self, kind: str) -> str:
        self.n += 1
        return f"{kind}_{(self.t * 4096 + self.n) & 0xFFFFFFFFFFFF:012x}Soak{self.n:010d}"

    def step(self) -> None:
        self.t += 2000
        k = len(self.texts)
        prompt = f"opencode prompt {k} ⟦oc-{k}⟧"
        user, answer = self._id("msg"), self._id("msg")
        with self._db() as c:
            self._message(c, user, {"role": "user", "time": {"created": self.t}, "agent": "build",
                                    "model": {"providerID": "fake", "modelID": "fake-model"}})
            self._part(c, self._id("prt"), user, {"type": "text", "text": prompt})
        self.texts.append(prompt)
        reply = f"opencode answer {k + 1} ⟦oc-{k + 1}⟧ " + "words " * self.rng.randint(1, 60)
        part = self._id("prt")
        with self._db() as c:
            self._message(c, answer, {"parentID": user, "role": "assistant", "mode": "build", "agent": "build",
                                      "path": {"cwd": str(self.world.repo), "root": str(self.world.repo)},
                                      "cost": 0, "tokens": {"total": 1, "input": 1, "output": 0, "reasoning": 0,
                                                            "cache": {"write": 0, "read": 0}},
                                      "modelID": "fake-model", "providerID": "fake",
                                      "time": {"created": self.t}})
            self._part(c, part, answer, {"type": "text", "text": reply[:len(reply) // 2]})
        time.sleep(self.rng.uniform(0.0, 0.5))  # the answer streams in
        with self._db() as c:
            c.execute("UPDATE part SET data=?, time_updated=? WHERE id=?",
                      (json.dumps({"type": "text", "text": reply}), self.t + 500, part))
            c.execute("UPDATE session SET time_updated=? WHERE id=?", (self.t + 500, self.sid))
        self.texts.append(reply)
        self.records += 2

    def _message(self, c: sqlite3.Connection, mid: str, data: dict[str, Any]) -> None:
        c.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?,?,?,?,?)",
                  (mid, self.sid, self.t, self.t, json.dumps(data)))

    def _part(self, c: sqlite3.Connection, pid: str, mid: str, data: dict[str, Any]) -> None:
        c.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                  "VALUES (?,?,?,?,?,?)", (pid, mid, self.sid, self.t, self.t, json.dumps(data)))


class _Tx:
    def __init__(self, c: sqlite3.Connection) -> None:
        self.c = c

    def __enter__(self) -> sqlite3.Connection:
        return self.c

    def __exit__(self, kind: object, *_: object) -> None:
        self.c.execute("ROLLBACK" if kind else "COMMIT")
        self.c.close()


class AiderWriter(Writer):
    """``.aider.chat.history.md``: a chat header, then prompts (``#### ``) and their replies."""

    name = "aider"
    every = (1.0, 4.0)

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.path = world.repo / ".aider.chat.history.md"
        self.texts: list[str] = []
        self.pending: str | None = None
        self._write("\n# aider chat started at 2026-01-01 00:00:00\n\n> Aider v0.86.1  \n"
                    "> Main model: fake with diff edit format  \n\n")

    def _write(self, text: str) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(text)

    def step(self) -> None:
        if self.pending is None:
            k = len(self.texts)
            self.pending = f"aider reply {k + 1} ⟦ai-{k + 1}⟧"
            prompt = f"aider prompt {k} ⟦ai-{k}⟧"
            self._write(f"#### {prompt}  \n\n")
            self.texts.append(prompt)
        else:
            self._write(f"{self.pending}\n\n")
            self.texts.append(self.pending)
            self.pending = None
        self.records += 1


def all_writers(world: World) -> list[Writer]:
    return [ClaudeWriter(world), CodexWriter(world), OpenCodeWriter(world), AiderWriter(world)]


def lines_of(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, "rb") as f:
        for raw in f:
            if raw.endswith(b"\n"):
                yield json.loads(raw)
