"""One pi session entry (one line of its JSONL) as one message, and back.

Entries of the conversation: ``message`` (role ``user``, ``assistant``, ``toolResult``,
``bashExecution``, ``custom``), ``custom_message`` (an extension's context: harness),
``compaction`` and ``branch_summary``. Their content blocks become parts (``text``, ``thinking``
as reasoning, ``toolCall`` as tool_call, ``image``; any other block an ``other`` part). The entry
itself is kept in ``extra["pi"]`` with the field that the parts hold set to None, and
``extra["pi_fill"]`` names that field, so ``entry_of`` writes the entry back with its keys in
their order. A ``bashExecution`` (the user's ``!command``) and a ``branch_summary`` keep their
entry whole: their text part is what pi's model sees (``bashExecutionToText``, the summary's
framing), for another agent. Every other entry (``model_change``, ``thinking_level_change``,
``session_info``, ``label``, ``custom``, a type this release does not know) is a system message
whose ``other`` part holds the entry whole.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from oxide_git.core.model import Message, Part, PartType, Role, from_iso

# Entry types pi 0.73 writes (docs/session-format.md, v3).
CONVERSATION = frozenset({"message", "custom_message", "compaction", "branch_summary"})
RECORDS = frozenset({"model_change", "thinking_level_change", "session_info", "label", "custom", "session"})
KNOWN = CONVERSATION | RECORDS
ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage"})

ORDER = "pi_order"  # a block's keys, when their order is not the one ``block`` writes
_OWN: dict[str, tuple[str, ...]] = {  # a part type's own fields (the rest are the block's)
    PartType.TEXT: ("text",), PartType.REASONING: ("text",),
    PartType.TOOL_CALL: ("call_id", "name", "input"), PartType.IMAGE: ("mime", "data"),
}
_BLOCK_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("type", "text"), "thinking": ("type", "thinking"),
    "toolCall": ("type", "id", "name", "arguments"), "image": ("type", "data", "mimeType"),
}
_RESERVED = frozenset({ORDER, "call_id", "input", "mime", "kind", "raw"})

BRANCH_PREFIX = ("The following is a summary of a branch that this conversation came back from:\n\n"
                 "<summary>\n")
BRANCH_SUFFIX = "</summary>"


def bash_text(m: Mapping[str, Any]) -> str:
    """What pi's model sees of a ``bashExecution`` (pi's ``bashExecutionToText``)."""
    text = f"Ran `{m.get('command')}`\n"
    text += f"```\n{m.get('output')}\n```" if m.get("output") else "(no output)"
    code = m.get("exitCode")
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m.get('fullOutputPath')}]"
    return text


# ---------------------------------------------------------------- blocks <-> parts

def block_part(b: Any) -> Part:
    """A content block as a part (an ``other`` part when it is not one pi's parts can say)."""
    if not isinstance(b, dict):
        return Part.other("block", b)
    t = b.get("type")
    keys = _BLOCK_KEYS.get(t) if isinstance(t, str) else None
    rest = {k: v for k, v in b.items() if k not in keys} if keys else {}
    if keys is None or _RESERVED.intersection(rest):
        return Part.other(f"block:{t}", b)
    if t == "text" and isinstance(b.get("text"), str):
        part = Part.text(b["text"], **rest)
    elif t == "thinking" and isinstance(b.get("thinking"), str):
        part = Part.reasoning(b["thinking"], **rest)
    elif t == "toolCall" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str):
        part = Part.tool_call(b["id"], b["name"], b.get("arguments"), **rest)
    elif t == "image" and isinstance(b.get("data"), str):
        part = Part.image(b.get("mimeType"), data=b["data"], **rest)
    else:
        return Part.other(f"block:{t}", b)
    if list(part_block(part) or {}) != list(b):
        part = Part(part.type, {**part.data, ORDER: list(b)})
    return part


def part_block(p: Part) -> dict[str, Any] | None:
    """A part as pi's content block (None for a part pi has no block for)."""
    rest = {k: v for k, v in p.data.items() if k not in _OWN.get(p.type, ()) and k != ORDER}
    if p.type == PartType.TEXT:
        b = {"type": "text", "text": p.get("text", ""), **rest}
    elif p.type == PartType.REASONING:
        b = {"type": "thinking", "thinking": p.get("text", ""), **rest}
    elif p.type == PartType.TOOL_CALL:
        b = {"type": "toolCall", "id": p.get("call_id"), "name": p.get("name"),
             "arguments": p.get("input"), **rest}
    elif p.type == PartType.IMAGE and isinstance(p.get("data"), str):
        b = {"type": "image", "data": p.get("data"), "mimeType": p.get("mime"), **rest}
    elif p.type == PartType.OTHER and str(p.get("kind", "")).startswith("block"):
        raw = p.get("raw")
        return copy.deepcopy(raw) if isinstance(raw, dict) else None
    else:
        return None
    order = p.get(ORDER)
    if isinstance(order, list) and sorted(order) == sorted(b):
        b = {k: b[k] for k in order}
    return b


def _parts(content: Any) -> tuple[tuple[Part, ...], bool]:
    """A message's content as parts; whether it was a plain string."""
    if isinstance(content, str):
        return (Part.text(content),), True
    if isinstance(content, list):
        return tuple(block_part(b) for b in content), False
    return (), False


def _content(parts: tuple[Part, ...], as_str: bool) -> Any:
    if as_str and len(parts) == 1 and parts[0].type == PartType.TEXT and set(parts[0].data) == {"text"}:
        return parts[0].get("text")
    return [b for b in (part_block(p) for p in parts) if b is not None]


def _result_output(content: Any) -> Any:
    """A toolResult's content as a tool_result output: its text when it is one text block."""
    if (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
            and list(content[0]) == ["type", "text"] and content[0]["type"] == "text"
            and isinstance(content[0]["text"], str)):
        return content[0]["text"]
    return content


def result_content(output: Any) -> Any:
    """A tool_result output as a toolResult's content (the inverse of ``_result_output``)."""
    if isinstance(output, str):
        return [{"type": "text", "text": output}]
    return output if isinstance(output, list) else [{"type": "text", "text": str(output)}]


# ---------------------------------------------------------------- entries <-> messages

def _ms(entry: Mapping[str, Any], inner: Any = None) -> int | None:
    ts = inner.get("timestamp") if isinstance(inner, dict) else None
    if isinstance(ts, int) and not isinstance(ts, bool) and ts > 0:
        return ts
    raw = entry.get("timestamp")
    return from_iso(raw) if isinstance(raw, str) else None


def message_of(entry: dict[str, Any]) -> Message:
    """One entry as a message (see the module docstring)."""
    kind = entry.get("type")
    eid = entry.get("id") if isinstance(entry.get("id"), str) else None
    inner = entry.get("message")
    if kind == "message" and isinstance(inner, dict) and isinstance(inner.get("role"), str) and (
            inner["role"] in ROLES):
        return _message(entry, inner, eid)
    if kind == "custom_message" and "content" in entry:
        parts, as_str = _parts(entry.get("content"))
        held = {**entry, "content": None}
        extra = {"pi": held, "pi_fill": "content", "harness": True, **({"pi_str": True} if as_str else {})}
        return Message(Role.USER, parts, created_at=_ms(entry), native_id=eid, extra=extra)
    if kind == "compaction" and isinstance(entry.get("summary"), str):
        held = {**entry, "summary": None}
        first = entry.get("firstKeptEntryId")  # the model goes on seeing the messages from it
        part = Part.compaction(entry["summary"], None, **(
            {"kept_from": first} if isinstance(first, str) and first and first != eid else {}))
        return Message(Role.SYSTEM, (part,), created_at=_ms(entry), native_id=eid,
                       extra={"pi": held, "pi_fill": "summary"})
    if kind == "branch_summary" and isinstance(entry.get("summary"), str):
        view = Part.text(BRANCH_PREFIX + entry["summary"] + BRANCH_SUFFIX)
        return Message(Role.USER, (view,), created_at=_ms(entry), native_id=eid, extra={"pi": entry})
    return Message(Role.SYSTEM, (Part.other(str(kind), entry),), created_at=_ms(entry), native_id=eid)


def _message(entry: dict[str, Any], inner: dict[str, Any], eid: str | None) -> Message:
    role = inner["role"]
    at = _ms(entry, inner)
    if role == "bashExecution":
        if inner.get("excludeFromContext"):  # `!!command`: never shown to the model
            return Message(Role.USER, (Part.other("bashExecution", inner),), created_at=at, native_id=eid,
                           extra={"pi": {**entry, "message": None}, "pi_fill": "message"})
        return Message(Role.USER, (Part.text(bash_text(inner)),), created_at=at, native_id=eid,
                       extra={"pi": entry})
    held = {**entry, "message": {**inner, "content": None}}
    extra: dict[str, Any] = {"pi": held, "pi_fill": "message.content"}
    if role == "toolResult":
        if isinstance(inner.get("content"), str):
            extra["pi_str"] = True
        out = _result_output(inner.get("content"))
        part = Part.tool_result(str(inner.get("toolCallId") or ""), out, bool(inner.get("isError")))
        return Message(Role.TOOL, (part,), created_at=at, native_id=eid, extra=extra)
    parts, as_str = _parts(inner.get("content"))
    if as_str:
        extra["pi_str"] = True
    if role == "assistant":
        usage = inner.get("usage") if isinstance(inner.get("usage"), dict) else None
        cost = usage.get("cost") if usage else None
        total = cost.get("total") if isinstance(cost, dict) else None
        model = inner.get("model") if isinstance(inner.get("model"), str) else None
        return Message(Role.ASSISTANT, parts, created_at=at, native_id=eid, model=model, usage=usage,
                       cost=float(total) if isinstance(total, int | float) and not isinstance(total, bool)
                       else None, extra=extra)
    if role in ("custom", "hookMessage"):  # an extension's message in the model's context
        extra["harness"] = True
    return Message(Role.USER, parts, created_at=at, native_id=eid, extra=extra)


def entry_of(m: Message) -> dict[str, Any] | None:
    """The pi entry a message read by ``message_of`` came from (None: not one of pi's)."""
    held = m.extra.get("pi")
    if not isinstance(held, dict):
        raw = m.parts[0].get("raw") if len(m.parts) == 1 and m.parts[0].type == PartType.OTHER else None
        if isinstance(raw, dict) and isinstance(raw.get("type"), str):
            return copy.deepcopy(raw)
        return None
    entry = copy.deepcopy(held)
    fill = m.extra.get("pi_fill")
    if fill == "message.content" and isinstance(entry.get("message"), dict):
        result = next((p for p in m.parts if p.type == PartType.TOOL_RESULT), None)
        if entry["message"].get("role") == "toolResult":
            out = result.get("output") if result else ""
            keep = m.extra.get("pi_str") and isinstance(out, str)
            entry["message"]["content"] = out if keep else result_content(out)
        else:
            entry["message"]["content"] = _content(m.parts, bool(m.extra.get("pi_str")))
    elif fill == "content":
        entry["content"] = _content(m.parts, bool(m.extra.get("pi_str")))
    elif fill == "summary":
        part = next((p for p in m.parts if p.type == PartType.COMPACTION), None)
        entry["summary"] = str(part.get("summary") or "") if part else ""
    elif fill == "message":
        part = next((p for p in m.parts if p.type == PartType.OTHER), None)
        entry["message"] = copy.deepcopy(part.get("raw")) if part else None
    return entry
