"""Another agent's session as pi's entries, for a session resumed into pi.

A shell command (Claude ``Bash``, Codex ``exec_command``, OpenCode ``bash``...) becomes pi's
``bash {command}``, a file write ``write {path, content}``, an edit (one or several replacements,
Codex's ``apply_patch`` of one file included) ``edit {path, edits: [{oldText, newText}]}``, a read
``read {path}`` (``tools.classify`` says what a call is), each answered by a ``toolResult`` with
the output the other agent got, so pi's model sees real tool history. Only answered calls are
handed over; other calls and their results stay text. Reasoning becomes ``thinking`` blocks
(pi shows another model's thinking to its model as text), a compaction a ``compaction`` entry
(pi's context then starts at its summary), other system text a hidden ``custom_message``.
Assistant messages name the other agent as their provider: pi cannot restore that model and
continues with the one it is configured with.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from oxide_git.agents import tools
from oxide_git.core.model import Message, Part, PartType, Session, to_iso

_ZERO = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}


def plan(messages: Sequence[Message], cwd: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """call_id -> (pi tool, its arguments) for every answered call pi has a tool for."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for cid, c, _p in tools.answered_calls(messages):
        if c.kind == "shell" and c.command is not None:
            out[cid] = ("bash", {"command": c.command})
        elif c.kind == "write" and c.path:
            out[cid] = ("write", {"path": tools.absolute(c.path, cwd), "content": c.content})
        elif c.kind == "edit" and c.path and c.edits:
            out[cid] = ("edit", {"path": tools.absolute(c.path, cwd), "edits": [
                {"oldText": old, "newText": new} for old, new in c.edits]})
        elif c.kind == "read" and c.path:
            out[cid] = ("read", {"path": tools.absolute(c.path, cwd)})
    return out


def _text_of(p: Part) -> str | None:
    """A readable rendering of a part pi has no block for."""
    if p.type == PartType.TOOL_CALL:
        args = json.dumps(p.get("input"), ensure_ascii=False, indent=1)
        return f"[tool call {p.get('name')} ({p.get('call_id')})]\n{args}"
    if p.type == PartType.TOOL_RESULT:
        err = " (error)" if p.get("is_error") else ""
        return f"[tool result ({p.get('call_id')}){err}]\n{tools.output_text(p.get('output'))}"
    if p.type == PartType.PATCH:
        return str(p.get("text", ""))
    if p.type == PartType.FILE and p.get("path"):
        return f"[file {p.get('path')}]" + (f"\n{p.get('text')}" if isinstance(p.get("text"), str) else "")
    if p.type == PartType.IMAGE and (p.get("path") or p.get("url")):
        return f"[image {p.get('path') or p.get('url')}]"
    return None


class Rebuild:
    """The messages an export writes, and pi's entries for those pi did not write itself."""

    def __init__(self, session: Session, messages: Sequence[Message], cwd: str, *, native: bool) -> None:
        self.session, self.cwd, self.native = session, cwd, native
        self.harness = 0 if native else sum(1 for m in messages if m.is_harness())
        self.messages = list(messages) if native else [m for m in messages if not m.is_harness()]
        self.handover = {} if native else plan(self.messages, cwd)
        self.used: set[str] = set()
        self.count = 0
        self.ts = session.created_at or 0
        self.handed: Counter[str] = Counter()
        self.texts: Counter[str] = Counter()
        self.records: Counter[str] = Counter()
        self.left: Counter[str] = Counter()

    def new_id(self) -> str:
        while True:
            self.count += 1
            eid = hashlib.sha1(f"oxide:{self.session.id}:{self.count}".encode()).hexdigest()[:8]
            if eid not in self.used:
                return eid

    def _base(self, kind: str) -> dict[str, Any]:
        return {"type": kind, "id": self.new_id(), "parentId": None, "timestamp": to_iso(self.ts)}

    def _message(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**self._base("message"), "message": {**body, "timestamp": self.ts}}

    def entries(self, m: Message) -> list[dict[str, Any]]:
        """pi's entries for one message of another agent (or one pi never wrote)."""
        if m.created_at is not None:
            self.ts = m.created_at
        if m.role == "assistant":
            return self._assistant(m)
        out: list[dict[str, Any]] = []
        blocks: list[dict[str, Any]] = []
        for p in m.parts:
            if p.type == PartType.TOOL_RESULT and str(p.get("call_id")) in self.handover:
                out.append(self._result(p, self.handover[str(p.get("call_id"))][0]))
            elif p.type == PartType.COMPACTION:
                e = {**self._base("compaction"), "summary": str(p.get("summary") or ""),
                     "firstKeptEntryId": "", "tokensBefore": 0}
                e["firstKeptEntryId"] = e["id"]  # the context starts at the summary
                out.append(e)
            elif p.type == PartType.TEXT:
                blocks.append({"type": "text", "text": str(p.get("text", ""))})
            elif p.type == PartType.IMAGE and isinstance(p.get("data"), str):
                blocks.append({"type": "image", "data": p.get("data"),
                               "mimeType": p.get("mime") or "image/png"})
            else:
                self._other(p, blocks)
        if blocks and m.role == "system":
            out.append({**self._base("custom_message"), "customType": "oxide-system", "content": blocks,
                        "display": False})
        elif blocks:
            out.append(self._message({"role": "user", "content": blocks}))
        return out

    def _other(self, p: Part, blocks: list[dict[str, Any]]) -> None:
        text = _text_of(p)
        if text is not None:
            blocks.append({"type": "text", "text": text})
            self.texts[p.type.replace("_", " ")] += 1
        elif p.type == PartType.OTHER:
            self.records[str(p.get("kind") or "other")] += 1
        else:
            self.left[p.type] += 1

    def _assistant(self, m: Message) -> list[dict[str, Any]]:
        """The assistant's entries; a message that holds its calls' results too (OpenCode's) is
        split after each answered call: pi's model expects the results as messages of their own."""
        out: list[dict[str, Any]] = []
        blocks: list[dict[str, Any]] = []
        calls = False
        for p in m.parts:
            planned = self.handover.get(str(p.get("call_id"))) if p.type in (
                PartType.TOOL_CALL, PartType.TOOL_RESULT) else None
            if planned is not None and p.type == PartType.TOOL_RESULT:
                if blocks:
                    out.append(self._reply(m, blocks, calls))
                    blocks, calls = [], False
                out.append(self._result(p, planned[0]))
            elif planned is not None:
                blocks.append({"type": "toolCall", "id": str(p.get("call_id")), "name": planned[0],
                               "arguments": planned[1]})
                self.handed[f"tool calls of {self.session.agent}"] += 1
                calls = True
            elif p.type == PartType.TEXT:
                blocks.append({"type": "text", "text": str(p.get("text", ""))})
            elif p.type == PartType.REASONING:
                if str(p.get("text") or "").strip():
                    blocks.append({"type": "thinking", "thinking": str(p.get("text"))})
            else:
                self._other(p, blocks)
        if blocks:
            out.append(self._reply(m, blocks, calls))
        return out

    def _reply(self, m: Message, blocks: list[dict[str, Any]], calls: bool) -> dict[str, Any]:
        agent = self.session.agent
        return self._message({
            "role": "assistant", "content": blocks, "api": agent, "provider": agent,
            "model": m.model or self.session.model or agent,
            "usage": {**_ZERO, "totalTokens": 0, "cost": {**_ZERO, "total": 0}},
            "stopReason": "toolUse" if calls else "stop"})

    def _result(self, p: Part, tool: str) -> dict[str, Any]:
        self.handed[f"tool results of {self.session.agent}"] += 1
        return self._message({"role": "toolResult", "toolCallId": str(p.get("call_id")), "toolName": tool,
                              "content": [{"type": "text", "text": tools.output_text(p.get("output"))}],
                              "isError": bool(p.get("is_error"))})

    def lost(self) -> list[str]:
        agent = self.session.agent
        out = [f"{n} {what} part(s) became plain text" for what, n in sorted(self.texts.items())]
        out += [f"{n} {what} part(s) were left out" for what, n in sorted(self.left.items())]
        if self.records:
            kinds = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(self.records.items()))
            out.append(f"{sum(self.records.values())} record(s) of {agent} ({kinds}) have no place in a "
                       "pi session and were left out")
        if self.harness:
            out.append(f"{self.harness} message(s) of context {agent}'s harness injected (environment, "
                       "permissions, instructions) were left out")
        out += [f"{n} {what} were handed over as pi's own tool calls"
                for what, n in sorted(self.handed.items())]
        return out
