"""What the Codex reader knows of each line, event and item type, and the line envelope of Codex
0.155+ "paginated" rollouts (seen with codex-cli 0.171.0, see docs/agents/codex.md).

A paginated line is ``{"timestamp","ordinal","type","payload"[,"metadata"]}``: ``ordinal`` is the
line's index in the file (Codex refuses to resume a file whose last line has none), ``metadata``
rides on message and tool lines. ``envelope`` keeps what a part needs to write its line back
byte for byte: the timestamp as written, the metadata, and (for payloads rebuilt from parsed
fields) the payload's key order; a line that our serializer would not give back identically is
kept whole (``raw``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from oxide_git.core.model import to_iso

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - a dependency of the package
    _orjson = None

LINES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted",
                   "world_state", "token_usage_record"})
ITEMS = frozenset({"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                   "custom_tool_call_output", "local_shell_call", "local_shell_call_output",
                   "web_search_call", "image_generation_call", "ghost_snapshot", "compaction",
                   "compaction_summary", "tool_search_call", "tool_search_output"})
EVENTS = frozenset({
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "agent_reasoning_section_break", "token_count", "context_compacted", "entered_review_mode",
    "exited_review_mode", "thread_rolled_back", "undo_completed", "turn_aborted", "task_started",
    "task_complete", "turn_started", "turn_complete", "item_completed", "thread_settings_applied",
    "error", "warning", "exec_command_end", "patch_apply_end", "mcp_tool_call_end", "web_search_end",
    "view_image_tool_call", "image_generation_end", "dynamic_tool_call_request",
    "dynamic_tool_call_response", "plan_update", "thread_name_updated"})
TURN_ITEMS = frozenset({
    "UserMessage", "HookPrompt", "InjectedContext", "AgentMessage", "EventDrivenTool",
    "EventCommandEvent", "CollabAgentMessage", "ConversationArtifact", "Plan", "Reasoning",
    "WebSearch", "ImageView", "ImageGeneration", "FileChange", "McpToolCall", "ContextCompaction",
    "CommandExecution"})
ASSISTANT_TURN_ITEMS = frozenset({"AgentMessage", "Reasoning", "Plan"})

_HEADS = frozenset({("timestamp", "type", "payload"), ("timestamp", "type", "payload", "metadata"),
                    ("timestamp", "ordinal", "type", "payload"),
                    ("timestamp", "ordinal", "type", "payload", "metadata")})
REBUILT_EVENTS = frozenset({"user_message", "agent_message", "agent_reasoning",
                            "agent_reasoning_raw_content"})


def unknown_event(t: Any, p: Mapping[str, Any]) -> str | None:
    """The Unknown kind of an ``event_msg`` payload, or None when it is known."""
    if not isinstance(t, str):
        return f"event_msg/{t!s}"
    if t == "item_completed":
        item = p.get("item")
        it = item.get("type") if isinstance(item, dict) else None
        return None if isinstance(it, str) and it in TURN_ITEMS else f"event_msg/item_completed/{it!s}"
    if t in EVENTS or t.startswith("collab_"):
        return None
    return f"event_msg/{t}"


def provenance(p: Mapping[str, Any]) -> str | None:
    """``user`` for a prompt the user typed, ``harness`` for injected context, from a message
    item's ``internal_chat_message_metadata_passthrough``; None when the item does not say."""
    meta = p.get("internal_chat_message_metadata_passthrough")
    if not isinstance(meta, dict):
        return None
    kinds = meta.get("content_item_kinds")
    provs = [m.get("provenance", {}).get("type") for m in meta.get("content_item_metadata") or []
             if isinstance(m, dict) and isinstance(m.get("provenance"), dict)]
    if not provs and not isinstance(kinds, list):
        return None
    if "user" in provs or (isinstance(kinds, list) and any(
            isinstance(k, str) and k.startswith("user.") for k in kinds)):
        return "user"
    return "harness"


def dumps_line(obj: Any) -> str:
    """A line as Codex (serde_json) writes it: compact, UTF-8, keys in the given order."""
    if _orjson is not None:
        try:
            return str(_orjson.dumps(obj).decode())
        except TypeError:  # an integer beyond 64 bits
            pass
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def envelope(obj: Mapping[str, Any], raw: bytes) -> dict[str, Any]:
    """What writing this line back needs beyond its payload (see module docstring). Lines of the
    envelope era before 0.155 have no ``ordinal`` (nor has their envelope)."""
    env: dict[str, Any] = {"ts": obj["timestamp"]}
    if len(obj) > 3:
        if "ordinal" in obj:
            env["ordinal"] = obj["ordinal"]
        if "metadata" in obj:
            env["metadata"] = obj["metadata"]
    if tuple(obj) in _HEADS:
        try:
            out = _orjson.dumps(obj) if _orjson is not None else dumps_line(obj).encode()
        except TypeError:  # an integer beyond 64 bits
            out = dumps_line(obj).encode()
        # raw is the line with its newline (a partial last line is never read): no copy of it
        if len(raw) - len(out) in (1, 2) and raw.startswith(out):
            return env
    if b"\\ud" in raw or b"\\uD" in raw:  # a lone surrogate, read as U+FFFD: rebuilt, never kept
        return env
    env["raw"] = raw.rstrip(b"\r\n").decode("utf-8", "replace")
    return env


def key_order(payload: Mapping[str, Any]) -> str | list[str]:
    """A payload's key order as ``ordered`` takes it: one string when no key holds a comma."""
    joined = ",".join(payload)
    return joined if joined.count(",") == len(payload) - 1 else list(payload)


def ordered(payload: dict[str, Any], keys: Any) -> dict[str, Any]:
    """``payload`` with its keys in the order ``keys`` names (the rest after them)."""
    if isinstance(keys, str):
        keys = keys.split(",")
    if not isinstance(keys, list) or list(payload) == keys:
        return payload
    out = {k: payload[k] for k in keys if k in payload}
    if len(out) != len(payload):
        out.update((k, v) for k, v in payload.items() if k not in out)
    return out



def line_with(env: Mapping[str, Any] | None, ts: str | None, ordinal: int | None, kind: str,
              payload: Any, base: int | None = None) -> str:
    """One line: ``env`` (from ``envelope``) gives its timestamp (``dt``: ms after ``base``, its
    message's time), metadata and key order."""
    if env and "dt" in env and base is not None:
        ts = to_iso(base + int(env["dt"]))
        env = {k: v for k, v in env.items() if k != "dt"}
    if env and "raw" in env:
        raw = str(env["raw"])
        if ordinal is None or env.get("ordinal") == ordinal:
            return raw
        try:
            obj = json.loads(raw)
            obj["ordinal"] = ordinal
            return dumps_line(obj)
        except (ValueError, TypeError):
            return raw
    out: dict[str, Any] = {"timestamp": env.get("ts") if env and "ts" in env else ts}
    if ordinal is not None:
        out["ordinal"] = ordinal
    out["type"] = kind
    out["payload"] = ordered(payload, env.get("keys")) if env and isinstance(payload, dict) else payload
    if env and "metadata" in env:
        out["metadata"] = env["metadata"]
    return dumps_line(out)
