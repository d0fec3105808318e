"""Another agent's tool calls as Cline's own, for a session resumed into Cline.

A shell command becomes ``run_commands {commands: [cmd]}``, a file write ``editor {path,
new_text}``, a single edit ``editor {path, old_text, new_text}``, a read ``read_files {files:
[{path}]}`` (``tools.classify`` says what a call is), each answered by a ``tool_result`` with the
output the other agent got; so Cline's model sees real tool history. Only calls that have their
result are handed over; the others stay text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oxide_git.agents import tools
from oxide_git.agents.claude.foreign import tool_id
from oxide_git.core.model import Message, Part, PartType


def plan(messages: Sequence[Message], cwd: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """call_id -> (Cline tool name, its input) for every answered call Cline has a tool for."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for cid, c, _p in tools.answered_calls(messages):
        if c.kind == "shell" and c.command is not None:
            out[cid] = ("run_commands", {"commands": [c.command]})
        elif c.kind == "write" and c.path:
            out[cid] = ("editor", {"path": tools.absolute(c.path, cwd), "new_text": c.content or ""})
        elif c.kind == "edit" and c.path and len(c.edits) == 1:
            (old, new), = c.edits
            out[cid] = ("editor", {"path": tools.absolute(c.path, cwd), "old_text": old,
                                        "new_text": new})
        elif c.kind == "read" and c.path:
            out[cid] = ("read_files", {"files": [{"path": tools.absolute(c.path, cwd)}]})
    return out


def block(p: Part, handover: Mapping[str, tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    """The tool_use or tool_result block of a handed-over call's part; None for any other part."""
    planned = handover.get(str(p.get("call_id")))
    if planned is None:
        return None
    if p.type == PartType.TOOL_CALL:
        return {"type": "tool_use", "id": tool_id(p.get("call_id")), "name": planned[0],
                "input": planned[1]}
    if p.type == PartType.TOOL_RESULT:
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id(p.get("call_id")),
                               "name": planned[0], "content": tools.output_text(p.get("output"))}
        if p.get("is_error"):
            out["is_error"] = True
        return out
    return None
