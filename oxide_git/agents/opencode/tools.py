"""Another agent's tool calls as OpenCode tool parts, where OpenCode has the same tool.

OpenCode replays a ``tool`` part in state ``completed`` as a tool call and its result to its model
(``error``: the call and its error). So a shell command, a file write, an edit or a read of Claude
Code, Codex (or any agent naming them alike) becomes OpenCode's ``bash``, ``write``, ``edit`` or
``read`` with OpenCode's own argument names, Codex's ``apply_patch`` OpenCode's ``apply_patch``
(``{patchText}``), and its model sees real tool history. Other tools stay text (``opencode_export``
writes them and names them in ``lost``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from oxide_git.agents import tools
from oxide_git.core import tool_kinds
from oxide_git.core.model import Part


def opencode_tool(name: Any, inp: Any, cwd: str) -> tuple[str, dict[str, Any]] | None:
    """(OpenCode tool, its input) for another agent's tool call, or None when there is none."""
    if name == "apply_patch":  # Codex's (a custom tool: the patch text itself); OpenCode's has it too
        patch = inp if isinstance(inp, str) else _first(inp, "input", "patch", "patchText") if (
            isinstance(inp, dict)) else None
        return ("apply_patch", {"patchText": patch}) if isinstance(patch, str) and patch else None
    args = tools.args_of(inp)
    if not isinstance(args, dict) or not isinstance(name, str):
        return None
    if name == "editor":  # Cline's one tool for writes and edits
        c = tools.classify(name, args)
        if c is None or c.path is None:
            return None
        target = tools.absolute(c.path, cwd)
        if c.kind == "write":
            return "write", {"filePath": target, "content": c.content or ""}
        (old, new), = c.edits
        return "edit", {"filePath": target, "oldString": old, "newString": new}
    if name in tool_kinds.SHELL:
        cmd = tools.command(name, args)
        if cmd is None:
            return None
        out: dict[str, Any] = {"command": cmd}
        for key in ("description", "timeout"):
            if isinstance(args.get(key), str | int) and not isinstance(args.get(key), bool):
                out[key] = args[key]
        workdir = args.get("workdir") or args.get("cwd")
        if isinstance(workdir, str):
            out["workdir"] = workdir
        return "bash", out
    path = _path(args, cwd)
    if path is None:
        return None
    content = _first(args, "content", "file_text")  # file_text: Copilot CLI's create
    if name in tool_kinds.WRITE and isinstance(content, str):
        return "write", {"filePath": path, "content": content}
    if name in tool_kinds.EDIT:
        old = _first(args, "old_string", "oldString", "old_str", "old")
        new = _first(args, "new_string", "newString", "new_str", "new")
        many = tools.edits_of(args) if "edits" in args else None  # MultiEdit, pi's edit: one of them
        if many is not None and len(many) == 1:
            ((old, new),) = many
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        edit: dict[str, Any] = {"filePath": path, "oldString": old, "newString": new}
        if isinstance(_first(args, "replace_all", "replaceAll"), bool):
            edit["replaceAll"] = _first(args, "replace_all", "replaceAll")
        return "edit", edit
    if name in tools.READ:
        read: dict[str, Any] = {"filePath": path}
        for key in ("offset", "limit"):
            if isinstance(args.get(key), int) and not isinstance(args.get(key), bool):
                read[key] = args[key]
        return "read", read
    return None


def tool_part(call: Part, res: Part | None, tool: str, inp: Mapping[str, Any], ms: int) -> dict[str, Any]:
    """The ``tool`` part: state ``completed`` with the output, or ``error``."""
    t = {"start": ms, "end": ms}
    if res is None:
        state: dict[str, Any] = {"status": "error", "input": dict(inp),
                                 "error": "The tool call has no recorded result.", "time": t}
    elif res.get("is_error"):
        state = {"status": "error", "input": dict(inp), "error": tools.output_text(res.get("output")),
                 "time": t}
    else:
        title = (inp.get("command") if tool == "bash" else PurePosixPath(str(inp["filePath"])).name
                 if "filePath" in inp else tool)
        state = {"status": "completed", "input": dict(inp), "output": tools.output_text(res.get("output")),
                 "title": str(title), "metadata": {}, "time": t}
    return {"type": "tool", "tool": tool, "callID": str(call.get("call_id") or ""), "state": state}


def _path(args: Mapping[str, Any], cwd: str) -> str | None:
    p = tools.path_arg(args)
    return tools.absolute(p, cwd) if p else None


def _first(args: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in args:
            return args[k]
    return None
