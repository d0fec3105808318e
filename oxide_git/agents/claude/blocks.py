"""Claude Code lines and content blocks as model Parts and Messages: no I/O, no state.

``block_part`` is the exact inverse of ``claude_export.part_block`` for Claude's own blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oxide_git.core.model import Message, Part, Role, from_iso

# Envelope fields that have a place of their own in a Message (everything else goes to extra).
_OWN = frozenset({"message", "type", "uuid", "timestamp", "toolUseResult", "costUSD"})
# An assistant ``message``'s fields that have a place of their own (the rest goes to extra).
_OWN_IN_MESSAGE = frozenset({"content", "usage", "model"})
# A user ``message`` with only these fields needs no copy in extra.
_PLAIN_MESSAGE = frozenset({"role", "content"})

def shape(obj: Mapping[str, Any]) -> list[Any]:
    """The key order of a line, of its ``message`` and of each content block: what a rebuilt line
    needs to come out byte for byte as Claude wrote it (``claude_export.reorder`` applies it)."""
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return [",".join(obj)]
    content = msg.get("content")
    blocks = [",".join(b) if isinstance(b, dict) else "" for b in content] if isinstance(
        content, list) else None
    return [",".join(obj), ",".join(msg), blocks]


def _delta(line: Mapping[str, Any], first: Mapping[str, Any],
           ref_message: Mapping[str, Any] | None) -> dict[str, Any]:
    """What one line of a multi-line message has of its own: top-level fields that differ from
    the first line's (whose envelope the message keeps), and ``message`` fields that differ from
    ``ref_message`` (the line the message's meta comes from); ``-`` lists keys it lacks."""
    out: dict[str, Any] = {k: v for k, v in line.items() if k != "message" and first.get(k, _NO) != v}
    gone = [k for k in first if k not in line]
    msg = line.get("message")
    if ref_message is not None and isinstance(msg, dict):
        m = {k: v for k, v in msg.items() if k != "content" and ref_message.get(k, _NO) != v}
        if m:
            out["message"] = m
        gone += [f"message.{k}" for k in ref_message if k not in msg]
    if gone:
        out["-"] = gone
    return out


_NO = object()


def line_ts(obj: Mapping[str, Any]) -> int | None:
    t = obj.get("timestamp")
    if not isinstance(t, str):
        snap = obj.get("snapshot")
        t = snap.get("timestamp") if isinstance(snap, dict) else None
    return from_iso(t) if isinstance(t, str) else None


def _rest(block: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k not in known and k != "type"}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def block_part(block: Any) -> Part:
    """One native content block as a Part (the exact inverse is ``claude_export.part_block``)."""
    if not isinstance(block, dict):
        return Part.text(block) if isinstance(block, str) else Part.other("block", block)
    kind = block.get("type")
    if kind == "text":
        return Part.text(str(block.get("text", "")), **_rest(block, ("text",)))
    if kind == "thinking":
        return Part.reasoning(str(block.get("thinking", "")), **_rest(block, ("thinking",)))
    if kind == "redacted_thinking":
        return Part.reasoning("", encrypted=block.get("data"), redacted=True, **_rest(block, ("data",)))
    if kind in ("tool_use", "server_tool_use"):
        extra = _rest(block, ("id", "name", "input"))
        if kind == "server_tool_use":
            extra["server"] = True
        return Part.tool_call(str(block.get("id", "")), str(block.get("name", "")),
                              block.get("input"), **extra)
    if kind == "tool_result":
        content = block.get("content")
        extra = _rest(block, ("tool_use_id", "content", "is_error"))
        if isinstance(content, list):
            extra["content"] = content
            content = _text_of(content)
        return Part.tool_result(str(block.get("tool_use_id", "")), content,
                                bool(block.get("is_error", False)), **extra)
    src: dict[str, Any] = block["source"] if isinstance(block.get("source"), dict) else {}
    if kind == "image":
        extra = _rest(block, ("source",))
        if src.get("type") == "base64":
            return Part.image(src.get("media_type"), data=src.get("data"), **extra)
        if src.get("type") == "url":
            return Part.image(src.get("media_type"), url=src.get("url"), **extra)
        return Part.image(src.get("media_type"), source=src, **extra)
    if kind == "document":
        fields: dict[str, Any] = {"mime": src.get("media_type"), "source": src}
        if src.get("type") == "text":
            fields["text"] = src.get("data")
        elif src.get("type") == "url":
            fields["url"] = src.get("url")
        return Part.file(str(block.get("title") or ""), **fields, **_rest(block, ("source", "title")))
    return Part.other(str(kind or "block"), block)


def _meta_kind(obj: Mapping[str, Any]) -> str:
    kind = str(obj.get("type") or "unknown")
    sub = obj.get("subtype")
    if sub is None and isinstance(obj.get("data"), dict):
        sub = obj["data"].get("type")
    return f"{kind}/{sub}" if isinstance(sub, str) else kind


class Builder:
    """One message being assembled from one or more lines."""

    __slots__ = ("blocks", "first", "held", "kind", "last", "lines", "stream", "tool_ids", "ts")

    def __init__(self, kind: str, stream: str, obj: dict[str, Any], ts: int | None) -> None:
        self.kind = kind  # assistant | user | tool | summary | boundary | meta
        self.stream = stream
        self.ts = ts  # the first line_ts among the lines: the parser has it already, and it is dear
        self.first = obj
        self.last = obj
        self.lines: list[dict[str, Any]] = [obj]
        self.blocks: list[Any] = []
        self.held: list[list[int]] = []
        self.tool_ids: set[str] = set()
        if kind == "assistant":
            self._add_blocks(obj)

    def _add_blocks(self, obj: Mapping[str, Any]) -> None:
        content = obj["message"].get("content")
        held = []  # which of the message's blocks this line holds (a repeated block is kept once)
        for b in content if isinstance(content, list) else [content]:
            if b is None:
                continue
            if (isinstance(b, dict) and b.get("type") in ("tool_use", "server_tool_use")
                    and isinstance(b.get("id"), str)):
                if b["id"] in self.tool_ids:
                    held.append(next(i for i, x in enumerate(self.blocks) if isinstance(x, dict)
                                     and x.get("id") == b["id"]))
                    continue
                self.tool_ids.add(b["id"])
            elif b in self.blocks:
                held.append(self.blocks.index(b))
                continue
            held.append(len(self.blocks))
            self.blocks.append(b)
        self.held.append(held)

    def add(self, obj: dict[str, Any], ts: int | None) -> None:
        self.lines.append(obj)
        self.last = obj
        if self.ts is None:
            self.ts = ts
        if self.kind == "assistant":
            self._add_blocks(obj)

    def build(self, own_session: str | None) -> Message:
        kind, lines, first = self.kind, self.lines, self.first
        uuids = [o["uuid"] for o in lines if isinstance(o.get("uuid"), str)]
        native_id = uuids[0] if uuids else None
        if kind == "meta":
            others = tuple([Part.other(_meta_kind(o), o) for o in lines])
            return Message(Role.SYSTEM, others, created_at=self.ts, native_id=native_id)
        summary_line = self.last if kind == "boundary" or kind == "summary" else first
        extra = {k: v for k, v in summary_line.items() if k not in _OWN}
        if extra.get("sessionId") == own_session:
            del extra["sessionId"]
        if len(lines) > 1:
            extra["uuids"] = uuids
        extra["shape"] = [shape(o) for o in lines]
        if len(lines) > 1:
            ref = self.last["message"] if kind == "assistant" else None
            deltas = [_delta(o, first, ref) for o in lines]
            if any(deltas):
                extra["deltas"] = deltas
        if kind == "assistant":
            return self._build_assistant(extra, native_id)
        msg: dict[str, Any] = summary_line["message"] if isinstance(
            summary_line.get("message"), dict) else {}
        parts: tuple[Part, ...]
        if kind == "boundary":
            role, extra["boundary"] = Role.SYSTEM, first
            summary = _text_of(msg.get("content")) if len(lines) > 1 else ""
            parts = (Part.compaction(summary),)
        elif kind == "summary":
            role, parts = Role.SYSTEM, (Part.compaction(_text_of(msg.get("content"))),)
        else:
            content = msg.get("content")
            blocks = content if isinstance(content, list) else [content]
            role = Role.TOOL if kind == "tool" else Role.USER
            plist = [block_part(b) for b in blocks if b is not None]
            if "toolUseResult" in first:
                for i, p in enumerate(plist):
                    if p.type == "tool_result":
                        plist[i] = Part(p.type, {**p.data, "structured": first["toolUseResult"]})
                        break
                else:
                    extra["toolUseResult"] = first["toolUseResult"]
            parts = tuple(plist)
            if first.get("isMeta") is True and kind == "user":
                extra["harness"] = True  # Claude Code's own injection (reminders, command output)
            if not msg.keys() <= _PLAIN_MESSAGE:
                extra["message"] = {k: v for k, v in msg.items() if k != "content"}
        return Message(role, parts, created_at=self.ts, native_id=native_id, extra=extra)

    def _build_assistant(self, extra: dict[str, Any], native_id: str | None) -> Message:
        last = self.last
        lm = last["message"]
        model = None
        for o in reversed(self.lines):  # the last line that names one
            if o["message"].get("model"):
                model = o["message"]["model"]
                break
        usage = lm.get("usage") if isinstance(lm.get("usage"), dict) else None
        cost = last.get("costUSD") if isinstance(last.get("costUSD"), (int, float)) else None
        extra["message"] = {k: v for k, v in lm.items() if k not in _OWN_IN_MESSAGE}
        if len(self.lines) > 1 and [i for h in self.held for i in h] != list(range(len(self.blocks))):
            extra["held"] = self.held  # a line repeated a block: which line held which
        return Message(Role.ASSISTANT, tuple([block_part(b) for b in self.blocks]),
                       created_at=self.ts, native_id=native_id, model=model, usage=usage,
                       cost=cost, extra=extra)


def classify(obj: Mapping[str, Any]) -> str:
    kind = obj.get("type")
    msg = obj.get("message")
    if kind == "assistant" and isinstance(msg, dict):
        return "assistant"
    if kind == "user" and isinstance(msg, dict):
        if obj.get("isCompactSummary"):
            return "summary"
        c = msg.get("content")
        if isinstance(c, list) and c and all(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in c
        ):
            return "tool"
        return "user"
    if kind == "system" and obj.get("subtype") == "compact_boundary":
        return "boundary"
    return "meta"
