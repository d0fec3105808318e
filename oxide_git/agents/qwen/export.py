"""A session as a Qwen Code session file that ``qwen --resume <id>`` accepts (see qwen.py).

A Qwen session goes back line for line (``qwen_log`` kept every line with its message; the
message's own record is rebuilt by ``qwen_records.record``) under its own id. A fork of one (oxide's
fork, or a branch in the CLI) is written the same way under a new session id (every record names
its session). Another agent's session becomes records of Qwen's own shape, each hanging on the one
before (``parentUuid``), the first one's ``cwd`` the project (``--resume`` checks it): ``user``
records, ``assistant`` records whose parts are the model's, its shell/write/edit/read calls as
Qwen's own tools (``gemini_foreign``), answered by ``tool_result`` records.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.agents.gemini.foreign import Tools, last_compaction, lost_lines, turns
from oxide_git.agents.gemini.records import ACK
from oxide_git.agents.js_json import stringify as dumps
from oxide_git.agents.qwen.records import KEY, record
from oxide_git.agents.qwen.store import project_folder, qwen_dir
from oxide_git.core.model import Message, Session, to_iso

VERSION = "0.24.4"  # the release whose records another agent's session is written like
QWEN_TOOLS = Tools(
    shell=lambda cmd: ("run_shell_command", {"command": cmd}),
    write=lambda path, content: ("write_file", {"file_path": path, "content": content}),
    edit=lambda path, old, new: ("edit", {"file_path": path, "old_string": old, "new_string": new}),
    read=lambda path: ("read_file", {"file_path": path}),
)
_PROVENANCE = {"user": "real_user", "assistant": "assistant_output", "tool_result": "tool_result",
               "system": "system"}


def _is_uuid(text: str | None) -> bool:
    try:
        return str(uuid.UUID(str(text))) == text
    except ValueError:
        return False


def uuid_for(session: Session, salt: str = "") -> str:
    h = hashlib.sha1(f"oxide-qwen:{session.id}:{salt}".encode()).digest()[:16]
    return str(uuid.UUID(bytes=h, version=4))


def _renamed(line: Any, sid: str | None) -> Any:
    if sid is not None and isinstance(line, dict) and "sessionId" in line:
        return {**line, "sessionId": sid}
    return line


def _native_lines(session: Session, messages: Sequence[Message], sid: str | None) -> list[str]:
    g = session.extra.get(KEY) or {}
    at = min(int(g.get("prefix_at") or 0), len(messages))
    prefix = [dumps(_renamed(x, sid)) for x in g.get("prefix") or []]
    lines: list[str] = []
    for i, m in enumerate(messages):
        if i == at:
            lines += prefix
        kept = (m.extra.get(KEY) or {}).get("lines", [None])
        lines += [dumps(_renamed(record(m) if x is None else x, sid)) for x in kept]
    if at == len(messages):
        lines += prefix
    return lines


def _foreign_lines(session: Session, messages: Sequence[Message], sid: str,
                   cwd: str) -> tuple[list[str], list[str]]:
    said, lost = turns(messages, cwd, QWEN_TOOLS)
    lines: list[str] = []
    parent: str | None = None
    n = 0
    compacted = last_compaction(said)
    for i, t in enumerate(said):
        groups: list[tuple[str, list[dict[str, Any]]]]
        if i == compacted:  # as the CLI compresses: a chat_compression record, summary and answer
            groups = [("system", t.parts)]
        elif t.role == "model":
            groups = [("assistant", t.parts)]
        else:  # tool results and a prompt are records of their own
            results = [p for p in t.parts if "functionResponse" in p]
            rest = [p for p in t.parts if "functionResponse" not in p]
            groups = [(k, ps) for k, ps in (("tool_result", results), ("user", rest)) if ps]
        for kind, parts in groups:
            rid = uuid_for(session, f"{t.source.id}:{n}")
            n += 1
            rec: dict[str, Any] = {
                "uuid": rid, "parentUuid": parent, "sessionId": sid,
                "timestamp": to_iso(t.source.created_at or session.created_at or 0),
                "type": kind, "provenance": _PROVENANCE[kind], "cwd": cwd, "version": VERSION}
            if session.branch:
                rec["gitBranch"] = session.branch
            if kind == "assistant" and t.source.model:
                rec["model"] = t.source.model
            if kind == "system":
                rec.update(subtype="chat_compression", systemPayload=_compression(parts))
            else:
                rec["message"] = {"role": "model" if kind == "assistant" else "user", "parts": parts}
            lines.append(dumps(rec))
            parent = rid
    return lines, lost_lines(lost, "Qwen Code")


def _compression(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``chat_compression`` record's payload as 0.24.4 writes it: the history it resumes from
    is the summary and the CLI's answer to it."""
    info = {"originalTokenCount": 0, "newTokenCount": 0, "newTokenCountIsEstimated": True,
            "compressionStatus": 1, "triggerReason": "manual", "originalTokenCountIsEstimated": True}
    history = [{"role": "user", "parts": parts}, {"role": "model", "parts": [{"text": ACK}]}]
    return {"info": info, "compressedHistory": history, "completedToolCallIds": []}


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    cwd = session.cwd or (str(env.worktrees[0]) if env.worktrees else "")
    own = session.agent == "qwen" and bool(messages) and all(KEY in m.extra for m in messages)
    lost: list[str] = []
    if own and _is_uuid(session.native_id):
        sid = str(session.native_id)
        lines = _native_lines(session, messages, None)
    elif own:  # a fork of a Qwen session (oxide's, or a branch in the CLI): a session of its own
        sid = uuid_for(session)
        lines = _native_lines(session, messages, sid)
    else:
        sid = uuid_for(session)
        lines, lost = _foreign_lines(session, messages, sid, cwd)
    path = qwen_dir(env) / "projects" / project_folder(cwd) / "chats" / f"{sid}.jsonl"
    return Export(files={path: ("\n".join(lines) + "\n").encode()}, native_id=sid,
                  command=["qwen", "--resume", sid], cwd=cwd, lost=lost)
