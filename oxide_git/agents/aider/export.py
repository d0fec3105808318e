"""Aider export: a session as sections to append to ``.aider.chat.history.md`` (and its prompts
to ``.aider.input.history``).

- An aider session oxide imported and did not change (its id is still the one its native id
  gives) is written back exactly as aider wrote it: its lead and every message's ``raw`` text,
  byte for byte, restored sections included; messages without raw text are written from their
  parts. Its native id stays its own.
- Any other session (another agent's, a fork) is a new section: a header at its start time, a
  ``> git-oxide: restored session <id>`` line, then its messages. Another agent's messages become
  aider's grammar: prompts are ``#### `` lines; the agent's turn (text, tool calls, tool results)
  is assistant markdown, the calls and results in fenced blocks, since aider has no tool calls and
  ``--restore-chat-history`` drops every ``> `` line. Harness messages are left out.
- Writing is idempotent: what the files already hold is not written again (resume appends
  ``files`` as they are), and ``native_id`` is the id the importer gives the section where it is,
  or will be, in the file (its header time and that time's ordinal there).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.agents.aider.input import input_history_of, missing, render
from oxide_git.agents.aider.read import MARKER, RESTORED, kind_of, name
from oxide_git.core.agent_files import AIDER_HISTORY as HISTORY
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message, PartType, Role, Session, session_id_for

_HEADER = re.compile(r"^# aider chat started at (\S+ \S+)\s*$", re.M)
BUDGET = 1024  # aider's smallest chat-history budget, in tokens (an unknown model's)
COMMAND = ["aider", "--restore-chat-history"]


def _out(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _fence(text: str, info: str = "") -> str:
    """``text`` in a fence longer than any backtick run in it; lines aider's splitter would take
    for a header, a prompt or a status line get a leading space."""
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, run + 1)
    body = [f" {ln}" if kind_of(ln) in ("header", "user", "tool") or ln.startswith("# ") else ln
            for ln in text.replace("\r\n", "\n").split("\n")]
    return "\n".join([fence + info, *body, fence])


def _escape(line: str) -> str:
    """An assistant line that aider would drop or misread, with a markdown backslash escape."""
    if line.startswith(("# ", "#### ", "> ")) or line in (">", "####"):
        return "\\" + line
    return line


def _own_segments(msg: Message, lost: set[str]) -> Iterator[tuple[str, str]]:
    """(kind, text) of one of aider's own messages without raw text: user, assistant or tool."""
    own = {"user": "user", "assistant": "assistant"}.get(str(msg.role), "tool")
    for p in msg.parts:
        if p.type == PartType.TEXT:
            yield own, str(p.get("text", ""))
        elif p.type == PartType.TOOL_RESULT:
            yield "tool", _out(p.get("output"))
        elif p.type == PartType.COMPACTION:
            yield own, str(p.get("summary", ""))
        elif p.type not in (PartType.FILE, PartType.PATCH, PartType.OTHER):
            lost.add(f"{p.type} parts have no place in an aider history and are left out.")


def _foreign_segments(msg: Message, lost: set[str], kinds: set[str]) -> Iterator[tuple[str, str]]:
    """(kind, text) of another agent's message: prompts are user text, the rest assistant text."""
    role = str(msg.role)
    for p in msg.parts:
        if p.type in (PartType.TEXT, PartType.COMPACTION):
            text = str(p.get("text", "") if p.type == PartType.TEXT else p.get("summary", ""))
            if role == "user":
                yield "user", text
            elif role == "assistant":
                yield "assistant", text
            else:
                lost.add(f"{role} messages are not part of an aider conversation and are left out.")
        elif p.type == PartType.TOOL_CALL:
            lost.add("Tool calls and their results are written as text in the assistant's turn "
                     "(aider has no tool calls).")
            call = f"Tool call `{p.get('name')}` ({p.get('call_id')}):"
            yield "assistant", call + "\n\n" + _fence(_out(p.get("input")), "json")
        elif p.type == PartType.TOOL_RESULT:
            lost.add("Tool calls and their results are written as text in the assistant's turn "
                     "(aider has no tool calls).")
            head = f"Tool result ({p.get('call_id')}){' (error)' if p.get('is_error') else ''}:"
            yield "assistant", head + "\n\n" + _fence(_out(p.get("output")))
        elif p.type == PartType.REASONING:
            lost.add("Reasoning is not kept: aider's history has no place for it.")
        elif p.type == PartType.OTHER:
            kinds.add(str(p.get("kind")))
        else:
            lost.add(f"{p.type} parts have no place in an aider history and are left out.")


def _trim(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _render(pieces: Sequence[tuple[str, str]], foreign: bool, lost: set[str]) -> str:
    """Pieces in aider's grammar, as ``io.py`` writes them; consecutive assistant pieces are one
    block (aider's splitter would join them anyway)."""
    out: list[str] = []
    merged: list[tuple[str, str]] = []
    for kind, text in pieces:
        if kind == "assistant" and merged and merged[-1][0] == "assistant":
            merged[-1] = ("assistant", merged[-1][1] + "\n\n" + text)
        else:
            merged.append((kind, text))
    prev = "tool"
    for kind, text in merged:
        lines = _trim(text)
        if kind == "user":
            out.append("\n" + "".join(f"#### {ln}  \n" for ln in lines or ["<blank>"]))
        elif kind == "assistant" and lines:
            if foreign:
                escaped = [_escape(ln) for ln in lines]
                if escaped != lines:
                    lost.add("Assistant lines starting with '# ', '> ' or '#### ' are written with "
                             "a backslash before them (aider would drop or misread them).")
                lines = escaped
            elif any(kind_of(ln) in ("user", "tool", "header") for ln in lines):
                lost.add("Assistant lines starting with '> ' or '#### ' read back as tool or "
                         "user lines.")
            out.append("\n" + "\n".join(lines) + "\n\n")
        elif kind == "tool" and lines:
            if prev == "tool" and out:
                out.append("\n")
            out.append("".join(f"> {ln}  \n" if ln.strip() else ">  \n" for ln in lines))
        prev = kind
    return "".join(out)


def _unchanged(session: Session) -> bool:
    """An aider session as oxide imported it (not a fork, not another agent's)."""
    return (session.agent == name and bool(session.native_id) and "lead" in session.extra
            and session.id == session_id_for(name, str(session.native_id), session.created_at))


def _body(session: Session, messages: Sequence[Message], exact: bool, lost: set[str]) -> str:
    """The messages in order: raw text where aider's own, rendered otherwise."""
    foreign = session.agent != name
    chunks: list[str] = []
    todo: list[tuple[str, str]] = []
    harness = 0
    kinds: set[str] = set()
    for m in messages:
        raw = m.extra.get("raw")
        if not foreign and isinstance(raw, str):
            if todo:
                chunks.append(_render(todo, foreign, lost))
                todo = []
            if not exact and not chunks:  # a new marker line is written instead of the old one
                raw = "".join(ln for ln in raw.splitlines(keepends=True)
                              if not ln.startswith(f"> {MARKER}"))
            chunks.append(raw)
        elif foreign and m.is_harness():
            harness += 1
        elif foreign:
            todo += list(_foreign_segments(m, lost, kinds))
        else:
            todo += list(_own_segments(m, lost))
    if todo:
        chunks.append(_render(todo, foreign, lost))
    if harness:
        lost.add(f"{harness} message(s) that {session.agent}'s harness injected (environment, "
                 "instructions, context) are left out.")
    if kinds:
        lost.add(f"{session.agent}'s own records ({', '.join(sorted(kinds))}) have no place in an "
                 "aider history and are left out.")
    return "".join(chunks)


def _goes_on(rest: str) -> bool:
    """What follows a session in the file continues it: more of its section, or a restored one."""
    lines = [ln for ln in rest.splitlines() if ln.strip()]
    if not lines:
        return False
    if not _HEADER.match(lines[0]):
        return True
    opening = []
    for ln in lines[1:]:
        if kind_of(ln) not in ("tool", "assistant"):
            break
        opening.append(ln)
    return f"> {RESTORED}" in [ln.rstrip() for ln in opening]


def _session_end(existing: str, pos: int) -> int:
    """Where the session that reaches ``pos`` ends in the file: after the rest of its section and
    every restored section that continues it (the blank line before the next header stays)."""
    end = len(existing)
    for m in _HEADER.finditer(existing, pos):
        if not _goes_on(existing[m.start():]):
            end = m.start()
            break
    return end - 1 if end < len(existing) and existing[end - 1:end] == "\n" else end


def _ordinal(existing: str, stamp: str, upto: int) -> int:
    return sum(1 for m in _HEADER.finditer(existing, 0, upto) if m.group(1) == stamp)


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _worktree_top(session: Session, env: AgentEnv) -> str:
    cwd = session.cwd or session.worktree
    if cwd:  # aider keeps its history at the top of the worktree
        here = Path(os.path.normpath(cwd))
        tops = [Path(w) for w in env.worktrees if here == Path(w) or Path(w) in here.parents]
        return str(max(tops, key=lambda w: len(str(w)))) if tops else cwd
    if env.worktrees:
        return str(env.worktrees[0])
    raise OxideError("This session has no working folder to resume aider in.",
                     hint="Run the resume from inside the repository's worktree.")


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """The session's sections (and prompts) for the history files, to APPEND (see the module
    docstring); ``files`` holds only what the files do not have yet (nothing on a second resume)."""
    cwd = _worktree_top(session, env)
    history = Path(cwd) / HISTORY
    lost: set[str] = set()
    exact = _unchanged(session)
    if exact:
        head = str(session.extra["lead"])
        m = _HEADER.search(head)
        stamp = m.group(1) if m else ""
    else:
        if session.created_at is None:
            lost.add("The session has no start time; its aider header says 1970-01-01 00:00:00.")
        stamp = datetime.fromtimestamp((session.created_at or 0) / 1000, UTC).strftime(
            "%Y-%m-%d %H:%M:%S")
        head = f"\n# aider chat started at {stamp}\n\n> {MARKER}{session.id}  \n"
    text = head + _body(session, messages, exact, lost)
    existing = _read(history)
    at = existing.find(text) if existing else -1
    native = f"{stamp}#{_ordinal(existing, stamp, at if at >= 0 else len(existing))}"
    if exact and native != session.native_id:
        lost.add(f"Sessions in this history file started in the same second: written here, this "
                 f"one's native id is {native} (it was {session.native_id}).")
    rewritten: dict[Path, bytes] = {}
    if at >= 0 and _goes_on(existing[at + len(text):]):
        # After a conversation rewind, resume writes this file instead: the session as oxide
        # has it now, in place of all of it that the file holds (the rest of the file as it is).
        end = _session_end(existing, at + len(text))
        rewritten[history] = (existing[:at] + text + existing[end:]).encode("utf-8")
        lost.add("The history file holds more of this session than oxide has: aider restores all "
                 "of it (after a conversation rewind, oxide writes the rewound session in its place "
                 "and sets the longer file aside).")
    others = len(_HEADER.findall(existing)) - (len(_HEADER.findall(text)) if at >= 0 else 0)
    if others:
        lost.add(f"aider --restore-chat-history restores the whole history file: the model also "
                 f"sees the {others} other section(s) in it.")
    if len(text) // 4 > BUDGET:
        lost.add(f"aider summarizes a restored history longer than its chat-history budget (1k to "
                 f"8k tokens by model; this one is about {len(text) // 4} tokens) unless it is "
                 "run with --max-chat-history-tokens.")
    prompts = _prompts(session, messages, exact)
    input_path = input_history_of(history)
    files = {history: b"" if at >= 0 else text.encode("utf-8"),
             input_path: "".join(missing(prompts, _read(input_path))).encode("utf-8")}
    return Export(files=files, native_id=native, command=list(COMMAND), cwd=cwd,
                  lost=sorted(lost), rewritten=rewritten)


def _prompts(session: Session, messages: Sequence[Message], exact: bool) -> list[str]:
    """The input-history entries of the session's prompts: as typed, or new ones."""
    out = []
    for m in messages:
        typed = m.extra.get("input")
        if session.agent == name and isinstance(typed, str):
            out.append(typed)  # a prompt or a confirmation, as typed
        elif m.role != Role.USER or m.is_harness():
            continue
        elif session.agent != name or not exact:
            text = m.text()
            if text.strip():
                ms = m.created_at or session.created_at or 0
                when = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
                out.append(render(when, text))
    return out

