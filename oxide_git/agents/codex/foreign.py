"""Another agent's tool calls as Codex's own, for a session resumed into Codex.

A shell command (Claude ``Bash``, OpenCode ``bash``, Gemini ``run_shell_command``...) becomes the
``exec_command`` function call Codex 0.171 declares, with a ``function_call_output``; a file write
or edit (``Write``/``Edit``, ``write``/``edit``) becomes an ``apply_patch`` custom tool call (the
patch that write or edit amounts to) with a ``custom_tool_call_output``. So the model sees real
tool history, in the form it would have produced itself. Any other tool stays text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from oxide_git.agents import tools
from oxide_git.core import tool_kinds
from oxide_git.core.model import Message


def _lines(text: str, sign: str) -> list[str]:
    return [sign + ln for ln in text.split("\n")[:-1 if text.endswith("\n") else None]]


def patch_for(name: str, args: Any, cwd: str) -> str | None:
    """The apply_patch text a write or an edit amounts to (None if ``args`` do not say enough)."""
    c = tools.classify(name, args)
    if c is None or c.path is None or c.kind not in ("write", "edit"):
        return None
    path = tools.relative(c.path, cwd)
    if c.kind == "write":
        body = _lines(c.content or "", "+")
        return "\n".join(["*** Begin Patch", f"*** Add File: {path}", *body, "*** End Patch", ""])
    hunks: list[str] = []
    for old, new in c.edits:
        hunks += ["@@", *_lines(old + ("" if old.endswith("\n") else "\n"), "-"),
                  *_lines(new + ("" if new.endswith("\n") else "\n"), "+")]
    return "\n".join(["*** Begin Patch", f"*** Update File: {path}", *hunks, "*** End Patch", ""])


def plan(messages: Sequence[Message], cwd: str) -> dict[str, tuple[str, str, str]]:
    """call_id -> (codex item type, codex tool name, what was handed over) for every call that has a
    Codex equivalent; the payload is built by ``call_item``."""
    out: dict[str, tuple[str, str, str]] = {}
    for m in messages:
        for p in m.parts:
            if p.type != "tool_call" or not p.get("call_id"):
                continue
            name, args = str(p.get("name")), p.get("input")
            if name in tool_kinds.SHELL and tools.command(name, args) is not None:
                out[str(p.get("call_id"))] = ("function_call", "exec_command", json.dumps(
                    {"cmd": tools.command(name, args)}, ensure_ascii=False))
            elif (name in tool_kinds.WRITE or name in tool_kinds.EDIT or name == "editor") and patch_for(
                    name, args, cwd) is not None:
                out[str(p.get("call_id"))] = ("custom_tool_call", "apply_patch",
                                              str(patch_for(name, args, cwd)))
    return out


def call_item(call_id: str, planned: tuple[str, str, str]) -> dict[str, Any]:
    kind, name, body = planned
    if kind == "function_call":
        return {"type": kind, "name": name, "arguments": body, "call_id": call_id}
    return {"type": kind, "status": "completed", "call_id": call_id, "name": name, "input": body}


def result_item(call_id: str, planned: tuple[str, str, str], output: Any, is_error: bool) -> dict[str, Any]:
    text = tools.output_text(output)
    if is_error and not text.startswith("Exit code"):
        text = f"Exit code: 1\nOutput:\n{text}"
    kind = "function_call_output" if planned[0] == "function_call" else "custom_tool_call_output"
    return {"type": kind, "call_id": call_id, "output": text}
