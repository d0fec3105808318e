"""Claude Code transcripts (``<config>/projects/<encoded cwd>/<uuid>.jsonl``): discover and parse.

Streaming and lossless: one line at a time, split responses merged by ``message.id``, every line
type kept (unknown ones as ``other`` parts). Lines become Parts in ``claude_blocks``; export lives
in ``claude_export``.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import (
    AgentEnv,
    Event,
    Export,
    FoundMessage,
    FoundSession,
    Problem,
    Resumable,
    Unknown,
    emit,
    jsonline,
)
from oxide_git.agents.claude.blocks import Builder, classify, line_ts
from oxide_git.agents.claude.store import roots as roots
from oxide_git.core.model import Message, Session, session_id_for

name = "claude"

STATE_VERSION = 1
# Line types seen in Claude Code's transcripts up to 2.1.332 (docs/agents/claude.md); any other is
# kept whole as an ``other`` part and reported as format drift.
KNOWN_TYPES = frozenset({
    "user", "assistant", "system", "summary", "custom-title", "file-history-snapshot",
    "queue-operation", "progress", "attachment", "last-prompt", "agent-name", "tag", "pr-link",
    "x-thinking", "atis-latch", "api-request-shape", "api-request-blob", "api-request",
    "tools-used", "cost-state", "mode",
})
_CWD_SCAN_LINES = 200
# A session's fields that its FoundSession shows (a snapshot of them is kept as "emitted").
_SHOWN = ("id", "native_id", "title", "cwd", "branch", "model", "parent_id", "extra", "first_ts",
          "updated_at")
_shown_but_time = emit.getter(_SHOWN)


FILE_PATTERNS = ("*.jsonl",)


def watch_roots(env: AgentEnv) -> list[Path]:
    return [r / "projects" for r in roots(env)]


def _first_cwd(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            for i, line in enumerate(f):
                if i >= _CWD_SCAN_LINES:
                    break
                if b'"cwd"' not in line:
                    continue
                try:
                    obj = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("cwd"), str) and obj["cwd"]:
                    return str(obj["cwd"])
    except OSError:
        return None
    return None


def discover(env: AgentEnv) -> list[Path]:
    """Session files whose lines' ``cwd`` lies in a worktree, each followed by its sub-agent files."""
    out: list[Path] = []
    for root in roots(env):
        projects = root / "projects"
        if not projects.is_dir():
            continue
        for path in sorted(projects.glob("*/*.jsonl")):
            if not env.belongs(_first_cwd(path)):
                continue
            out.append(path)
            if path.name.startswith("agent-"):
                continue
            side = path.with_suffix("") / "subagents"
            if side.is_dir():
                out.extend(sorted(p for p in side.rglob("agent-*.jsonl") if p.is_file()))
    return out


def _is_uuid(text: str | None) -> bool:
    try:
        uuidlib.UUID(str(text))
    except ValueError:
        return False
    return True


def _new_session(native: str | None, **extra: Any) -> dict[str, Any]:
    return {"id": None, "native_id": native, "first_ts": None, "updated_at": None, "title": None,
            "custom_title": False, "cwd": None, "branch": None, "model": None, "parent_id": None,
            "first_sid": None, "extra": extra, "emitted": None}


def _parent_link(parent_file: Path, agent_id: str) -> dict[str, Any]:
    """The parent session's oxide id and the Task tool_use id that started ``agent_id``."""
    link: dict[str, Any] = {"parent_id": None, "call_id": None}
    needle = agent_id.encode()
    first_ts: int | None = None
    try:
        with parent_file.open("rb") as f:
            for line in f:
                if first_ts is None or needle in line:
                    try:
                        obj = json.loads(line)
                    except (ValueError, RecursionError):
                        continue
                    if not isinstance(obj, dict):
                        continue
                    if first_ts is None:
                        first_ts = line_ts(obj)
                    call = _call_for(obj, agent_id)
                    if call:
                        link["call_id"] = call
                        break
    except OSError:
        return link
    link["parent_id"] = session_id_for(name, parent_file.stem, first_ts)
    return link


def _call_for(obj: Mapping[str, Any], agent_id: str) -> str | None:
    data = obj.get("data")
    if isinstance(data, dict) and data.get("agentId") == agent_id and obj.get("parentToolUseID"):
        return str(obj["parentToolUseID"])
    tur = obj.get("toolUseResult")
    if isinstance(tur, dict) and tur.get("agentId") == agent_id:
        content = obj.get("message", {}).get("content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                return str(b.get("tool_use_id"))
    return None


class _Parser:
    def __init__(self, path: Path, state: Mapping[str, Any] | None) -> None:
        self.path = path
        self.agent_id: str | None = None
        self.parent_file: Path | None = None
        native: str | None = path.stem if _is_uuid(path.stem) else None
        if path.stem.startswith("agent-"):
            self.agent_id = path.stem[len("agent-"):]
            parts = path.parts
            if "subagents" in parts[:-1]:
                i = len(parts) - 1 - parts[::-1].index("subagents")
                sdir = Path(*parts[: i])
                rel = Path(*parts[i + 1:]).with_suffix("").as_posix()
                native = f"{sdir.name}/{rel}"
                self.parent_file = sdir.parent / f"{sdir.name}.jsonl"
            else:
                native = None  # flat layout: known from the lines' sessionId
        st = dict(state or {})
        self.line: int = int(st.get("line", 0))
        self.sessions: dict[str, dict[str, Any]] = {
            k: dict(v) for k, v in st.get("sessions", {}).items()
        } or {"main": _new_session(native, **({"agent_id": self.agent_id} if self.agent_id else {}))}
        self.side: str | None = st.get("side")
        self.pending: list[Builder] = []
        self.open: dict[str, Builder] = {}

    def state(self, line: int) -> dict[str, Any]:
        return {"v": STATE_VERSION, "line": line, "side": self.side,
                "sessions": {k: dict(v) for k, v in self.sessions.items()}}

    def run(self, offset: int) -> Iterator[Event]:
        main = self.sessions["main"]
        if (self.agent_id and main["id"] and not main["extra"].get("parent_call_id")
                and not self.agent_id.startswith("acompact")):
            self._link(main)  # the parent may have written the Task's progress since
        lines = jsonline.Lines(self.path, offset, self.line)
        for start, obj in lines:
            self.line = lines.line
            if isinstance(obj, Problem):
                yield obj
                continue
            new = self.feed(obj)
            if new is not None:
                yield from self.flush()
                yield Resumable(start, self.state(self.line - 1))
                self.pending.append(new)
            kind = obj.get("type")
            if not isinstance(kind, str) or kind not in KNOWN_TYPES:  # after the restart point
                v = obj.get("version")
                yield Unknown(str(kind), f"claude-code {v}" if isinstance(v, str) else None)
        self.line, pos = lines.line, lines.pos
        had_tail = bool(self.pending)
        yield from self.flush(final=True)
        if not had_tail:
            yield Resumable(pos, self.state(self.line))

    def stream_of(self, obj: Mapping[str, Any]) -> str:
        if self.agent_id or obj.get("isSidechain") is not True:
            return "main"
        if obj.get("parentUuid") is None or self.side is None:
            self.side = str(obj.get("uuid") or f"line-{self.line}")
            self.sessions[self.side] = _new_session(None, sidechain_root=self.side)
        return self.side

    def feed(self, obj: dict[str, Any]) -> Builder | None:
        """Note ``obj`` and add it to its message. A message that begins where parsing may restart
        is returned instead, for the caller to flush what is pending before it (no generator per
        line: most lines only join a message)."""
        kind = classify(obj)
        stream = self.stream_of(obj)
        ts = line_ts(obj)
        self.note(self.sessions[stream], obj, kind, ts)  # idempotent: restarting here notes it again
        last = self.pending[-1] if self.pending else None
        group = self.open.get(stream)
        mid = obj["message"].get("id") if kind == "assistant" else None
        if group is not None and mid and group.last["message"].get("id") == mid:
            group.add(obj, ts)
        elif last and last.stream == stream and (
            (kind == "meta" and last.kind == "meta")
            or (kind == "summary" and last.kind == "boundary" and len(last.lines) == 1)
        ):
            last.add(obj, ts)
        else:
            if kind != "tool" and kind != "meta":
                self.open.pop(stream, None)
            safe = not self.open
            b = Builder(kind, stream, obj, ts)
            if kind == "assistant" and mid:
                self.open[stream] = b
            if safe:
                return b
            self.pending.append(b)
        return None

    def note(self, acc: dict[str, Any], obj: Mapping[str, Any], kind: str, ts: int | None) -> None:
        """What ``obj`` tells of its session. Runs for every line: each field is read once."""
        if ts is not None:
            if acc["first_ts"] is None:
                acc["first_ts"] = ts
            if acc["updated_at"] is None or ts > acc["updated_at"]:
                acc["updated_at"] = ts
        if acc["first_sid"] is None and isinstance(sid := obj.get("sessionId"), str):
            acc["first_sid"] = sid
        if acc["cwd"] is None and isinstance(cwd := obj.get("cwd"), str) and cwd:
            acc["cwd"] = cwd
        if isinstance(branch := obj.get("gitBranch"), str) and branch:
            acc["branch"] = branch
        if kind == "assistant":
            model = obj["message"].get("model")
            if isinstance(model, str) and model and model != "<synthetic>":
                acc["model"] = model
        elif kind == "meta":  # a custom-title or summary line is never of another kind
            t = obj.get("type")
            if t == "custom-title" and isinstance(title := obj.get("customTitle"), str):
                acc["title"], acc["custom_title"] = title, True
            elif (t == "summary" and isinstance(text := obj.get("summary"), str)
                    and not acc["custom_title"]):
                acc["title"] = text

    def _link(self, acc: dict[str, Any]) -> None:
        if self.parent_file is None and acc["first_sid"]:
            self.parent_file = self.path.parent / f"{acc['first_sid']}.jsonl"
        if self.parent_file is None or not self.agent_id:
            return
        link = _parent_link(self.parent_file, self.agent_id)
        acc["parent_id"] = link["parent_id"]
        acc["extra"] = {**acc["extra"], "parent_native_id": self.parent_file.stem}
        if link["call_id"]:
            acc["extra"] = {**acc["extra"], "parent_call_id": link["call_id"]}

    def fix(self, key: str) -> dict[str, Any]:
        acc = self.sessions[key]
        if acc["id"] is None:
            main = self.sessions["main"]
            if key != "main":
                self.fix("main")
                acc["native_id"] = f"{main['native_id']}/sidechain-{key}"
                acc["parent_id"] = main["id"]
            elif acc["native_id"] is None:
                sid = acc["first_sid"] or self.path.stem
                acc["native_id"] = f"{sid}/agent-{self.agent_id}" if self.agent_id else sid
            acc["id"] = session_id_for(name, acc["native_id"], acc["first_ts"])
            if self.agent_id:
                self._link(acc)
        return acc

    def flush(self, final: bool = False) -> Iterator[Event]:
        for b in self.pending:
            acc = self.fix(b.stream)
            found = self.session_event(acc, with_time=False)
            if found is not None:
                yield found
            own = self.sessions["main"]["native_id"].split("/")[0]
            yield FoundMessage(acc["id"], b.build(own))
        self.pending.clear()
        if final:
            for acc in self.sessions.values():
                if acc["id"] is not None and (found := self.session_event(acc, with_time=True)):
                    yield found

    def session_event(self, acc: dict[str, Any], with_time: bool) -> FoundSession | None:
        """The session anew if what it shows changed since it was last emitted (its updated_at
        only counts ``with_time``, at the end), else None. Called for every message: the common
        "unchanged" answer compares two tuples and builds nothing."""
        snap = emit.changed(acc, _SHOWN, _shown_but_time, with_time)
        if snap is None:
            return None
        return FoundSession(Session(
            id=snap["id"], agent=name, native_id=snap["native_id"], title=snap["title"],
            created_at=snap["first_ts"], updated_at=snap["updated_at"], parent_id=snap["parent_id"],
            cwd=snap["cwd"], branch=snap["branch"], model=snap["model"], extra=dict(snap["extra"])))


def parse(path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None) -> Iterator[Event]:
    """Events for the session in ``path`` and its sidechains (see ``agents`` for the contract).

    Messages after the last ``Resumable`` are the file's still-open tail (a response may go on);
    parsing from that ``Resumable`` later emits them again, complete.
    """
    yield from _Parser(Path(path), state).run(offset)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as a Claude Code transcript that ``claude --resume`` accepts."""
    from oxide_git.agents.claude.export import export as _export

    return _export(session, messages, env)
