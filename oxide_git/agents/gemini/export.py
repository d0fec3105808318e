"""A session as a Gemini CLI session file that ``gemini --resume <uuid>`` accepts (see gemini.py).

A Gemini session goes back line for line: its header, then each message's lines (``gemini_log``
kept them; the record's own line is rebuilt from the parts by ``gemini_records.record``), under
its own file name in the project's slug folder. A fork of one (oxide's fork, or a rewind in the
CLI) is written the same way under a new session id (the ``$set.sessionId`` lines say it too).
Another agent's session becomes records of Gemini's own shape: user records, and ``gemini``
records whose content is the model's parts, its shell/write/edit/read calls as Gemini's own tools
(``gemini_foreign``), answered by a user record of ``functionResponse`` parts.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.agents.gemini.foreign import Tools, last_compaction, lost_lines, turns
from oxide_git.agents.gemini.records import ACK, KEY, next_results, record
from oxide_git.agents.gemini.store import PROJECT_ROOT, project_hash, slug_for
from oxide_git.agents.js_json import stringify as dumps
from oxide_git.core.model import Message, Session, to_iso

GEMINI_TOOLS = Tools(
    shell=lambda cmd: ("run_shell_command", {"command": cmd}),
    write=lambda path, content: ("write_file", {"file_path": path, "content": content}),
    edit=lambda path, old, new: ("replace", {"file_path": path, "old_string": old, "new_string": new,
                                             "instruction": "Replace the text."}),
    read=lambda path: ("read_file", {"file_path": path}),
)


def _is_uuid(text: str | None) -> bool:
    try:
        return str(uuid.UUID(str(text))) == text
    except ValueError:
        return False


def uuid_for(session: Session, salt: str = "") -> str:
    h = hashlib.sha1(f"oxide-gemini:{session.id}:{salt}".encode()).digest()[:16]
    return str(uuid.UUID(bytes=h, version=4))


def file_name(created_at: int | None, sid: str) -> str:
    stamp = (to_iso(created_at or 0) or "")[:16].replace(":", "-")
    return f"session-{stamp}-{sid[:8]}.jsonl"


def _resolve(line: Any, own: dict[str, Any] | None, sid: str | None) -> Any:
    """A kept line with its SELF elements rebuilt and, for a new session id, its sessionId."""
    if not isinstance(line, dict):
        return line
    patch = line.get("$set")
    if isinstance(patch, dict):
        msgs = patch.get("messages")
        if isinstance(msgs, list) and own is not None:
            patch = {**patch, "messages": [own if m == {"$oxide": "self"} else m for m in msgs]}
        if sid is not None and "sessionId" in patch:
            patch = {**patch, "sessionId": sid}
        return {**line, "$set": patch}
    if sid is not None and "sessionId" in line and "projectHash" in line:
        return {**line, "sessionId": sid, "kind": "main"} if "kind" in line else {**line, "sessionId": sid}
    return line


def _native_lines(session: Session, messages: Sequence[Message], sid: str | None) -> list[str]:
    g = session.extra.get(KEY) or {}
    lines = [dumps(_resolve(g.get("header"), None, sid))] if g.get("header") else []
    at = min(int(g.get("prefix_at") or 0), len(messages))  # after a rewind: after the kept messages
    for i, m in enumerate(messages):
        if i == at:
            lines += [dumps(_resolve(x, None, sid)) for x in g.get("prefix") or []]
        own = record(m, next_results(messages[i + 1] if i + 1 < len(messages) else None))
        kept = (m.extra.get(KEY) or {}).get("lines", [None])
        lines += [dumps(own if x is None else _resolve(x, own, sid)) for x in kept]
    if at == len(messages):
        lines += [dumps(_resolve(x, None, sid)) for x in g.get("prefix") or []]
    return lines


def _foreign_lines(session: Session, messages: Sequence[Message], sid: str,
                   cwd: str) -> tuple[list[str], list[str]]:
    said, lost = turns(messages, cwd, GEMINI_TOOLS)
    start = to_iso(session.created_at or min((m.created_at for m in messages if m.created_at), default=0))
    last = max((m.created_at for m in messages if m.created_at), default=session.created_at)
    header = {"sessionId": sid, "projectHash": project_hash(cwd), "startTime": start,
              "lastUpdated": to_iso(last or session.created_at or 0), "kind": "main"}
    lines = [dumps(header)]
    compacted = last_compaction(said)
    for i, t in enumerate(said):
        ts = to_iso(t.source.created_at or session.created_at or 0)
        rec: dict[str, Any] = {"id": uuid_for(session, f"{t.source.id}:{i}"), "timestamp": ts}
        if t.role == "user":
            rec.update(type="user", content=t.parts)
        else:
            texts = [p["text"] for p in t.parts if set(p) == {"text"}]
            rec.update(type="gemini", content=texts[0] if len(texts) == len(t.parts) == 1 else t.parts)
            if t.source.model:
                rec["model"] = t.source.model
        if i == compacted:  # as the CLI compresses: its history is now the summary and its answer
            ack = {"id": uuid_for(session, f"{t.source.id}:{i}:ack"), "timestamp": ts, "type": "gemini",
                   "content": [{"text": ACK}]}
            lines.append(dumps({"$set": {"messages": [rec, ack]}}))
            continue
        lines.append(dumps(rec))
    return lines, lost_lines(lost, "Gemini CLI")


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    cwd = session.cwd or (str(env.worktrees[0]) if env.worktrees else "")
    folder, new_folder = slug_for(env, cwd)
    g = session.extra.get(KEY) or {}
    own = session.agent == "gemini" and bool(messages) and all(KEY in m.extra for m in messages)
    lost: list[str] = []
    if own and _is_uuid(session.native_id) and g.get("file") and session.extra.get("gemini_kind") is None:
        sid = str(session.native_id)
        name = str(g["file"])
        if g.get("legacy"):  # a .json of an older release: written back as it was
            from oxide_git.agents.gemini.legacy import dump

            return Export(files={folder / "chats" / name: dump(session, messages)}, native_id=sid,
                          command=["gemini", "--resume", sid], cwd=cwd)
        lines = _native_lines(session, messages, None)
    elif own:  # a fork of a Gemini session (oxide's, or a rewind in the CLI): a session of its own
        sid = uuid_for(session)
        lines, name = _native_lines(session, messages, sid), file_name(session.created_at, sid)
    else:
        sid = uuid_for(session)
        lines, lost = _foreign_lines(session, messages, sid, cwd)
        name = file_name(session.created_at, sid)
    files = {folder / "chats" / name: ("\n".join(lines) + "\n").encode()}
    if new_folder:
        files[folder / PROJECT_ROOT] = cwd.encode()
    return Export(files=files, native_id=sid, command=["gemini", "--resume", sid], cwd=cwd, lost=lost)
