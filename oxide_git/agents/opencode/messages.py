"""An OpenCode session's objects (its info, messages and parts, from whichever store) as the events the
reader emits: what the storage tree, the export file and the database readers share."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import unquote, urlparse

from oxide_git.agents import (
    Event,
    FoundMessage,
    FoundSession,
    Problem,
    Unknown,
)
from oxide_git.agents.opencode.store import as_dict, as_int, as_str, name
from oxide_git.core.model import Message, Part, PartType, Session, session_id_for

_MSG_COLUMNS = ("modelID", "tokens", "cost")  # message info keys that have a column of their own
_PART_TYPES = frozenset({"text", "reasoning", "tool", "file", "patch", "compaction", "step-start",
                         "step-finish", "snapshot", "agent", "subtask", "retry"})  # OpenCode 1.18


def session_events(
    info: dict[str, Any],
    entries: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    parent_created: int | None,
    source: dict[str, Any],
) -> Iterator[Event]:
    native = str(info["id"])
    t = as_dict(info.get("time"))
    created = as_int(t.get("created"))
    sid = session_id_for(name, native, created)
    entries = sorted(entries, key=lambda e: (as_int(as_dict(e[0].get("time")).get("created")) or 0,
                                             str(e[0].get("id"))))
    messages: list[Message] = []
    for i, (minfo, parts) in enumerate(entries):
        try:
            messages.append(_message(minfo, parts, entries, i))
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as e:
            yield Problem(None, f"{source['path']}: message {minfo.get('id')!r} skipped ({e})")
    messages = _mark_compacted(messages)
    extra = {k: v for k, v in info.items() if k not in ("id", "title", "directory", "parentID")}
    parent = info.get("parentID")
    if isinstance(parent, str) and parent:
        extra["parent_native_id"] = parent
    models = [m.model for m in messages if m.model and m.role == "assistant"]
    session = Session(
        id=sid,
        agent=name,
        native_id=native,
        title=as_str(info.get("title")),
        created_at=created,
        updated_at=as_int(t.get("updated")),
        parent_id=(
            session_id_for(name, parent, parent_created)
            if isinstance(parent, str) and parent and parent_created is not None
            else None
        ),
        cwd=as_str(info.get("directory")),
        model=models[-1] if models else None,
        source=source,
        extra=extra,
    )
    yield FoundSession(session)
    version = as_str(info.get("version"))
    for m in messages:
        yield from _unknowns(m, version)
        yield FoundMessage(sid, m)


def _unknowns(m: Message, version: str | None) -> Iterator[Unknown]:
    """Format drift: a role or part type OpenCode 1.18 does not write (the record is kept whole)."""
    if m.role not in ("user", "assistant"):
        yield Unknown(f"message/{m.role}", version)
    for p in m.parts:
        if p.type == PartType.OTHER and p.get("kind") not in _PART_TYPES:
            yield Unknown(f"part/{p.get('kind')}", version)


def _message(
    info: dict[str, Any],
    parts: list[dict[str, Any]],
    entries: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]],
    index: int,
) -> Message:
    role = info["role"] if isinstance(info.get("role"), str) else "assistant"
    model = as_str(info.get("modelID")) or as_str(as_dict(info.get("model")).get("modelID"))
    tokens = info.get("tokens") if isinstance(info.get("tokens"), dict) else None
    cost = info.get("cost")
    cost = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    kept = {"modelID": isinstance(info.get("modelID"), str), "tokens": tokens is not None,
            "cost": cost is not None}
    extra = {k: v for k, v in info.items()
             if k not in ("id", "sessionID", "role") and not (k in _MSG_COLUMNS and kept[k])}
    mid = info.get("id")
    out: list[Part] = []
    for p in sorted(parts, key=lambda p: str(p.get("id"))):
        out.extend(_parts(p, entries, index, mid))
    return Message(
        role=role,
        parts=tuple(out),
        created_at=as_int(as_dict(info.get("time")).get("created")),
        native_id=mid if isinstance(mid, str) else None,
        model=model,
        usage=tokens,
        cost=cost,
        extra=extra,
    )


def _parts(
    p: dict[str, Any],
    entries: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]],
    index: int,
    mid: Any,
) -> list[Part]:
    kind = p.get("type")
    rest = {k: v for k, v in p.items() if k not in ("type", "sessionID", "messageID")}
    if kind in ("text", "reasoning") and isinstance(p.get("text"), str):
        return [Part(PartType.TEXT if kind == "text" else PartType.REASONING, rest)]
    if kind == "tool" and isinstance(p.get("state"), dict):
        state = dict(p["state"])
        call_id, tool = rest.pop("callID", None), rest.pop("tool", None)
        rest.pop("state")
        inp = state.pop("input", None)
        result: Any = None
        has_result = "output" in state or "error" in state
        if has_result:
            result = state.pop("error") if "error" in state else state.pop("output")
        call = Part(PartType.TOOL_CALL, {**rest, "call_id": call_id, "name": tool, "input": inp,
                                          "state": state})
        if not has_result:
            return [call]
        res: dict[str, Any] = {"call_id": call_id, "output": result,
                               "is_error": state.get("status") == "error"}
        if as_dict(state.get("time")).get("compacted") is not None:
            res["compacted"] = True
        return [call, Part(PartType.TOOL_RESULT, res)]
    if kind == "file" and isinstance(p.get("url", ""), str):
        return [Part(PartType.FILE, {**rest, "path": _file_path(p)})]
    if kind == "patch" and isinstance(p.get("hash", ""), str):
        return [Part(PartType.PATCH, {**rest, "text": p.get("hash", "")})]
    if kind == "compaction":
        summary, summary_id = _summary_for(mid, entries, index)
        return [Part(PartType.COMPACTION, {**rest, "summary": summary, "replaces": None,
                                            "summary_message_id": summary_id})]
    return [Part.other(str(kind), rest)]


def _summary_for(
    mid: Any, entries: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]], index: int
) -> tuple[str, str | None]:
    """The text and id of the summary message that answers the compaction request ``mid``."""
    for info, parts in entries[index + 1:]:
        if info.get("role") == "assistant" and info.get("summary") is True and info.get("parentID") == mid:
            texts = sorted((p for p in parts if p.get("type") == "text"), key=lambda p: str(p.get("id")))
            text = "\n".join(str(p.get("text")) for p in texts if not p.get("synthetic"))
            return text, as_str(info.get("id"))
    return "", None


def _mark_compacted(messages: list[Message]) -> list[Message]:
    """OpenCode's filterCompacted: a compaction request answered by a finished summary hides
    everything before it (or before its ``tail_start_id``)."""
    done = {m.extra.get("parentID") for m in messages if m.role == "assistant"
            and m.extra.get("summary") is True and m.extra.get("finish") and not m.extra.get("error")}
    boundary = 0
    for i, m in enumerate(messages):
        comp = [p for p in m.parts if p.type == PartType.COMPACTION]
        if m.role == "user" and comp and m.native_id in done:
            tail = comp[0].get("tail_start_id")
            boundary = next((j for j, x in enumerate(messages) if tail and x.native_id == tail), i)
    return [replace(m, compacted=True) if i < boundary else m for i, m in enumerate(messages)]


def _file_path(p: Mapping[str, Any]) -> str:
    src = as_dict(p.get("source"))
    if isinstance(src.get("path"), str):
        return src["path"]
    url = p.get("url")
    if isinstance(url, str) and url.startswith("file://"):
        return unquote(urlparse(url).path)
    return as_str(p.get("filename")) or (url if isinstance(url, str) and len(url) < 512 else "")
