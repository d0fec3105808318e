"""A rebuilt Claude Code line as Claude wrote it: its key order, which line of a split response held
which block, and the line uuids a native export writes (``claude_blocks`` records them on import:
``shape``, ``held``, ``deltas``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oxide_git.core.model import Message, PartType


def _ordered(d: dict[str, Any], keys: str | None) -> dict[str, Any]:
    """``d`` with the keys named in ``keys`` (comma-joined, as recorded) first, in that order."""
    if not keys:
        return d
    out = {k: d[k] for k in keys.split(",") if k in d}
    if len(out) < len(d):
        out.update((k, v) for k, v in d.items() if k not in out)
    return out


def reorder(line: dict[str, Any], shape: Any) -> dict[str, Any]:
    """A rebuilt line in the key order Claude wrote it in (``claude_blocks.shape``); a tool result
    whose ``is_error`` was written as false gets it back."""
    if not isinstance(shape, list) or not shape:
        return line
    line = _ordered(line, shape[0])
    msg = line.get("message")
    if len(shape) > 1 and isinstance(msg, dict):
        msg = _ordered(msg, shape[1])
        blocks, content = shape[2] if len(shape) > 2 else None, msg.get("content")
        if isinstance(blocks, list) and isinstance(content, list) and len(blocks) == len(content):
            fixed = []
            for b, keys in zip(content, blocks, strict=True):
                if isinstance(b, dict) and keys:
                    if "is_error" in keys.split(",") and b.get("type") == "tool_result":
                        b = {**b, "is_error": bool(b.get("is_error", False))}
                    b = _ordered(b, keys)
                fixed.append(b)
            msg["content"] = fixed
        line["message"] = msg
    return line


def groups(blocks: list[dict[str, Any]], uuids: list[Any], shapes: Any) -> list[list[dict[str, Any]]]:
    """An assistant message's blocks split into its lines: as each line held them (the shape
    records how many), else one block a line when there are as many lines, else one line."""
    if isinstance(shapes, list) and len(shapes) == len(uuids) > 1:
        counts = [len(sh[2]) if len(sh) > 2 and isinstance(sh[2], list) else -1 for sh in shapes]
        if min(counts) >= 0 and sum(counts) == len(blocks):
            out, i = [], 0
            for n in counts:
                out.append(blocks[i:i + n])
                i += n
            return out
    return [[b] for b in blocks] if len(uuids) == len(blocks) > 1 else [blocks]


def native_uuids(messages: Sequence[Message]) -> set[str]:
    out: set[str] = set()
    for m in messages:
        if m.native_id:
            out.add(m.native_id)
        out.update(u for u in m.extra.get("uuids", ()) if isinstance(u, str))
        for p in m.parts:
            raw = p.get("raw") if p.type == PartType.OTHER else None
            if isinstance(raw, dict) and isinstance(raw.get("uuid"), str):
                out.add(raw["uuid"])
    return out
