"""Another agent's tool calls as Copilot CLI's own, for a session resumed into Copilot.

A shell command becomes Copilot's ``bash {command, description}``, a file write ``create {path,
file_text}``, a single edit ``edit {path, old_str, new_str}``, a read ``view {path}`` (paths
absolute, as Copilot's tools require); each is answered by a ``tool.execution_complete`` with the
output the other agent got. Only calls that have their result are handed over (Chat Completions
rejects a tool call left without one); the others stay text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oxide_git.agents import tools
from oxide_git.core.model import Message


def plan(messages: Sequence[Message], cwd: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """call_id -> (Copilot tool name, its arguments) for every answered call Copilot has a tool for."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for cid, c, p in tools.answered_calls(messages):
        args = tools.args_of(p.get("input"))
        if c.kind == "shell":
            said = args.get("description") if isinstance(args, Mapping) else None
            out[cid] = ("bash", {"command": c.command,
                                      "description": said if isinstance(said, str) and said
                                      else "Run a shell command"})
        elif c.kind == "write" and c.path:
            out[cid] = ("create", {"path": tools.absolute(c.path, cwd), "file_text": c.content})
        elif c.kind == "edit" and c.path and len(c.edits) == 1:
            (old, new), = c.edits
            out[cid] = ("edit", {"path": tools.absolute(c.path, cwd), "old_str": old,
                                      "new_str": new})
        elif c.kind == "read" and c.path:
            out[cid] = ("view", {"path": tools.absolute(c.path, cwd)})
    return out
