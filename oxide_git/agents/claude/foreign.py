"""Another agent's tool calls as Claude Code's own, for a session resumed into Claude.

A shell command becomes a ``Bash`` tool_use, a file write ``Write``, a single edit ``Edit``, a read
``Read`` (``tools.classify`` says what a call is), each answered by a ``tool_result`` with the
output the other agent got; so Claude's model sees real tool history. Only calls that have their
result are handed over (the Messages API rejects a tool_use left without one); others stay text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from oxide_git.agents import tools
from oxide_git.core.model import Message, Part, PartType

_ID_OK = re.compile(r"[^a-zA-Z0-9_-]")


def plan(messages: Sequence[Message], cwd: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """call_id -> (Claude tool name, its input) for every answered call Claude has a tool for."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for cid, c, _p in tools.answered_calls(messages):
        if c.kind == "shell":
            out[cid] = ("Bash", {"command": c.command})
        elif c.kind == "write" and c.path:
            out[cid] = ("Write", {"file_path": tools.absolute(c.path, cwd), "content": c.content})
        elif c.kind == "edit" and c.path and len(c.edits) == 1:
            (old, new), = c.edits
            out[cid] = ("Edit", {"file_path": tools.absolute(c.path, cwd),
                                      "old_string": old, "new_string": new})
        elif c.kind == "read" and c.path:
            out[cid] = ("Read", {"file_path": tools.absolute(c.path, cwd)})
    return out


def tool_id(call_id: Any) -> str:
    """A call id as the Messages API takes it (letters, digits, ``_`` and ``-``)."""
    return _ID_OK.sub("_", str(call_id)) or "call"


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
               "content": tools.output_text(p.get("output"))}
        if p.get("is_error"):
            out["is_error"] = True
        return out
    return None
