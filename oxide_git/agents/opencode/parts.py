"""One part of a session as OpenCode part objects (``opencode_export`` puts them in messages).

An OpenCode session's parts go back as they were read (native fields are kept in ``Part.data``).
Another agent's parts become what OpenCode has: text, reasoning (without signatures), files and
images as ``file`` parts, tool calls with an OpenCode equivalent as ``tool`` parts
(``opencode_tools``), any other tool call, patch or part as readable text; every change is counted
in ``lost``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from oxide_git.agents.opencode.store import as_dict
from oxide_git.agents.opencode.tools import opencode_tool, tool_part
from oxide_git.core.model import Part, PartType

DERIVED: dict[str, tuple[str, ...]] = {  # normalized keys the parser adds next to the native fields
    PartType.FILE: ("path",),
    PartType.PATCH: ("text",),
    PartType.COMPACTION: ("summary", "replaces", "summary_message_id"),
}


def part(p: Part, native: bool, results: Mapping[Any, Part], cwd: str, lost: Counter[str],
         ms: int) -> list[dict[str, Any]]:
    """``p`` as OpenCode part objects (none, one, or a file and its text); ``lost`` counts changes."""
    d = {k: v for k, v in p.data.items() if k not in DERIVED.get(p.type, ())}
    t = p.type
    if t == PartType.TEXT:
        return [{"type": "text", **d} if native else {"type": "text", "text": str(p.get("text", ""))}]
    if t == PartType.REASONING:
        if native:
            return [{"type": "reasoning", **d}]
        if p.get("signature") or p.get("encrypted"):
            lost["reasoning signatures dropped"] += 1
        return [{"type": "reasoning", "text": str(p.get("text", "")), "time": {"start": ms, "end": ms}}]
    if t == PartType.TOOL_CALL:
        res = results.get(p.get("call_id"))
        if native:
            state = dict(as_dict(p.get("state")))
            state["input"] = p.get("input")
            if res is not None:
                state["error" if res.get("is_error") else "output"] = res.get("output")
            rest = {k: v for k, v in d.items() if k not in ("call_id", "name", "input", "state")}
            return [{"type": "tool", **rest, "callID": p.get("call_id"), "tool": p.get("name"),
                     "state": state}]
        mapped = opencode_tool(p.get("name"), p.get("input"), cwd)
        if mapped is not None:
            lost[f"{p.get('name')} tool calls became OpenCode {mapped[0]} tool parts"] += 1
            return [tool_part(p, res, mapped[0], mapped[1], ms)]
        lost[f"{p.get('name')} tool calls became text (OpenCode has no such tool)"] += 1
        return [{"type": "text", "text": _tool_text(p, res)}]
    if t == PartType.TOOL_RESULT:
        if p.get("call_id") in results:
            return []  # written with its call
        lost["tool results without their call became text"] += 1
        return [{"type": "text", "text": f"Tool result:\n{_block(p.get('output'))}"}]
    if t == PartType.FILE:
        if native and "url" in d:
            return [{"type": "file", **d}]
        path = str(p.get("path", ""))
        full = path if PurePosixPath(path).is_absolute() else f"{cwd.rstrip('/')}/{path}"
        out = [{"type": "file", "mime": p.get("mime") or "text/plain", "filename": path,
                "url": p.get("url") or f"file://{full}"}]
        if isinstance(p.get("text"), str):
            out.append({"type": "text", "text": p.get("text"), "synthetic": True})
        return out
    if t == PartType.IMAGE:
        mime = p.get("mime") or "image/png"
        url = p.get("url") or (f"data:{mime};base64,{p.get('data')}" if p.get("data") else None)
        if url is None and p.get("path"):
            url = f"file://{p.get('path')}"
        if url is None:
            lost["images without data dropped"] += 1
            return []
        return [{"type": "file", "mime": mime, "url": url, "filename": p.get("path") or "image"}]
    if t == PartType.PATCH:
        if native and "hash" in d:
            return [{"type": "patch", **d}]
        lost["patches became text"] += 1
        return [{"type": "text", "text": f"Patch:\n{_block(p.get('text'), 'diff')}"}]
    if t == PartType.COMPACTION:
        if native and "auto" in d:
            return [{"type": "compaction", **d}]
        return [{"type": "compaction", "auto": False}]
    if t == PartType.OTHER and native and isinstance(p.get("raw"), dict):
        return [{**p.get("raw"), "type": p.get("kind")}]
    lost[f"{p.get('kind') or t} parts dropped"] += 1
    return []


def tokens(u: Mapping[str, Any]) -> dict[str, Any]:
    def n(*keys: str) -> int:
        for k in keys:
            v = u.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return 0

    cache = as_dict(u.get("cache"))
    return {"input": n("input", "input_tokens", "prompt_tokens"),
            "output": n("output", "output_tokens", "completion_tokens"),
            "reasoning": n("reasoning", "reasoning_tokens", "reasoning_output_tokens"),
            "cache": {"read": cache.get("read") or n("cache_read_input_tokens", "cached_input_tokens"),
                      "write": cache.get("write") or n("cache_creation_input_tokens")}}


def provider(model: str) -> str:
    low = model.lower()
    if "claude" in low:
        return "anthropic"
    if low.startswith(("gpt", "o1", "o3", "o4", "codex")):
        return "openai"
    if "gemini" in low:
        return "google"
    return "unknown"


def _tool_text(call: Part, res: Part | None) -> str:
    text = f"Tool `{call.get('name')}` was called with:\n{_block(call.get('input'), 'json')}"
    if res is not None:
        label = "Error" if res.get("is_error") else "Result"
        text += f"\n{label}:\n{_block(res.get('output'))}"
    return text


def _block(value: Any, lang: str = "") -> str:
    body = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False,
                                                          default=str)
    fence = "````" if "```" in body else "```"
    return f"{fence}{lang}\n{body}\n{fence}"
