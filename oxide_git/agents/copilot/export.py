"""Sessions as the ``events.jsonl`` that ``copilot --resume ID`` accepts: the inverse of ``copilot.parse``.

Copilot CLI resumes a session from ``<COPILOT_HOME>/session-state/<id>/events.jsonl`` alone (no
``workspace.yaml``, no ``session-store.db`` needed: Copilot writes both again). A Copilot session
goes back line for line (``copilot_lines``). Another agent's session is rebuilt from the events
Copilot itself replays: a ``session.start`` naming the folder, ``user.message``,
``assistant.message`` (text and ``toolRequests``), ``tool.execution_start`` /
``tool.execution_complete``; its shell commands, writes, edits and reads become Copilot's own
tools (``copilot_foreign``), other tools text, and its harness context is left out.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Export, tools
from oxide_git.agents.copilot import foreign as copilot_foreign
from oxide_git.agents.copilot.lines import dumps, line, line_groups
from oxide_git.agents.copilot.store import events_file
from oxide_git.core.model import Message, Part, PartType, Session, session_id_for, to_iso

VERSION = "1.0.102"  # the release whose format this writes (tests/compat/pins.txt)


class _Writer:
    """Lines of one session, each chained to the line before it (``parentId``)."""

    def __init__(self, session: Session, native_id: str, cwd: str) -> None:
        self.session, self.native_id, self.cwd = session, native_id, cwd
        self.lines: list[bytes] = []
        self.prev: str | None = None
        self.count = 0
        self.ts = session.created_at or 0
        self.lost: Counter[str] = Counter()
        self.handed: Counter[str] = Counter()
        self.records: Counter[str] = Counter()
        self.handover: dict[str, tuple[str, dict[str, Any]]] = {}
        self.own_tools = session.agent == "copilot"  # a fork of a Copilot session: its tools as they are
        self.calls: dict[str, tuple[str, Any]] = {}  # call id -> (tool, arguments) written so far

    def uid(self) -> str:
        self.count += 1
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"oxide:{self.session.id}:{self.count}"))

    def event(self, kind: str, data: dict[str, Any]) -> None:
        uid = self.uid()
        self.lines.append(dumps({"type": kind, "data": data, "id": uid, "timestamp": to_iso(self.ts),
                                 "parentId": self.prev}))
        self.prev = uid

    # -- a Copilot session's own lines ----------------------------------------------------------
    def native(self, messages: Sequence[Message]) -> None:
        """Each line as Copilot wrote it. A line keeps its ``parentId`` even when that event is
        not written (a sub-agent's, which is a session of its own): Copilot 1.0.102 resumes such
        a chain as it is."""
        for m in messages:
            groups = line_groups(m.parts)
            if groups is None:  # a message oxide or another agent made: rebuilt as events
                self.message(m)
                continue
            for g in groups:
                self.lines.append(line(g))
                env = g[0].get("ev").get("env") or {}
                if isinstance(env.get("id"), str):
                    self.prev = env["id"]
            if m.created_at is not None:
                self.ts = m.created_at

    # -- another agent's messages ---------------------------------------------------------------
    def start(self) -> None:
        data: dict[str, Any] = {"sessionId": self.native_id, "version": 1, "producer": "copilot-agent",
                                "copilotVersion": VERSION, "startTime": to_iso(self.ts),
                                "context": {"cwd": self.cwd}}
        if self.session.branch:
            data["context"]["branch"] = self.session.branch
        self.event("session.start", data)

    def message(self, m: Message) -> None:
        if m.created_at is not None:
            self.ts = m.created_at
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[Part] = []
        for p in m.parts:
            if p.type == PartType.TEXT and p.get("text"):
                texts.append(str(p.get("text")))
            elif p.type == PartType.TOOL_CALL:
                call = self.call(p)
                if call is not None:
                    calls.append(call)
                else:
                    texts.append(_as_text(p))
                    self.lost["tool call parts became plain text"] += 1
            elif p.type == PartType.TOOL_RESULT:
                results.append(p)
            elif p.type == PartType.COMPACTION and p.get("summary"):
                self.event("session.compaction_complete", {"success": True,
                                                           "summaryContent": str(p.get("summary"))})
            elif p.type == PartType.PATCH and p.get("text"):
                texts.append(str(p.get("text")))
            elif p.type == PartType.OTHER:
                self.records[str(p.get("kind") or "other")] += 1
            elif p.type in (PartType.FILE, PartType.IMAGE) and p.get("path"):
                texts.append(f"[{p.type} {p.get('path')}]")
            else:
                self.lost[f"{p.type} parts ({m.role}) were left out"] += 1
        text = "\n\n".join(texts)
        if m.role == "assistant" and (text or calls):
            data: dict[str, Any] = {"messageId": self.uid(), "content": text, "toolRequests": calls}
            if m.model and self.own_tools:
                data["model"] = m.model
            self.event("assistant.message", data)
        elif text and m.role == "user":
            self.event("user.message", {"content": text})
        elif text:
            self.lost[f"{m.role} messages with text were left out"] += 1
        for p in results:
            self.result(p)

    def call(self, p: Part) -> dict[str, Any] | None:
        cid = str(p.get("call_id") or "")
        if self.own_tools and cid:
            name, args = str(p.get("name")), p.get("input")
        elif cid in self.handover:
            name, args = self.handover[cid]
            self.handed[f"tool calls of {self.session.agent}"] += 1
        else:
            return None
        self.calls[cid] = (name, args)
        return {"toolCallId": cid, "name": name, "arguments": args, "type": "function"}

    def result(self, p: Part) -> None:
        cid = str(p.get("call_id") or "")
        out = tools.output_text(p.get("output")) if p.get("output") is not None else ""
        if cid not in self.calls:
            self.event("assistant.message", {"messageId": self.uid(), "content": _as_text(p),
                                             "toolRequests": []})
            self.lost["tool result parts became plain text"] += 1
            return
        name, args = self.calls.pop(cid)
        self.event("tool.execution_start", {"toolCallId": cid, "toolName": name, "arguments": args})
        self.event("tool.execution_complete", {"toolCallId": cid, "success": not p.get("is_error"),
                                               "result": {"content": out}})


def _as_text(p: Part) -> str:
    if p.type == PartType.TOOL_CALL:
        args = json.dumps(p.get("input"), ensure_ascii=False, indent=1)
        return f"[tool call {p.get('name')} ({p.get('call_id')})]\n{args}"
    out = p.get("output")
    out = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
    return f"[tool result ({p.get('call_id')}){' (error)' if p.get('is_error') else ''}]\n{out}"


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as ``<COPILOT_HOME>/session-state/<native id>/events.jsonl``."""
    own = (session.agent == "copilot" and session.native_id is not None and "/" not in session.native_id
           and session.id == session_id_for("copilot", session.native_id, session.created_at))
    native_id = str(session.native_id) if own else str(
        uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"oxide:{session.id}"))
    cwd = session.cwd or (str(env.worktrees[0]) if env.worktrees else str(env.home))
    w = _Writer(session, native_id, cwd)
    harness = 0
    if own:
        w.native(messages)
    else:  # one agent's harness context never becomes another agent's turns
        harness = sum(1 for m in messages if m.is_harness())
        messages = [m for m in messages if not m.is_harness()]
        if session.agent != "copilot":
            w.handover = copilot_foreign.plan(messages, cwd)
        w.start()
        for m in messages:
            w.message(m)
    path = events_file(env, native_id)
    lost = [f"{n} {what}" for what, n in sorted(w.lost.items())]
    if w.records:
        kinds = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(w.records.items()))
        n = sum(w.records.values())
        lost.append(f"{n} record{'' if n == 1 else 's'} of {session.agent} ({kinds}) "
                    f"{'has' if n == 1 else 'have'} no place in a Copilot session and "
                    f"{'was' if n == 1 else 'were'} left out")
    if harness:
        lost.append(f"{harness} message(s) of context {session.agent}'s harness injected (system "
                    "prompt, environment, instructions) were left out")
    lost += [f"{n} {what} were handed over as Copilot's own tool calls"
             for what, n in sorted(w.handed.items())]
    body = b"".join(ln + b"\n" for ln in w.lines)
    return Export({Path(path): body}, native_id, ["copilot", "--resume", native_id], cwd, lost)
