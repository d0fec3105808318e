"""Cline's stored messages (``MessageWithMetadata``, Anthropic-style content blocks) as model
Messages and back: ``message`` and ``native_message`` are exact inverses. No I/O, no state.

A message's fields with no place of their own (``modelInfo``, ``metadata``...) go to ``extra``
under their own names, a block's to its Part's data; the key order of a message or a block is
kept (``keys``) only where it differs from the one Cline writes. A user prompt Cline wrapped as
``<user_input mode="act">…</user_input>`` is a text part of the prompt alone with
``user_input: "act"``, so that another agent is handed the words the user typed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from oxide_git.core.model import Message, Part, PartType, Role

# Block types Cline 3.0.65 writes (@cline/shared ContentBlock); any other is kept as an ``other``.
BLOCK_TYPES = frozenset({"text", "image", "media", "tool_use", "tool_result", "thinking",
                         "redacted_thinking", "file"})
# A message's fields in the order Cline writes them; those with a place of their own in Message.
_MESSAGE_ORDER = ("id", "role", "content", "ts", "modelInfo", "metrics", "metadata")
_MESSAGE_OWN = frozenset({"id", "role", "content", "ts", "metrics"})
# extra keys that are ours, not fields to write back (a native field of one of these names, or of a
# Part field's name, is kept under "clash")
INTERNAL = frozenset({"keys", "content_string", "harness", "parent_call_id", "clash"})
# block type -> (native field -> Part field) for the fields that have a normalized name
_RENAMED: dict[str, dict[str, str]] = {
    "text": {"text": "text"},
    "thinking": {"thinking": "text"},
    "redacted_thinking": {"data": "encrypted"},
    "tool_use": {"id": "call_id", "name": "name", "input": "input"},
    "tool_result": {"tool_use_id": "call_id", "content": "output"},
    "image": {"mediaType": "mime", "data": "data"},
    "file": {"path": "path", "content": "text"},
}
_PART_TYPE = {"text": PartType.TEXT, "thinking": PartType.REASONING,
              "redacted_thinking": PartType.REASONING, "tool_use": PartType.TOOL_CALL,
              "tool_result": PartType.TOOL_RESULT, "image": PartType.IMAGE, "file": PartType.FILE}
_ORDER = {  # the key order Cline writes each block in
    "text": ("type", "text"), "thinking": ("type", "thinking"), "redacted_thinking": ("type", "data"),
    "tool_use": ("type", "id", "name", "input"),
    "tool_result": ("type", "tool_use_id", "name", "content", "is_error"),
    "image": ("type", "data", "mediaType"), "file": ("type", "content", "path"),
}
_USER_INPUT = re.compile(r'<user_input mode="([A-Za-z_-]+)">(.*)</user_input>', re.DOTALL)
_OURS = frozenset({"user_input", "keys", "native_is_error", "redacted", "clash", "is_error"})


def _canonical(obj: Mapping[str, Any], order: tuple[str, ...]) -> list[str]:
    return [k for k in order if k in obj] + [k for k in obj if k not in order]


def _keys(obj: Mapping[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    keys = list(obj)
    return {} if keys == _canonical(obj, order) else {"keys": keys}


def block_part(block: Any, role: str) -> Part:
    """One native content block as a Part (the exact inverse is ``part_block``)."""
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(kind, str) or kind not in _PART_TYPE:
        return Part.other(str(kind or "block"), block)
    renamed = _RENAMED[kind]
    data: dict[str, Any] = {renamed[k]: v for k, v in block.items() if k in renamed}
    taken = {*data, *_OURS, "text"}  # "text": a reasoning Part's, whatever the block calls it
    clash = {k: v for k, v in block.items() if k not in renamed and k != "type" and k in taken
             and not (kind == "tool_result" and k == "is_error")}
    data.update((k, v) for k, v in block.items()
                if k not in renamed and k != "type" and k not in clash and k != "is_error")
    if clash:
        data["clash"] = clash
    data.update(_keys(block, _ORDER[kind]))
    if kind == "redacted_thinking":
        data.update(text="", redacted=True)
    elif kind == "tool_result":
        if "is_error" in block:
            data["native_is_error"] = block["is_error"]
        data["is_error"] = block.get("is_error") is True
    elif "is_error" in block:
        data.setdefault("clash", {})["is_error"] = block["is_error"]
    elif kind == "text" and role == "user" and isinstance(data.get("text"), str):
        m = _USER_INPUT.fullmatch(data["text"])
        if m:
            data.update(text=m.group(2), user_input=m.group(1))
    return Part(_PART_TYPE[kind], data)


def part_block(p: Part) -> dict[str, Any]:
    """A Part that ``block_part`` made, as the block Cline wrote."""
    if p.type == PartType.OTHER:
        raw = p.get("raw")
        return dict(raw) if isinstance(raw, dict) else raw
    kind = _native_kind(p)
    back = {v: k for k, v in _RENAMED[kind].items()}
    block: dict[str, Any] = {"type": kind}
    for k, v in p.data.items():
        if k in back:
            block[back[k]] = v
        elif k not in _OURS:
            block[k] = v
    if isinstance(p.get("clash"), dict):
        block.update(p.get("clash"))
    if kind == "text" and "user_input" in p.data:
        block["text"] = f'<user_input mode="{p.get("user_input")}">{p.get("text", "")}</user_input>'
    if kind == "tool_result" and "native_is_error" in p.data:
        block["is_error"] = p.get("native_is_error")
    if kind == "redacted_thinking" and "text" not in (p.get("clash") or {}):
        block.pop("text", None)
    order = p.get("keys") or _canonical(block, _ORDER[kind])
    return {k: block[k] for k in order if k in block} | block


def _native_kind(p: Part) -> str:
    if p.type == PartType.REASONING:
        return "redacted_thinking" if p.get("redacted") else "thinking"
    kinds: dict[str, str] = {PartType.TEXT: "text", PartType.TOOL_CALL: "tool_use",
                             PartType.TOOL_RESULT: "tool_result", PartType.IMAGE: "image",
                             PartType.FILE: "file"}
    return kinds[p.type]


def message(obj: Mapping[str, Any]) -> Message:
    """One stored message as a Message (the exact inverse is ``native_message``)."""
    role = obj.get("role") if isinstance(obj.get("role"), str) else "user"
    content = obj.get("content")
    ts = obj.get("ts")
    good_ts = isinstance(ts, int) and not isinstance(ts, bool)
    extra: dict[str, Any] = {k: v for k, v in obj.items() if k not in INTERNAL and (
        k not in _MESSAGE_OWN or (k == "ts" and not good_ts) or (k == "id" and not isinstance(v, str))
        or (k == "role" and not isinstance(v, str)))}
    clash = {k: v for k, v in obj.items() if k in INTERNAL}
    if clash:
        extra["clash"] = clash
    extra.update(_keys(obj, _MESSAGE_ORDER))
    if isinstance(content, str):
        extra["content_string"] = True
        parts: tuple[Part, ...] = (Part.text(content),)
    else:
        blocks = content if isinstance(content, list) else []
        if not isinstance(content, list):
            extra["content"] = content  # null or another value: written back as it was
        parts = tuple([block_part(b, str(role)) for b in blocks])
    if role == "user" and parts and all(p.type == PartType.TOOL_RESULT for p in parts):
        role = Role.TOOL
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("displayOnly") is True:
        extra["harness"] = True  # an error notice Cline shows; its model never sees it
    info = obj.get("modelInfo")
    model = info.get("id") if isinstance(info, dict) and isinstance(info.get("id"), str) else None
    metrics = obj.get("metrics") if isinstance(obj.get("metrics"), dict) else None
    if "metrics" in obj and metrics is None:
        extra["metrics"] = obj["metrics"]
    cost = metrics.get("cost") if metrics else None
    return Message(
        str(role), parts, created_at=ts if good_ts else None,
        native_id=obj["id"] if isinstance(obj.get("id"), str) else None, model=model,
        usage=metrics, cost=float(cost) if isinstance(cost, int | float) and not isinstance(
            cost, bool) else None, extra=extra)


def native_message(m: Message) -> dict[str, Any]:
    """A Message that ``message`` made, as the stored message Cline wrote."""
    out: dict[str, Any] = {}
    if m.native_id is not None and "id" not in m.extra:
        out["id"] = m.native_id
    out["role"] = "user" if m.role == Role.TOOL else m.role
    if m.extra.get("content_string") and len(m.parts) == 1:
        out["content"] = m.parts[0].get("text", "")
    elif "content" in m.extra:
        out["content"] = m.extra["content"]
    else:
        out["content"] = [part_block(p) for p in m.parts]
    if m.created_at is not None and "ts" not in m.extra:
        out["ts"] = m.created_at
    out.update((k, v) for k, v in m.extra.items() if k not in INTERNAL and k != "content")
    if isinstance(m.extra.get("clash"), dict):
        out.update(m.extra["clash"])
    if m.usage is not None and "metrics" not in m.extra:
        out["metrics"] = dict(m.usage)
    order = m.extra.get("keys") or _canonical(out, _MESSAGE_ORDER)
    return {k: out[k] for k in order if k in out} | out
