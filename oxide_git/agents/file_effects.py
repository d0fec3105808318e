"""What an agent's tool call does to files: the writes, edits and patches it applies (which can be
replayed on a file's text, exactly as the agent's tool applied them), and whether a shell command
names a file. `git oxide blame` uses it to tell the agent's lines from the user's. Pure: no I/O.

The kinds come from ``tools.classify`` (one table of tool names for every agent); what is added
here is what replaying needs: ``replace_all``, the text editor tool's commands, and Codex patches
of several files, with moves, deletions and Codex's own way of finding a hunk's lines.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import shlex
from collections.abc import Mapping
from typing import Any, NamedTuple

from oxide_git.agents import tools
from oxide_git.core import tool_kinds
from oxide_git.core.tool_kinds import READ_ONLY

_PATCH = re.compile(r"\*\*\* Begin Patch\n.*?\*\*\* End Patch", re.S)


class NotReplayable(Exception):
    """An edit that does not apply to the text it is replayed on (someone else changed it)."""


class Effect(NamedTuple):  # NamedTuples, not dataclasses: blame's replay imports no dataclasses
    """What one call does to one file. ``kind``: write | edit | patch | delete | opaque (it
    changes the file in a way that cannot be replayed)."""

    path: str  # as the call gave it: absolute, or relative to the call's folder
    kind: str
    content: str | None = None
    edits: tuple[tuple[str, str, bool], ...] = ()  # (old, new, replace all)
    hunks: tuple[Hunk, ...] = ()
    move_to: str | None = None


class Hunk(NamedTuple):
    """One ``@@`` chunk of a Codex patch."""

    context: str | None
    old: tuple[str, ...]
    new: tuple[str, ...]
    end_of_file: bool = False


def effects(name: str, args: Any) -> list[Effect] | None:
    """The files a tool call writes and how; None when the call writes no file it names (a read,
    a search, or a shell command: see ``shell_command``)."""
    if name == "apply_patch" or (isinstance(args, Mapping) and name in ("patch", "apply_patch")):
        text = (args.get("input", args.get("patchText", args.get("patch")))
                if isinstance(args, Mapping) else args)
        return parse_patch(text) if isinstance(text, str) else None
    if name in tool_kinds.SHELL:
        cmd = tools.command(name, args)
        found = _PATCH.search(cmd or "")  # `apply_patch <<EOF ...` or ["apply_patch", patch]
        return parse_patch(found.group(0)) if found and "apply_patch" in (cmd or "") else None
    if name in READ_ONLY:
        return None
    args = tools.args_of(args)
    if not isinstance(args, Mapping):
        return None
    notebook = args.get("notebook_path")  # Claude Code's NotebookEdit
    path = tools.path_arg(args) or (notebook if isinstance(notebook, str) else None)
    if path is None:
        return None
    if name == "str_replace_based_edit_tool":
        return None if args.get("command") == "view" else [_text_editor(path, args)]
    call = tools.classify(name, args)
    if call is not None and call.kind == "write" and call.content is not None:
        return [Effect(path, "write", content=call.content)]
    if call is not None and call.kind == "edit":
        return [Effect(path, "edit", edits=_edits(args))]
    if call is not None and call.kind == "read":
        return None
    return [Effect(path, "opaque")]  # a tool we do not know, given a path: it may change it


def _text_editor(path: str, args: Mapping[str, Any]) -> Effect:
    cmd = args.get("command")
    if cmd == "create" and isinstance(args.get("file_text"), str):
        return Effect(path, "write", content=args["file_text"])
    if cmd == "str_replace" and isinstance(args.get("old_str"), str):
        return Effect(path, "edit", edits=((args["old_str"], str(args.get("new_str") or ""), False),))
    return Effect(path, "opaque")


def _edits(args: Mapping[str, Any]) -> tuple[tuple[str, str, bool], ...]:
    many = args.get("edits")
    out = []
    for e in many if isinstance(many, list) else [args]:
        if not isinstance(e, Mapping):
            continue
        old = e.get("old_string", e.get("oldString", e.get("old_str")))
        new = e.get("new_string", e.get("newString", e.get("new_str")))
        if isinstance(old, str) and isinstance(new, str):
            out.append((old, new, bool(e.get("replace_all", e.get("replaceAll", False)))))
    return tuple(out)


def apply(effect: Effect, text: str | None) -> str | None:
    """The file's text after ``effect`` (None: the file is gone); NotReplayable when it cannot
    apply to ``text`` (the file is not what the agent saw)."""
    if effect.kind == "write":
        return effect.content
    if effect.kind == "delete":
        if text is None:
            raise NotReplayable("deleting a file that is not there")
        return None
    if effect.kind == "edit":
        for old, new, every in effect.edits:
            if old == "" and not text:  # Claude Code: an empty old_string creates the file
                text = new
                continue
            if text is None or old == "" or old not in text:
                raise NotReplayable("the text to replace is not in the file")
            text = text.replace(old, new) if every else text.replace(old, new, 1)
        return text
    if effect.kind == "patch":
        if text is None:
            raise NotReplayable("updating a file that is not there")
        return _apply_hunks(text, effect.hunks)
    raise NotReplayable(f"a {effect.kind} change cannot be replayed")


def unapply(effect: Effect, text: str | None) -> str | None:
    """The file's text before ``effect``, from its text after it (replaying backwards, for an
    edit whose text to replace was not in the file as last seen: someone changed it first).
    NotReplayable unless exactly one text before it gives ``text`` again."""
    if effect.kind == "edit" and text is not None and not any(every for _, _, every in effect.edits):
        before: str | None = text
        for old, new, _ in reversed(effect.edits):
            if before is None or not new or before.count(new) != 1:
                raise NotReplayable("the edit's new text is not in the file exactly once")
            before = before.replace(new, old, 1)
    elif effect.kind == "patch" and text is not None:
        hunks = tuple(Hunk(h.context, h.new, h.old, h.end_of_file) for h in effect.hunks)
        for h in hunks:
            if _count(text.split("\n"), h.old) != 1:
                raise NotReplayable("the patch's new lines are not in the file exactly once")
        before = _apply_hunks(text, hunks)
    else:
        raise NotReplayable(f"a {effect.kind} change cannot be replayed backwards")
    if apply(effect, before) != text:
        raise NotReplayable("replaying the edit on the text before it does not give the text after it")
    return before


def _count(lines: list[str], pattern: tuple[str, ...]) -> int:
    n = len(pattern)
    return sum(1 for i in range(len(lines) - n + 1) if tuple(lines[i:i + n]) == pattern) if n else 0


# Codex's patch format ---------------------------------------------------------------------------


def parse_patch(text: str) -> list[Effect] | None:
    """Each file of a Codex ``*** Begin Patch`` envelope as an Effect (None: not a patch)."""
    lines = text.strip().split("\n")
    if len(lines) < 2 or lines[0].strip() != "*** Begin Patch" or lines[-1].strip() != "*** End Patch":
        return None
    out: list[Effect] = []
    i, body = 0, lines[1:-1]
    while i < len(body):
        head = body[i]
        i += 1
        if head.startswith("*** Add File: "):
            added = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:])
                i += 1
            out.append(Effect(head[14:].strip(), "write", content="".join(a + "\n" for a in added)))
        elif head.startswith("*** Delete File: "):
            out.append(Effect(head[17:].strip(), "delete"))
        elif head.startswith("*** Update File: "):
            path, move = head[17:].strip(), None
            if i < len(body) and body[i].startswith("*** Move to: "):
                move = body[i][13:].strip()
                i += 1
            start = i
            while i < len(body) and not body[i].startswith(("*** Add File: ", "*** Delete File: ",
                                                             "*** Update File: ")):
                i += 1
            hunks = _hunks(body[start:i])
            if hunks is None:
                return None
            out.append(Effect(path, "patch", hunks=tuple(hunks), move_to=move))
        elif head.strip():
            return None
    return out


def _hunks(lines: list[str]) -> list[Hunk] | None:
    out: list[Hunk] = []
    context: str | None = None
    old: list[str] = []
    new: list[str] = []
    started = False

    def close(eof: bool = False) -> None:
        if started and (old or new or context):
            out.append(Hunk(context, tuple(old), tuple(new), eof))

    for ln in lines:
        if ln.startswith("@@"):
            close()
            context, old, new, started = (ln[2:].strip() or None), [], [], True
        elif ln.strip() == "*** End of File":
            close(True)
            context, old, new, started = None, [], [], False
        elif ln.startswith(("+", "-", " ")) or ln == "":
            started = True
            tag, rest = (ln[:1], ln[1:]) if ln else (" ", "")
            if tag in " -":
                old.append(rest)
            if tag in " +":
                new.append(rest)
        else:
            return None
    close()
    return out


def _seek(lines: list[str], pattern: tuple[str, ...], start: int, eof: bool) -> int | None:
    """Where ``pattern`` starts in ``lines`` from ``start``, as Codex's seek_sequence finds it:
    exactly, then ignoring trailing, then surrounding white space (from the end first at EOF)."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if eof else start
    for norm in (lambda s: s, str.rstrip, str.strip):
        for i in [*([first] if eof else []), *range(start, len(lines) - len(pattern) + 1)]:
            if all(norm(lines[i + j]) == norm(p) for j, p in enumerate(pattern)):
                return i
    return None


def _apply_hunks(text: str, hunks: tuple[Hunk, ...]) -> str:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, tuple[str, ...]]] = []
    at = 0
    for h in hunks:
        if h.context is not None:
            found = _seek(lines, (h.context,), at, False)
            if found is None:
                raise NotReplayable(f"patch context {h.context!r} is not in the file")
            at = found + 1
        if not h.old:
            replacements.append((len(lines), 0, h.new))
            continue
        old, new = h.old, h.new
        found = _seek(lines, old, at, h.end_of_file)
        if found is None and old[-1] == "":
            old, new = old[:-1], new[:-1] if new and new[-1] == "" else new
            found = _seek(lines, old, at, h.end_of_file)
        if found is None:
            raise NotReplayable("patch lines are not in the file")
        replacements.append((found, len(old), new))
        at = found + len(old)
    for start, count, new in sorted(replacements, reverse=True):
        lines[start:start + count] = list(new)
    return "\n".join(lines) + "\n" if lines else ""


# shell commands ---------------------------------------------------------------------------------

_SPLIT = re.compile(r"[;&|()<>\n`$]+")


def shell_names(command: str, path: str, cwd: str) -> bool:
    """Whether a shell command names ``path`` (absolute): the file itself, a glob that matches it
    or a folder it is in (not the working folder itself)."""
    rel = posixpath.normpath(os.path.relpath(path, cwd)) if cwd else path
    for chunk in _SPLIT.split(command):
        try:
            words = shlex.split(chunk, comments=False)
        except ValueError:
            words = chunk.split()
        for w in words:
            w = w.strip("'\"")
            if not w or (w.startswith("-") and "=" not in w):
                continue
            w = w.split("=", 1)[1] if w.startswith("-") else w
            target = posixpath.normpath(w if os.path.isabs(w) else posixpath.join(cwd, w)) if cwd else w
            if target == path or w == rel:
                return True
            globbed = any(c in w for c in "*?[")
            if globbed and (fnmatch.fnmatchcase(path, target) or fnmatch.fnmatchcase(rel, w)):
                return True
            if cwd and target != posixpath.normpath(cwd) and path.startswith(target.rstrip("/") + "/"):
                return True
    return False
