"""Another agent's tool calls as Codex's own, for a session resumed into Codex.

A shell command (Claude ``Bash``, OpenCode ``bash``, Gemini ``run_shell_command``...) becomes the
``exec_command`` function call Codex 0.171 declares, with a ``function_call_output``; a file write
or edit (``Write``/``Edit``, ``write``/``edit``) becomes an ``apply_patch`` custom tool call (the
patch that write or edit amounts to) with a ``custom_tool_call_output``. So the model sees real
tool history, in the form it would have produced itself. Any other tool stays text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..model import Message

SHELL = frozenset({"Bash", "bash", "shell", "run_shell_command", "exec_command", "shell_command",
                   "local_shell", "run_commands"})
WRITE = frozenset({"Write", "write", "write_file", "create_file"})
EDIT = frozenset({"Edit", "edit", "replace", "str_replace_based_edit_tool", "MultiEdit"})


def _command(name: str, args: Any) -> str | None:
    if not isinstance(args, Mapping):
        return args if isinstance(args, str) and name in SHELL else None
    for key in ("command", "cmd", "commands"):
        v = args.get(key)
        if isinstance(v, str):
            return v
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            if key == "commands":
                return " && ".join(v)
            return v[2] if len(v) == 3 and v[1] in ("-lc", "-c") else " ".join(v)
    return None


def _path(args: Mapping[str, Any], cwd: str) -> str | None:
    for key in ("file_path", "filePath", "path", "absolute_path"):
        v = args.get(key)
        if isinstance(v, str) and v:
            if os.path.isabs(v) and cwd and (v == cwd or v.startswith(cwd.rstrip("/") + "/")):
                return os.path.relpath(v, cwd)
            return v
    return None


def _lines(text: str, sign: str) -> list[str]:
    return [sign + ln for ln in text.split("\n")[:-1 if text.endswith("\n") else None]]


def patch_for(name: str, args: Any, cwd: str) -> str | None:
    """The apply_patch text a write or an edit amounts to (None if ``args`` do not say enough)."""
    if not isinstance(args, Mapping):
        return None
    path = _path(args, cwd)
    if path is None:
        return None
    if name in WRITE and isinstance(args.get("content"), str):
        body = _lines(args["content"], "+")
        return "\n".join(["*** Begin Patch", f"*** Add File: {path}", *body, "*** End Patch", ""])
    many = args.get("edits")  # MultiEdit
    edits: list[Any] = many if isinstance(many, list) else [args]
    hunks: list[str] = []
    for e in edits:
        if not isinstance(e, Mapping):
            return None
        old = e.get("old_string", e.get("oldString", e.get("old_str")))
        new = e.get("new_string", e.get("newString", e.get("new_str")))
        if not isinstance(old, str) or not isinstance(new, str):
            return None
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
            if name in SHELL and _command(name, args) is not None:
                out[str(p.get("call_id"))] = ("function_call", "exec_command", json.dumps(
                    {"cmd": _command(name, args)}, ensure_ascii=False))
            elif (name in WRITE or name in EDIT) and patch_for(name, args, cwd) is not None:
                out[str(p.get("call_id"))] = ("custom_tool_call", "apply_patch",
                                              str(patch_for(name, args, cwd)))
    return out


def call_item(call_id: str, planned: tuple[str, str, str]) -> dict[str, Any]:
    kind, name, body = planned
    if kind == "function_call":
        return {"type": kind, "name": name, "arguments": body, "call_id": call_id}
    return {"type": kind, "status": "completed", "call_id": call_id, "name": name, "input": body}


def result_item(call_id: str, planned: tuple[str, str, str], output: Any, is_error: bool) -> dict[str, Any]:
    text = output if isinstance(output, str) else _text(output)
    if is_error and not text.startswith("Exit code"):
        text = f"Exit code: 1\nOutput:\n{text}"
    kind = "function_call_output" if planned[0] == "function_call" else "custom_tool_call_output"
    return {"type": kind, "call_id": call_id, "output": text}


def _text(output: Any) -> str:
    if isinstance(output, list):  # content blocks (Claude): their texts
        texts = [b.get("text") for b in output if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
        if len(texts) == len(output):
            return "\n".join(str(t) for t in texts)
    return json.dumps(output, ensure_ascii=False)
