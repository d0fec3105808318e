"""What another agent's tool call *is*, so a receiving agent can replay it as its own tool.

Each agent names the same few tools its own way (a shell command is Claude's ``Bash``, Codex's
``exec_command``, OpenCode's and Copilot's ``bash``, Gemini's ``run_shell_command``...).
``classify`` turns a tool call into one of a few kinds with plain arguments; each exporter maps the
kinds it has an equivalent for onto its own tool (Claude: ``claude_export``; Codex:
``codex_foreign``), and keeps the rest as text. Pure: no I/O.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from oxide_git.core.tool_kinds import EDIT, READ, SHELL, WRITE

if TYPE_CHECKING:  # annotations only: `git oxide blame` replays a call without the model
    from oxide_git.core.model import Message



class Call(NamedTuple):  # no dataclass: blame's replay of a call imports no dataclasses
    kind: str  # shell | write | edit | read
    command: str | None = None
    path: str | None = None  # as the call gave it (absolute or relative)
    content: str | None = None
    edits: tuple[tuple[str, str], ...] = ()  # (old, new)


def args_of(inp: Any) -> Any:
    """A call's input, with arguments given as a JSON string (Chat Completions) parsed."""
    if isinstance(inp, str) and inp.lstrip().startswith("{"):
        from oxide_git.agents.jsonline import loads

        try:
            value = loads(inp)
        except (ValueError, RecursionError):
            return inp
        return value if isinstance(value, dict) else inp
    return inp


def command(name: str, args: Any) -> str | None:
    """The command line of a shell tool call."""
    args = args_of(args)
    if not isinstance(args, Mapping):
        return args if isinstance(args, str) and name in SHELL else None
    for key in ("command", "cmd", "commands"):
        v = args.get(key)
        if isinstance(v, str):
            return v
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            if key == "commands":
                return " && ".join(v)
            return v[2] if len(v) == 3 and v[1] in ("-lc", "-c") else shlex.join(v)
    return None


def path_arg(args: Mapping[str, Any]) -> str | None:
    for key in ("file_path", "filePath", "path", "absolute_path", "target_file"):
        v = args.get(key)
        if isinstance(v, str) and v:
            return v
    return None


def relative(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it lies inside it."""
    if os.path.isabs(path) and cwd and (path == cwd or path.startswith(cwd.rstrip("/") + "/")):
        return os.path.relpath(path, cwd)
    return path


def absolute(path: str, cwd: str) -> str:
    return path if os.path.isabs(path) or not cwd else os.path.join(cwd, path)


def edits_of(args: Mapping[str, Any]) -> tuple[tuple[str, str], ...] | None:
    many = args.get("edits")  # MultiEdit, pi's edit
    out = []
    for e in many if isinstance(many, list) else [args]:
        if not isinstance(e, Mapping):
            return None
        old = e.get("old_string", e.get("oldString", e.get("old_str", e.get("oldText"))))  # pi: oldText
        new = e.get("new_string", e.get("newString", e.get("new_str", e.get("newText"))))
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        out.append((old, new))
    return tuple(out)


def from_patch(text: str) -> Call | None:
    """A Codex ``apply_patch`` of one file as the write or edit it amounts to (None otherwise)."""
    lines = text.strip("\n").split("\n")
    if len(lines) < 3 or lines[0] != "*** Begin Patch" or lines[-1] != "*** End Patch":
        return None
    body = lines[1:-1]
    heads = [ln for ln in body if ln.startswith("*** ")]
    if len(heads) != 1 or body[0] != heads[0]:
        return None
    head, rest = heads[0], body[1:]
    if head.startswith("*** Add File: ") and all(ln.startswith("+") for ln in rest):
        return Call("write", path=head[14:], content="".join(ln[1:] + "\n" for ln in rest))
    if not head.startswith("*** Update File: ") or not rest or not rest[0].startswith("@@"):
        return None
    edits: list[tuple[str, str]] = []
    old: list[str] = []
    new: list[str] = []
    for ln in [*rest, "@@"]:
        if ln.startswith("@@"):
            if old or new:
                edits.append(("\n".join(old), "\n".join(new)))
            old, new = [], []
        elif ln.startswith("-"):
            old.append(ln[1:])
        elif ln.startswith("+"):
            new.append(ln[1:])
        elif ln.startswith(" "):
            old.append(ln[1:])
            new.append(ln[1:])
        else:
            return None
    return Call("edit", path=head[17:], edits=tuple(edits)) if edits else None


def _cline(name: str, args: Any) -> Call | None:
    """Cline's ``editor`` (a write given ``new_text`` alone, an edit given ``old_text`` too; an
    ``insert_line`` has no like elsewhere) and ``read_files`` of one whole file."""
    if not isinstance(args, Mapping):
        return None
    if name == "read_files":
        files = args.get("files")
        if isinstance(files, list) and len(files) == 1 and isinstance(files[0], Mapping):
            f = files[0]
            if isinstance(f.get("path"), str) and f.get("start_line") is None and f.get("end_line") is None:
                return Call("read", path=f["path"])
        return None
    path, new, old = args.get("path"), args.get("new_text"), args.get("old_text")
    if not isinstance(path, str) or not isinstance(new, str) or args.get("insert_line") is not None:
        return None
    if old is None:
        return Call("write", path=path, content=new)
    return Call("edit", path=path, edits=((old, new),)) if isinstance(old, str) else None


def classify(name: str, args: Any) -> Call | None:
    """The kind of a tool call and its plain arguments; None when no other agent has its like."""
    if name in ("editor", "read_files"):
        return _cline(name, args_of(args))
    if name == "apply_patch":  # Codex: the patch text itself, or {"input": text}
        text = args.get("input") if isinstance(args, Mapping) else args
        return from_patch(text) if isinstance(text, str) else None
    if name in SHELL:
        cmd = command(name, args)
        return Call("shell", command=cmd) if cmd is not None else None
    args = args_of(args)
    if not isinstance(args, Mapping):
        return None
    path = path_arg(args)
    if path is None:
        return None
    content = args.get("content", args.get("file_text"))  # file_text: Copilot CLI's create
    if name in WRITE and isinstance(content, str):
        return Call("write", path=path, content=content)
    if name in EDIT:
        edits = edits_of(args)
        return Call("edit", path=path, edits=edits) if edits else None
    if name in READ:
        return Call("read", path=path)
    return None


def output_text(output: Any) -> str:
    """A tool result's output as text (content blocks: their texts)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = [b.get("text") for b in output if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
        if len(texts) == len(output):
            return "\n".join(str(t) for t in texts)
    import json

    return json.dumps(output, ensure_ascii=False)


def answered(messages: Sequence[Message]) -> set[str]:
    """The call ids that have a result in ``messages`` (only those can be handed over: an agent's
    model API rejects a tool call left without its result)."""
    return {str(p.get("call_id")) for m in messages for p in m.parts
            if p.type == "tool_result" and p.get("call_id")}


def answered_calls(messages: Sequence[Message]) -> Iterator[tuple[str, Call, Any]]:
    """Each tool call of ``messages`` that has its result and that ``classify`` knows: (its call
    id, what it does, its part). What a receiving agent's exporter maps to its own tools."""
    from oxide_git.core.model import PartType

    done = answered(messages)
    for m in messages:
        for p in m.parts:
            cid = p.get("call_id")
            if p.type != PartType.TOOL_CALL or not cid or str(cid) not in done:
                continue
            c = classify(str(p.get("name")), p.get("input"))
            if c is not None:
                yield str(cid), c, p
