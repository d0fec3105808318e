"""What one Codex rollout line holds, decoded: times, texts, error outputs, and the data of
reasoning and tool-call parts."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from oxide_git.agents import jsonline
from oxide_git.core.model import Part, from_iso

_EXIT = re.compile(r"(?:^Exit code: |Process exited with code )(-?\d+)", re.M)


def iso_ms(ts: Any) -> int | None:
    if isinstance(ts, str) and len(ts) == 24 and ts[-1] == "Z":
        try:
            return int(datetime.fromisoformat(ts).timestamp() * 1000)
        except ValueError:
            return None
    return from_iso(ts)


def texts(content: Any, kinds: tuple[str, ...]) -> list[str]:
    if not isinstance(content, list):
        return []
    return [c["text"] for c in content if isinstance(c, dict) and c.get("type") in kinds
            and isinstance(c.get("text"), str)]


def is_error(output: Any) -> bool:
    if isinstance(output, dict):
        return output.get("success") is False
    if not isinstance(output, str):
        return False
    if output.startswith("{") and '"exit_code"' in output:
        try:
            meta = jsonline.loads(output).get("metadata") or {}
            return bool(meta.get("exit_code"))
        except (ValueError, AttributeError, RecursionError):  # not JSON, not a dict, too deep
            return False
    m = _EXIT.search(output[:400])
    return bool(m and int(m.group(1)) != 0)


# json.dumps(value, ensure_ascii=False, separators=(",", ":")) builds this encoder on every call
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

CALL_KEYS = {"function_call": ("type", "name", "arguments", "call_id"),
             "custom_tool_call": ("type", "status", "call_id", "name", "input"),
             "local_shell_call": ("type", "call_id", "status", "action")}


def reasoning_data(p: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A reasoning item's part data, and the summary texts its events will repeat."""
    summary = p.get("summary")
    summaries = texts(summary, ("summary_text",))
    body = summaries or texts(p.get("content"), ("reasoning_text", "text"))
    data: dict[str, Any] = {"text": "\n\n".join(body)}
    if len(summaries) != 1:
        data["summary"] = summaries
    if not isinstance(summary, list) or len(summaries) != len(summary) or any(len(s) != 2 for s in summary):
        data["summary_raw"] = summary
    if p.get("encrypted_content") is not None:
        data["encrypted"] = p["encrypted_content"]
    data.update((k, v) for k, v in p.items() if k not in ("type", "summary", "encrypted_content"))
    return data, summaries


def tool_call_data(t: str, p: dict[str, Any]) -> dict[str, Any]:
    """A function, custom tool or local shell call item (``t`` in CALL_KEYS) as tool_call data."""
    rest = {k: v for k, v in p.items() if k not in CALL_KEYS[t]}
    call_id = str(p.get("call_id") or p.get("id") or "")
    if t == "function_call":
        raw = p.get("arguments")
        try:
            value = jsonline.loads(raw) if isinstance(raw, str) else raw
            same = _COMPACT.encode(value) == raw
        except ValueError:
            value, same = raw, False
        part = Part.tool_call(call_id, str(p.get("name")), value, **({} if same else {"arguments": raw}))
    elif t == "custom_tool_call":
        part = Part.tool_call(call_id, str(p.get("name")), p.get("input"))
    else:
        part = Part.tool_call(call_id, "local_shell", p.get("action"))
    data = {**part.data, "codex_type": t}
    if "status" in p:
        data["status"] = p["status"]
    if rest:
        data["native"] = rest
    return data
