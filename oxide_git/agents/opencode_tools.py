"""Another agent's tool calls as OpenCode tool parts, where OpenCode has the same tool.

OpenCode replays a ``tool`` part in state ``completed`` as a tool call and its result to its model
(``error``: the call and its error). So a shell command, a file write, an edit or a read of Claude
Code, Codex (or any agent naming them alike) becomes OpenCode's ``bash``, ``write``, ``edit`` or
``read`` with OpenCode's own argument names, Codex's ``apply_patch`` OpenCode's ``apply_patch``
(``{patchText}``), and its model sees real tool history. Other tools stay text (``opencode_export``
writes them and names them in ``lost``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from ..model import Part

SHELL = frozenset({"Bash", "bash", "exec_command", "shell", "local_shell", "shell_command",
                   "run_shell_command", "execute_command"})
WRITE = frozenset({"Write", "write", "write_file", "create_file"})
EDIT = frozenset({"Edit", "edit", "replace", "str_replace"})
READ = frozenset({"Read", "read", "read_file", "view"})


def opencode_tool(name: Any, inp: Any, cwd: str) -> tuple[str, dict[str, Any]] | None:
    """(OpenCode tool, its input) for another agent's tool call, or None when there is none."""
    if name == "apply_patch":  # Codex's (a custom tool: the patch text itself); OpenCode's has it too
        patch = inp if isinstance(inp, str) else _first(inp, "input", "patch", "patchText") if (
            isinstance(inp, dict)) else None
        return ("apply_patch", {"patchText": patch}) if isinstance(patch, str) and patch else None
    args = _args(inp)
    if args is None or not isinstance(name, str):
        return None
    if name in SHELL:
        cmd = _command(args)
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
    if name in WRITE and isinstance(args.get("content"), str):
        return "write", {"filePath": path, "content": args["content"]}
    if name in EDIT:
        old = _first(args, "old_string", "oldString", "old_str", "old")
        new = _first(args, "new_string", "newString", "new_str", "new")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        edit: dict[str, Any] = {"filePath": path, "oldString": old, "newString": new}
        if isinstance(_first(args, "replace_all", "replaceAll"), bool):
            edit["replaceAll"] = _first(args, "replace_all", "replaceAll")
        return "edit", edit
    if name in READ:
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
        state = {"status": "error", "input": dict(inp), "error": output_text(res.get("output")),
                 "time": t}
    else:
        title = (inp.get("command") if tool == "bash" else PurePosixPath(str(inp["filePath"])).name
                 if "filePath" in inp else tool)
        state = {"status": "completed", "input": dict(inp), "output": output_text(res.get("output")),
                 "title": str(title), "metadata": {}, "time": t}
    return {"type": "tool", "tool": tool, "callID": str(call.get("call_id") or ""), "state": state}


def output_text(value: Any) -> str:
    """A tool result's output as the text OpenCode keeps (blocks joined, JSON otherwise)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [b.get("text") for b in value if isinstance(b, dict) and isinstance(b.get("text"), str)]
        if len(texts) == len(value):
            return "\n".join(str(t) for t in texts)
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def _args(inp: Any) -> dict[str, Any] | None:
    if isinstance(inp, dict):
        return inp
    if isinstance(inp, str):
        from .jsonline import loads

        try:
            value = loads(inp)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None
    return None


def _command(args: Mapping[str, Any]) -> str | None:
    cmd = _first(args, "command", "cmd", "commands")
    if isinstance(cmd, str):
        return cmd
    if isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd):
        if len(cmd) == 3 and cmd[0] in ("bash", "sh", "zsh", "/bin/bash", "/bin/sh") and cmd[1] in (
                "-lc", "-c"):
            return str(cmd[2])
        return shlex.join(cmd)
    return None


def _path(args: Mapping[str, Any], cwd: str) -> str | None:
    p = _first(args, "file_path", "filePath", "path", "absolute_path", "target_file")
    if not isinstance(p, str) or not p:
        return None
    return p if PurePosixPath(p).is_absolute() else f"{cwd.rstrip('/')}/{p}"


def _first(args: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in args:
            return args[k]
    return None
