"""Another agent's session as Gemini API turns, for an agent that keeps Gemini-shaped messages.

Gemini CLI and Qwen Code both store ``{role: user|model, parts}`` turns; their tools differ a
little (``Tools``). A shell command, a write, a single edit and a read of the other agent become a
``functionCall`` of the receiving agent's own tool, answered by a ``functionResponse`` in the next
user turn (``tools.classify`` says what a call is); only calls that have their result are handed
over, the rest is text. Harness context is left out, reasoning too (neither agent replays
another's thoughts), and ``lost`` counts both. The last compaction's summary is a user turn the
exporters write in the receiving agent's own compaction form (``last_compaction``). Pure.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from oxide_git.agents import tools
from oxide_git.core.model import Message, PartType


@dataclass(frozen=True)
class Tools:
    """The receiving agent's tool names and argument builders (path: absolute)."""

    shell: Callable[[str], tuple[str, dict[str, Any]]]
    write: Callable[[str, str], tuple[str, dict[str, Any]]]
    edit: Callable[[str, str, str], tuple[str, dict[str, Any]]]
    read: Callable[[str], tuple[str, dict[str, Any]]]


@dataclass
class Turn:
    role: str  # user | model
    parts: list[dict[str, Any]]
    source: Message


def plan(messages: Sequence[Message], cwd: str, own: Tools) -> dict[str, tuple[str, dict[str, Any]]]:
    """call_id -> (tool name, args) for every answered call the receiving agent has a tool for."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for cid, c, _p in tools.answered_calls(messages):
        if c.kind == "shell" and c.command is not None:
            out[cid] = own.shell(c.command)
        elif c.kind == "write" and c.path:
            out[cid] = own.write(tools.absolute(c.path, cwd), c.content or "")
        elif c.kind == "edit" and c.path and len(c.edits) == 1:
            (old, new), = c.edits
            out[cid] = own.edit(tools.absolute(c.path, cwd), old, new)
        elif c.kind == "read" and c.path:
            out[cid] = own.read(tools.absolute(c.path, cwd))
    return out


def _text(p: Any) -> str | None:
    if p.type == PartType.TEXT:
        return str(p.get("text", ""))
    if p.type == PartType.COMPACTION:
        return str(p.get("summary", ""))
    if p.type == PartType.PATCH:
        return str(p.get("text", ""))
    if p.type == PartType.TOOL_CALL:
        args = json.dumps(p.get("input"), ensure_ascii=False, indent=1)
        return f"[tool call {p.get('name')} ({p.get('call_id')})]\n{args}"
    if p.type == PartType.TOOL_RESULT:
        err = " (error)" if p.get("is_error") else ""
        return f"[tool result ({p.get('call_id')}){err}]\n{tools.output_text(p.get('output'))}"
    if p.type in (PartType.FILE, PartType.IMAGE) and p.get("path"):
        return f"[{p.type} {p.get('path')}]"
    return None


def turns(messages: Sequence[Message], cwd: str, own: Tools) -> tuple[list[Turn], Counter[str]]:
    """The turns of ``messages`` in the receiving agent's terms, and what could not go over."""
    handover = plan(messages, cwd, own)
    lost: Counter[str] = Counter()
    out: list[Turn] = []

    def add(role: str, part: dict[str, Any], m: Message) -> None:
        if out and out[-1].role == role and out[-1].source is m:
            out[-1].parts.append(part)
        else:
            out.append(Turn(role, [part], m))

    for m in messages:
        if m.is_harness():
            lost["harness message"] += 1
            continue
        base = "model" if m.role == "assistant" else "user"
        for p in m.parts:
            planned = handover.get(str(p.get("call_id"))) if p.get("call_id") else None
            if p.type == PartType.TOOL_CALL and planned is not None:
                add("model", {"functionCall": {"id": str(p.get("call_id")), "name": planned[0],
                                               "args": planned[1]}}, m)
            elif p.type == PartType.TOOL_RESULT and planned is not None:
                key = "error" if p.get("is_error") else "output"
                add("user", {"functionResponse": {"id": str(p.get("call_id")), "name": planned[0],
                                                  "response": {key: tools.output_text(p.get("output"))}}}, m)
            elif p.type == PartType.REASONING:
                lost["reasoning part"] += 1
            elif (text := _text(p)) is not None:
                add(base, {"text": text}, m)
            else:
                lost[f"{p.type} part"] += 1
    return out, lost


def last_compaction(said: Sequence[Turn]) -> int | None:
    """The index of the turn that is the session's last compaction (its summary as text), where
    the receiving agent's own compaction form goes: its model then starts from the summary, as
    the other agent's did (the earlier turns stay in the file)."""
    for i in range(len(said) - 1, -1, -1):
        t = said[i]
        if t.source.is_compaction() and t.role == "user" and all(set(p) == {"text"} for p in t.parts):
            return i
    return None


def lost_lines(lost: Counter[str], agent: str) -> list[str]:
    """``lost`` as sentences for ``Export.lost``."""
    out = []
    for what, n in sorted(lost.items()):
        if what == "harness message":
            out.append(f"{n} harness message(s) of the other agent left out")
        else:
            out.append(f"{n} {what}(s) {agent} cannot replay left out")
    return out
