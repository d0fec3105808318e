"""Gemini CLI's session files before the patch log: one JSON object per session, rewritten whole.

``tmp/<sha256 of the folder>/chats/session-<ts>-<id8>.json`` holds ``{sessionId, projectHash,
startTime, lastUpdated, messages: [...], summary?}`` as ``JSON.stringify(conversation, null, 2)``
writes it; 0.61 still reads it (and on a resume goes on in a ``.jsonl`` of the same name). The
records are those of the patch log (``gemini_records``). The file is rewritten in place, so there
is no offset to resume from: one ``Resumable(0)`` ends the stream, and a changed file is read again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Event, FoundMessage, FoundSession, Problem, Resumable, Unknown
from oxide_git.agents.gemini.log import known_record, resumable_at
from oxide_git.agents.gemini.records import KEY, message, next_results, record, result_groups
from oxide_git.agents.gemini.store import cwd_of
from oxide_git.agents.js_json import dumps as js_dumps
from oxide_git.core.model import Message, Session, from_iso, session_id_for

name = "gemini"


def parse(path: Path, env: AgentEnv | None) -> Iterator[Event]:
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, RecursionError):
        yield Problem(None, "not JSON, skipped")
        return
    msgs = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("sessionId"), str) or not isinstance(msgs, list):
        yield Problem(None, "not a Gemini CLI session (no sessionId and messages), skipped")
        return
    recs = [m for m in msgs if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if len(recs) != len(msgs):
        yield Problem(None, f"{len(msgs) - len(recs)} message(s) without an id, skipped")
    if not any(resumable_at(r) for r in recs):
        return
    native = data["sessionId"]
    start = data.get("startTime")
    created = from_iso(start) if isinstance(start, str) else None
    header = {k: v for k, v in data.items() if k != "messages"}
    sid = session_id_for(name, native, created)
    updated = data.get("lastUpdated")
    yield FoundSession(Session(
        id=sid, agent=name, native_id=native,
        title=data.get("summary") if isinstance(data.get("summary"), str) else None,
        created_at=created, updated_at=from_iso(updated) if isinstance(updated, str) else None,
        cwd=cwd_of(path, data.get("projectHash") if isinstance(data.get("projectHash"), str) else None, env),
        extra={KEY: {"header": header, "file": path.name, "legacy": ",".join(data)}}))
    for i, rec in enumerate(recs):
        nxt = recs[i + 1] if i + 1 < len(recs) else None
        results = result_groups(nxt.get("content")) if nxt and nxt.get("type") == "user" else {}
        if not known_record(rec):
            yield Unknown(f"message/{rec.get('type')}")
        yield FoundMessage(sid, message(rec, results))
    yield Resumable(0, {})


def dump(session: Session, messages: Sequence[Message]) -> bytes:
    """The ``.json`` file back, as ``JSON.stringify(conversation, null, 2)`` wrote it."""
    g = session.extra.get(KEY) or {}
    out: dict[str, Any] = dict(g.get("header") or {})
    out["messages"] = [record(m, next_results(messages[i + 1] if i + 1 < len(messages) else None))
                       for i, m in enumerate(messages)]
    keys = str(g.get("legacy") or "").split(",")
    out = {k: out[k] for k in keys if k in out} | out
    return js_dumps(out, indent=2).encode()
