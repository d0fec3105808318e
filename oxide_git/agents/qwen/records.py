"""One Qwen Code record as a model Message, and the record rebuilt from it. Pure.

A record is ``{uuid, parentUuid, sessionId, timestamp, type, provenance, cwd, version, gitBranch,
…}``; ``user``, ``assistant`` and ``tool_result`` records hold ``message: {role: user|model,
parts}``, Gemini API parts (``gemini_parts``); an assistant record adds ``model`` and
``usageMetadata``, a tool result ``toolCallResult``. ``record`` is the exact inverse of
``message`` (key order included); a record that would not come back the same is kept whole.

A ``system`` record of subtype ``chat_compression`` (``/compress``, or the automatic compression)
is a compaction: its ``systemPayload.compressedHistory`` is what the CLI sends in place of every
message before it (the summary as a user turn, "Got it. Thanks for the additional context!", the
files it restores). Its first turn's text is the compaction's summary; the record is kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oxide_git.agents.gemini.parts import from_parts, same, to_parts
from oxide_git.core.model import Message, Part, Role, from_iso

KEY = "qwen"  # Message.extra[KEY]
MESSAGE_TYPES = frozenset({"user", "assistant", "tool_result"})
_ROLE = {"user": Role.USER, "tool_result": Role.USER, "assistant": Role.ASSISTANT}
HOOK_CONTEXT = "<qwen:user-prompt-submit-context>"


def compressed_history(rec: Mapping[str, Any]) -> list[Any] | None:
    """The ``compressedHistory`` of a ``chat_compression`` record; None for any other record."""
    payload = rec.get("systemPayload")
    if rec.get("type") != "system" or rec.get("subtype") != "chat_compression" or not isinstance(
            payload, dict) or not isinstance(payload.get("compressedHistory"), list):
        return None
    return payload["compressedHistory"]


def compaction(rec: Mapping[str, Any]) -> Message:
    """The compaction message of a ``chat_compression`` record (``compressed_history`` is not
    None): its summary is the text of the history's first turn, the record is kept whole."""
    history = compressed_history(rec) or []
    first = history[0] if history and isinstance(history[0], dict) else {}
    summary = "\n".join(str(p["text"]) for p in first.get("parts") or []
                        if isinstance(p, dict) and isinstance(p.get("text"), str))
    payload = rec.get("systemPayload") or {}
    info = payload.get("info") if isinstance(payload, dict) else None
    trigger = info.get("triggerReason") if isinstance(info, dict) else None
    ts = rec.get("timestamp")
    return Message(role=Role.SYSTEM, parts=(Part.compaction(summary, None, **(
        {"trigger": trigger} if isinstance(trigger, str) else {})),),
        native_id=str(rec.get("uuid")), created_at=from_iso(ts) if isinstance(ts, str) else None,
        extra={KEY: {"raw": dict(rec)}})


def message(rec: Mapping[str, Any]) -> Message:
    """The Message of a user, assistant or tool_result record (a compaction: ``compaction``)."""
    if compressed_history(rec) is not None:
        return compaction(rec)
    kind = str(rec.get("type"))
    msg = rec.get("message")
    parts = msg.get("parts") if isinstance(msg, dict) else None
    derived = set()
    g: dict[str, Any] = {"keys": ",".join(rec)}
    if isinstance(msg, dict) and isinstance(parts, list) and set(msg) <= {"role", "parts"}:
        derived.add("message")
        g["message"] = {"keys": ",".join(msg), "role": msg.get("role")}
        items = to_parts(parts)
    else:
        items = []
    usage, model = rec.get("usageMetadata"), rec.get("model")
    if isinstance(usage, dict):
        derived.add("usageMetadata")
    if isinstance(model, str):
        derived.add("model")
    g["rest"] = {k: v for k, v in rec.items() if k not in derived}
    extra: dict[str, Any] = {KEY: g}
    text = " ".join(str(p.get("text")) for p in items if p.type == "text")
    if kind == "user" and (rec.get("provenance") not in (None, "real_user") or rec.get("subtype")
                           or text.lstrip().startswith(HOOK_CONTEXT)):
        extra["harness"] = True  # a notification, a cron or background message: not a typed prompt
    ts = rec.get("timestamp")
    out = Message(role=_ROLE.get(kind, Role.SYSTEM), parts=tuple(items), native_id=str(rec.get("uuid")),
                  created_at=from_iso(ts) if isinstance(ts, str) else None,
                  model=model if isinstance(model, str) else None,
                  usage=usage if isinstance(usage, dict) else None, extra=extra)
    if not same(record(out), rec):
        g.clear()
        g["raw"] = dict(rec)
    return out


def record(msg: Message) -> dict[str, Any]:
    """The record ``msg`` came from."""
    g = msg.extra.get(KEY) or {}
    if "raw" in g:
        return dict(g["raw"])
    out: dict[str, Any] = dict(g.get("rest") or {})
    keys = str(g.get("keys") or "").split(",")
    m = g.get("message")
    if isinstance(m, dict):
        body: dict[str, Any] = {"role": m.get("role"), "parts": from_parts(msg.parts)}
        mkeys = str(m.get("keys") or "role,parts").split(",")
        out["message"] = {k: body[k] for k in mkeys if k in body}
    if "usageMetadata" in keys and "usageMetadata" not in out and msg.usage is not None:
        out["usageMetadata"] = dict(msg.usage)
    if "model" in keys and "model" not in out and msg.model is not None:
        out["model"] = msg.model
    return {k: out[k] for k in keys if k in out} | out
