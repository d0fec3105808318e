"""One Copilot CLI event line as parts, and those parts as the same line again.

A line's readable content becomes typed parts: a prompt's or an answer's ``content`` a ``text``
part, ``reasoningText`` a ``reasoning`` part, each ``toolRequests`` entry a ``tool_call``, a
``tool.execution_complete`` a ``tool_result``, a compaction's ``summaryContent`` a ``compaction``;
any other line is an ``other`` part holding its ``data``. The line's first part carries ``ev``: its
type, its envelope (``id``, ``timestamp``, ``parentId``, ``agentId``...), the key order when it is
not Copilot's, and ``data`` with each moved value's place kept (``None``), so that ``line`` writes
the line back as Copilot wrote it (compact JSON, its key order). A line that does not come back
byte for byte (JSON numbers the serializer writes another way) keeps its text in ``ev.raw_line``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from oxide_git.core.model import Part

# Copilot's own key order of an event line (serde, compact).
ENV_ORDER = ("type", "data", "agentId", "id", "timestamp", "parentId")
TEXT_KEY = {"user.message": "content", "system.message": "content", "assistant.message": "content"}
REASONING_KEY = {"assistant.message": "reasoningText", "assistant.reasoning": "content"}
_CALL_KEYS = ("toolCallId", "name", "arguments")
START, COMPLETE = "session.compaction_start", "session.compaction_complete"
_IN_ORDER = frozenset(tuple(k for k in ENV_ORDER if k != "agentId" or sub) for sub in (False, True))

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - a dependency of the package
    _orjson = None  # type: ignore[assignment]


def dumps(obj: Any) -> bytes:
    """Compact JSON as Copilot (serde) writes it: no spaces, non-ASCII as is, floats with ``.0``."""
    if _orjson is not None:
        try:
            return _orjson.dumps(obj)
        except TypeError:  # integers beyond 64 bits
            pass
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _calls(v: Any) -> list[dict[str, Any]] | None:
    if not isinstance(v, list) or not v:
        return None
    if all(isinstance(r, dict) and isinstance(r.get("toolCallId"), str) and isinstance(r.get("name"), str)
           for r in v):
        return v
    return None


def parts_of(obj: Mapping[str, Any], raw: bytes | None = None, *, summary: bool = True) -> list[Part]:
    """The parts of one event line (at least one; the first carries ``ev``). ``summary=False``: a
    compaction's summary stays in its ``data`` (the reader gave it to the compaction's start)."""
    t = str(obj.get("type"))
    data = obj.get("data")
    ev: dict[str, Any] = {"type": t, "env": {k: v for k, v in obj.items() if k not in ("type", "data")}}
    keys = tuple(obj)
    if keys not in _IN_ORDER and list(keys) != [k for k in ENV_ORDER if k in obj]:
        ev["keys"] = list(keys)
    if "data" not in obj:
        ev["nodata"] = True
    parts: list[Part] = []
    if isinstance(data, dict) and (summary or t != COMPLETE):
        parts, placed = _typed(t, data)
        if parts:
            ev["data"] = placed
    if not parts:
        parts = [Part.other(t, data)]
    if raw is not None and dumps(obj) != raw.rstrip(b"\n"):
        ev["raw_line"] = raw.rstrip(b"\n").decode("utf-8", "surrogateescape")
    if len(parts) > 1:
        ev["n"] = len(parts)
    parts[0] = Part(parts[0].type, {**parts[0].data, "ev": ev})
    return parts


def _typed(t: str, data: dict[str, Any]) -> tuple[list[Part], dict[str, Any]]:
    """Typed parts of ``data`` and ``data`` with their values' places kept (``None``)."""
    placed = dict(data)
    out: list[Part] = []
    rkey = REASONING_KEY.get(t)
    if rkey and (text := _text(data.get(rkey))) is not None:
        out.append(Part.reasoning(text))
        placed[rkey] = None
    tkey = TEXT_KEY.get(t)
    if tkey and (text := _text(data.get(tkey))) is not None:
        out.append(Part.text(text))
        placed[tkey] = None
    if t == "assistant.message" and (calls := _calls(data.get("toolRequests"))) is not None:
        for r in calls:
            req = {k: (None if k in _CALL_KEYS else v) for k, v in r.items()}
            out.append(Part.tool_call(r["toolCallId"], r["name"], r.get("arguments"), req=req))
        placed["toolRequests"] = None
    elif t == "tool.execution_complete" and isinstance(data.get("toolCallId"), str):
        result, error = data.get("result"), data.get("error")
        output: Any = None
        if isinstance(result, dict) and isinstance(result.get("content"), str):
            output = result["content"]
            placed["result"] = {**result, "content": None}
        elif isinstance(error, dict) and isinstance(error.get("message"), str):
            output = error["message"]  # small, and left in place
        out.append(Part.tool_result(data["toolCallId"], output, data.get("success") is not True))
    elif t == COMPLETE and (text := _text(data.get("summaryContent"))) is not None:
        out.append(Part.compaction(text))
        placed["summaryContent"] = None
    return out, placed


def with_summary(parts: list[Part], summary: str, **extra: Any) -> None:
    """Give a compaction's start line (``parts``, its first the line's) the summary its
    ``session.compaction_complete`` carries, as a ``compaction`` part of that line that ``line``
    does not write (the summary stays in the complete line too)."""
    ev = dict(parts[0].get("ev"))
    ev["n"] = int(ev.get("n") or 1) + 1
    parts[0] = Part(parts[0].type, {**parts[0].data, "ev": ev})
    parts.insert(ev["n"] - 1, Part.compaction(summary, **extra))


def is_line_start(p: Part) -> bool:
    return isinstance(p.get("ev"), dict)


def line(parts: Sequence[Part]) -> bytes:
    """The event line of ``parts`` (the first carries ``ev``), without its newline."""
    ev = parts[0].get("ev")
    if "raw_line" in ev:
        return str(ev["raw_line"]).encode("utf-8", "surrogateescape")
    t = ev["type"]
    data: Any
    if "data" in ev:
        data = dict(ev["data"])
        calls = []
        for p in parts:
            if p.type == "text" and t in TEXT_KEY:
                data[TEXT_KEY[t]] = p.get("text")
            elif p.type == "reasoning" and t in REASONING_KEY:
                data[REASONING_KEY[t]] = p.get("text")
            elif p.type == "tool_call":
                req = dict(p.get("req") or {"toolCallId": None, "name": None, "arguments": None})
                for k, v in (("toolCallId", p.get("call_id")), ("name", p.get("name")),
                             ("arguments", p.get("input"))):
                    if k in req:
                        req[k] = v
                calls.append(req)
            elif p.type == "tool_result" and isinstance(data.get("result"), dict):
                data["result"] = {**data["result"], "content": p.get("output")}
            elif p.type == "compaction" and t == COMPLETE:
                data["summaryContent"] = p.get("summary")
        if calls:
            data["toolRequests"] = calls
    else:
        data = parts[0].get("raw")
    env = ev.get("env") or {}
    obj: dict[str, Any] = {}
    for k in ev.get("keys") or [k for k in ENV_ORDER if k in env or k in ("type", "data")]:
        if k == "type":
            obj[k] = t
        elif k == "data":
            if not ev.get("nodata"):
                obj[k] = data
        elif k in env:
            obj[k] = env[k]
    return dumps(obj)


def line_groups(parts: Sequence[Part]) -> list[list[Part]] | None:
    """A message's parts split into its lines; None when a part belongs to no line of Copilot's
    (a message another agent or oxide made)."""
    groups: list[list[Part]] = []
    left = 0
    for p in parts:
        if is_line_start(p):
            if left:
                return None
            groups.append([p])
            left = int(p.get("ev").get("n") or 1) - 1
        elif left and groups:
            groups[-1].append(p)
            left -= 1
        else:
            return None
    return groups if not left else None
