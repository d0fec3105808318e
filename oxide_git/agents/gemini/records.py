"""One Gemini CLI message record as a model Message, and the record rebuilt from it. Pure.

A record is ``{id, timestamp, type: user|gemini|info|error|warning, content, ...}``; a ``gemini``
record adds ``thoughts`` (``{subject, description, timestamp}``), ``tokens``, ``model`` and
``toolCalls`` (``{id, name, args, result, status, timestamp, resultDisplay, description,
displayName, renderOutputAsMarkdown}``). Parts, in order: reasoning per thought, the content's
parts (``gemini_parts``), a tool_call per tool call. A tool call's ``result`` repeats the
``functionResponse`` parts of the user record Gemini writes next: it is not stored twice but
rebuilt from that record's tool_result parts (``result: "next"``); where no such record holds it,
the result stays in the call's data and its tool_result parts are added to this message
(``derived``, left out when the record is rebuilt).

``record(message, next_message)`` is the exact inverse, key order included; ``message`` checks
that and keeps the record whole (``raw``) when it would not come back the same.

A compression (``/compress``, or the automatic one) replaces the history with a user message
holding the summary (``<state_snapshot>…``) and the CLI's own answer to it, ``ACK``: that user
message is a compaction (``as_compaction``: its text parts become compaction parts, given back as
the same text parts), the answer is harness.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oxide_git.agents.gemini.parts import from_part, from_parts, same, to_parts
from oxide_git.core.model import Message, Part, PartType, Role, from_iso

KEY = "gemini"  # Message.extra[KEY]: what the record needs besides the parts
TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
HARNESS = ("<session_context>", "<hook_context>")
_DERIVED = ("content", "thoughts", "toolCalls", "tokens", "model")
_ROLE = {"user": Role.USER, "gemini": Role.ASSISTANT}
ACK = "Got it. Thanks for the additional context!"  # the CLI's answer to its compression summary


def _texts(content: Any) -> list[str] | None:
    """The texts of a record's content when it holds only text (a string, or text parts)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list) or not content:
        return None
    if not all(isinstance(p, dict) and set(p) == {"text"} and isinstance(p["text"], str) for p in content):
        return None
    return [p["text"] for p in content]


def is_summary(rec: Mapping[str, Any], after: Mapping[str, Any] | None) -> bool:
    """Is ``rec`` a compression's summary (a user record of text that the CLI's ACK answers)?"""
    texts = _texts(rec.get("content"))
    return (rec.get("type") == "user" and texts is not None and not is_harness_text(" ".join(texts))
            and after is not None and after.get("type") == "gemini" and _texts(after.get("content")) == [ACK])


def as_compaction(msg: Message) -> Message:
    """The summary message of a compression as a compaction (system): each text part a compaction
    part whose summary is the text (``from_part`` gives the text part back)."""
    parts = tuple(Part.compaction(str(p.get("text", "")), None, **{
        k: v for k, v in p.data.items() if k != "text"}, gemini_text=True)
        if p.type == PartType.TEXT else p for p in msg.parts)
    return Message(role=Role.SYSTEM, parts=parts, native_id=msg.native_id, created_at=msg.created_at,
                   model=msg.model, usage=msg.usage, extra=msg.extra)


def is_harness_text(text: str) -> bool:
    return text.lstrip().startswith(HARNESS)


def result_groups(parts: Any) -> dict[str, list[Any]]:
    """A user record's content split per call id: each functionResponse with the parts that follow
    it up to the next one (how Gemini concatenates the tools' response parts)."""
    out: dict[str, list[Any]] = {}
    current: list[Any] | None = None
    for p in parts if isinstance(parts, list) else []:
        fr = p.get("functionResponse") if isinstance(p, dict) else None
        if isinstance(fr, dict) and isinstance(fr.get("id"), str):
            current = out.setdefault(fr["id"], [])
        if current is not None:
            current.append(p)
    return out


def _thought(t: Any) -> Part:
    if not isinstance(t, dict) or not isinstance(t.get("description"), str) or (
            "subject" in t and not isinstance(t["subject"], str)):
        return Part.other("gemini-thought", t)
    data = {k: v for k, v in t.items() if k != "description"}
    part = Part.reasoning(t["description"], **{f"thought_{k}": v for k, v in data.items()},
                          keys=",".join(t))
    return part if same(_thought_back(part), t) else Part.other("gemini-thought", t)


def _thought_back(p: Part) -> Any:
    if p.type == PartType.OTHER:
        return p.get("raw")
    out = {k[8:]: v for k, v in p.data.items() if k.startswith("thought_")}
    out["description"] = p.get("text", "")
    keys = str(p.get("keys") or "").split(",")
    return {k: out[k] for k in keys if k in out} | out


def _call(tc: Any, results: Mapping[str, list[Any]]) -> list[Part]:
    """A toolCalls entry as its tool_call part (and tool_result parts when no later record holds
    its result)."""
    if not isinstance(tc, dict) or not isinstance(tc.get("id"), str) or not isinstance(tc.get("name"), str):
        return [Part.other("gemini-tool-call", tc)]
    rest = {k: v for k, v in tc.items() if k not in ("id", "name", "args")}
    data: dict[str, Any] = {"keys": ",".join(tc)}
    if "args" not in tc:
        data["no_args"] = True
    out = []
    if "result" in tc and tc["id"] in results and same(tc["result"], results[tc["id"]]):
        rest.pop("result")
        data["result"] = "next"
    call = Part.tool_call(tc["id"], tc["name"], tc.get("args"), **data, **({"native": rest} if rest else {}))
    out.append(call)
    if "result" in rest and isinstance(rest["result"], list):
        for r in to_parts(rest["result"]):
            if r.type == PartType.TOOL_RESULT:
                out.append(Part(r.type, {**r.data, "derived": True}))
    return out


def _call_back(p: Part, results: Mapping[str, list[Any]]) -> Any:
    if p.type == PartType.OTHER:
        return p.get("raw")
    d = p.data
    out: dict[str, Any] = {"id": d.get("call_id"), "name": d.get("name")}
    if not d.get("no_args"):
        out["args"] = d.get("input")
    out.update(d.get("native") or {})
    if d.get("result") == "next":
        out["result"] = results.get(str(d.get("call_id")), [])
    keys = str(d.get("keys") or "").split(",")
    return {k: out[k] for k in keys if k in out} | out


def message(rec: Mapping[str, Any], results: Mapping[str, list[Any]] | None = None) -> Message:
    """The Message of a record whose ``type`` is one of TYPES; ``results``: the next record's
    functionResponse parts by call id (``result_groups``)."""
    results = results or {}
    kind = str(rec.get("type"))
    content, thoughts, calls = rec.get("content"), rec.get("thoughts"), rec.get("toolCalls")
    tokens, model = rec.get("tokens"), rec.get("model")
    shape = "absent" if "content" not in rec else "str" if isinstance(content, str) else (
        "list" if isinstance(content, list) else "raw")
    derived = {"content"} if shape in ("str", "list") else set()
    parts: list[Part] = []
    if kind == "gemini" and isinstance(thoughts, list):
        parts += [_thought(t) for t in thoughts]
        derived.add("thoughts")
    n_thoughts = len(parts)
    if shape == "str" and content:
        parts.append(Part.text(str(content)))
    elif shape == "list":
        parts += to_parts(content)  # type: ignore[arg-type]
    n_content = len(parts) - n_thoughts
    n_calls = 0
    if kind == "gemini" and isinstance(calls, list):
        for tc in calls:
            parts += _call(tc, results)
        n_calls = len(calls)
        derived.add("toolCalls")
    if tokens is None or isinstance(tokens, dict):
        derived.add("tokens")
    if model is None or isinstance(model, str):
        derived.add("model")
    g: dict[str, Any] = {"keys": ",".join(rec), "rest": {k: v for k, v in rec.items() if k not in derived},
                         "content": shape, "n": [n_thoughts, n_content, n_calls]}
    extra: dict[str, Any] = {KEY: g}
    text = " ".join(str(p.get("text")) for p in parts if p.type == PartType.TEXT)
    if (kind == "user" and is_harness_text(text)) or kind not in _ROLE:
        extra["harness"] = True  # session context, or a notice the CLI shows and never sends
    if kind not in _ROLE:
        extra["gemini_type"] = kind
    ts = rec.get("timestamp")
    msg = Message(
        role=_ROLE.get(kind, Role.SYSTEM), parts=tuple(parts), native_id=str(rec.get("id")),
        created_at=from_iso(ts) if isinstance(ts, str) else None,
        model=model if isinstance(model, str) else None,
        usage=tokens if isinstance(tokens, dict) else None, extra=extra)
    if not same(record(msg, results), rec):
        g.clear()
        g["raw"] = dict(rec)
    return msg


def record(msg: Message, results: Mapping[str, list[Any]] | None = None) -> dict[str, Any]:
    """The record ``msg`` came from; ``results``: the next message's functionResponse parts by call
    id (``next_results``)."""
    g = msg.extra.get(KEY) or {}
    if "raw" in g:
        return dict(g["raw"])
    results = results or {}
    n_thoughts, n_content, n_calls = g.get("n") or (0, len(msg.parts), 0)
    parts = [p for p in msg.parts if not p.get("derived")]
    out: dict[str, Any] = dict(g.get("rest") or {})
    shape = g.get("content")
    body = parts[n_thoughts:n_thoughts + n_content]
    if shape == "str":
        out["content"] = "".join(str(p.get("text", "")) for p in body)
    elif shape == "list":
        out["content"] = from_parts(body)
    keys = str(g.get("keys") or "").split(",")
    if "thoughts" not in out and "thoughts" in keys:
        out["thoughts"] = [_thought_back(p) for p in parts[:n_thoughts]]
    if "toolCalls" not in out and "toolCalls" in keys:
        start = n_thoughts + n_content
        out["toolCalls"] = [_call_back(p, results) for p in parts[start:start + n_calls]]
    if "tokens" in keys and "tokens" not in out:
        out["tokens"] = dict(msg.usage) if msg.usage is not None else None
    if "model" in keys and "model" not in out:
        out["model"] = msg.model
    return {k: out[k] for k in keys if k in out} | out


def next_results(msg: Message | None) -> dict[str, list[Any]]:
    """``result_groups`` of the record ``msg`` rebuilds to (the record after a gemini one)."""
    if msg is None or msg.role != Role.USER:
        return {}
    g = msg.extra.get(KEY) or {}
    if "raw" in g:
        return result_groups(g["raw"].get("content"))
    if g.get("content") != "list":
        return {}
    return result_groups([from_part(p) for p in msg.parts])
