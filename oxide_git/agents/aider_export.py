"""Aider export: a session written as one new section of ``.aider.chat.history.md``, in the
grammar that ``aider.parse`` reads back (see the module docstring there)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.errors import OxideError
from oxide_git.model import Message, PartType, Session

from .aider import HISTORY, MARKER, _kind, name


def _out(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _segments(msg: Message, foreign: bool, lost: set[str]) -> Iterator[tuple[str, str]]:
    """(kind, text) pieces of one message in aider's grammar: user, assistant or tool."""
    own = {"user": "user", "assistant": "assistant"}.get(str(msg.role), "tool")
    for p in msg.parts:
        if p.type == PartType.TEXT:
            if own == "tool" and str(msg.role) != "tool":
                lost.add(f"{msg.role} messages are written as '> ' lines, which aider ignores.")
            yield own, str(p.get("text", ""))
        elif p.type == PartType.TOOL_CALL:
            lost.add("Tool calls are written as '> ' lines; aider drops them on restore.")
            yield "tool", f"{p.get('name')}: {_out(p.get('input'))}"
        elif p.type == PartType.TOOL_RESULT:
            if str(msg.role) != "tool":
                lost.add("Tool results are written as '> ' lines; aider drops them on restore.")
            yield "tool", _out(p.get("output"))
        elif p.type == PartType.COMPACTION:
            yield own, str(p.get("summary", ""))
        elif not foreign and p.type in (PartType.FILE, PartType.PATCH, PartType.OTHER):
            continue  # aider's own file, patch and commit parts are read back from the lines
        else:
            lost.add(f"{p.type} parts have no place in an aider history and are left out.")


def _trim(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _section(session: Session, messages: Sequence[Message], stamp: str, lost: set[str]) -> str:
    out = [f"\n# aider chat started at {stamp}\n\n> {MARKER}{session.id}  \n"]
    prev = "tool"
    foreign = session.agent != name
    pieces = [seg for m in messages for seg in _segments(m, foreign, lost)]
    for i, (kind, text) in enumerate(pieces):
        lines = _trim(text)
        nxt = pieces[i + 1][0] if i + 1 < len(pieces) else None
        if kind == "user":
            lines = lines or ["<blank>"]
            out.append("\n" + "".join(f"#### {ln}  \n" for ln in lines))
        elif kind == "assistant":
            if not lines:
                continue
            if any(_kind(ln) in ("user", "tool", "header") for ln in lines):
                lost.add("Assistant lines starting with '> ' or '#### ' read back as tool or "
                         "user lines.")
            out.append("\n" + "\n".join(lines) + "\n\n")
            if nxt == "assistant":
                lost.add("Consecutive assistant messages read back as one.")
        else:
            if not lines:
                continue
            if prev == "tool" and len(out) > 1:
                out.append("\n")
            out.append("".join(f"> {ln}  \n" if ln.strip() else ">  \n" for ln in lines))
        prev = kind
    return "".join(out)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """One new ``# aider chat started at`` section for ``session``, to APPEND to the history file.

    ``files`` maps ``<worktree>/.aider.chat.history.md`` to the section alone, not to the whole
    file: the resume operation appends it (aider itself only ever appends). The section starts with
    a ``> git-oxide: restored session <id>`` line that aider ignores and ``parse`` reads back into
    ``session.extra["restored_from"]``. ``native_id`` assumes no other section of the file has the
    same start time (ordinal 0); the caller must count earlier headers with that time to be exact.
    """
    cwd = session.cwd or session.worktree
    if cwd:  # aider keeps its history at the top of the worktree
        here = Path(os.path.normpath(cwd))
        tops = [Path(w) for w in env.worktrees if here == Path(w) or Path(w) in here.parents]
        cwd = str(max(tops, key=lambda w: len(str(w)))) if tops else cwd
    elif env.worktrees:
        cwd = str(env.worktrees[0])
    if not cwd:
        raise OxideError("This session has no working folder to resume aider in.",
                         hint="Run the resume from inside the repository's worktree.")
    lost: set[str] = set()
    if session.created_at is None:
        lost.add("The session has no start time; its aider header says 1970-01-01 00:00:00.")
    stamp = datetime.fromtimestamp((session.created_at or 0) / 1000, UTC).strftime(
        "%Y-%m-%d %H:%M:%S")
    if any(p.type == PartType.REASONING for m in messages for p in m.parts):
        lost.add("Reasoning is not kept: aider's history has no place for it.")
    if session.agent != name:
        lost.add("aider --restore-chat-history drops '> ' tool lines and reads every session "
                 "in the file, not only this one.")
    text = _section(session, messages, stamp, lost)
    return Export(
        files={Path(cwd) / HISTORY: text.encode("utf-8")},
        native_id=f"{stamp}#0",
        command=["aider", "--restore-chat-history"],
        cwd=cwd,
        lost=sorted(lost),
    )
