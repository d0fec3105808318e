"""The Gemini API side of the scripted model server (Gemini CLI; Qwen Code speaks Chat Completions).

``POST /v1beta/models/<model>:generateContent`` (one JSON body), ``:streamGenerateContent?alt=sse``
(server-sent events, one ``GenerateContentResponse`` per event) and ``:countTokens``. A request's
history is ``contents[]`` (``role`` user | model, ``parts`` with ``text``, ``functionCall``,
``functionResponse``), its tools ``tools[].functionDeclarations[]``. modelserver.py reads requests
through ``tool_names`` / ``tool_schema`` / ``conversation`` here and answers with ``reply``; its
other three APIs are untouched by this module.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from typing import Any


def is_gemini(path: str) -> bool:
    return ":generateContent" in path or ":streamGenerateContent" in path


def is_count_tokens(path: str) -> bool:
    return path.endswith(":countTokens")


def model_of(path: str) -> str:
    """``gemini-2.5-flash`` from ``/v1beta/models/gemini-2.5-flash:generateContent``."""
    tail = path.split("?")[0].rsplit("/", 1)[-1]
    return tail.split(":", 1)[0]


def _declarations(body: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            for d in t.get("functionDeclarations") or []:
                if isinstance(d, dict):
                    yield d


def tool_names(body: Mapping[str, Any]) -> list[str]:
    return [str(d.get("name")) for d in _declarations(body)]


def tool_schema(body: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    for d in _declarations(body):
        if d.get("name") == name:
            schema = d.get("parametersJsonSchema") or d.get("parameters") or {}
            return schema if isinstance(schema, dict) else {}
    return {}


def conversation(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The history as modelserver.conversation gives it: (user | assistant | tool_call |
    tool_result | system, text). A model turn with a text and a call counts once (as the call)."""
    out: list[tuple[str, str]] = []
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        out.append(("system", "\n".join(_part_texts(system.get("parts")))))
    for c in body.get("contents") or []:
        if not isinstance(c, dict):
            continue
        parts = [p for p in c.get("parts") or [] if isinstance(p, dict)]
        calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
        results = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
        if c.get("role") == "model":
            if calls:
                out.extend(("tool_call", json.dumps(call)) for call in calls)
            else:
                out.append(("assistant", "\n".join(texts)))
        else:
            out.extend(("tool_result", json.dumps(r)) for r in results)
            if texts:
                out.append(("user", "\n".join(texts)))
    return out


def _part_texts(parts: Any) -> list[str]:
    return [p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]


def tool_calls(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, arguments as JSON text) of every functionCall in the request's history."""
    out = []
    for c in body.get("contents") or []:
        for p in (c.get("parts") or []) if isinstance(c, dict) else []:
            if isinstance(p, dict) and isinstance(p.get("functionCall"), dict):
                f = p["functionCall"]
                out.append((str(f.get("name")), json.dumps(f.get("args"))))
    return out


def side_json(body: Mapping[str, Any]) -> str | None:
    """A side request that asks for JSON (the CLI's next-speaker and routing checks): a valid
    object that hands the turn back to the user, else None."""
    config = body.get("generationConfig") or body.get("config") or {}
    if not isinstance(config, dict) or config.get("responseMimeType") != "application/json":
        return None
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    answer: dict[str, Any] = {}
    for key, spec in (props or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        enum = spec.get("enum") if isinstance(spec, dict) else None
        if key == "next_speaker":
            answer[key] = "user"
        elif enum:
            answer[key] = enum[0]
        elif str(kind).lower() in ("number", "integer"):
            answer[key] = 0
        elif str(kind).lower() == "boolean":
            answer[key] = False
        else:
            answer[key] = "compat"
    return json.dumps(answer)


def reply(model: str, text: str, call: tuple[str, dict[str, Any]] | None,
          stream: bool, spent: Any = None) -> tuple[bytes, str]:
    parts: list[dict[str, Any]] = []
    if text or not call:
        parts.append({"text": text or "ok"})
    if call:
        parts.append({"functionCall": {"name": call[0], "args": call[1]}})
    usage: dict[str, Any] = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
    if spent is not None and spent.cached:  # modelserver.Usage (distinct figures): thoughts apart
        candidates = spent.output - spent.reasoning
        usage = {"promptTokenCount": spent.prompt, "cachedContentTokenCount": spent.cached,
                 "candidatesTokenCount": candidates, "thoughtsTokenCount": spent.reasoning,
                 "totalTokenCount": spent.prompt + spent.output}
    rid = uuid.uuid4().hex[:20]
    if not stream:
        return json.dumps({"candidates": [{"content": {"role": "model", "parts": parts},
                                           "finishReason": "STOP", "index": 0}],
                           "usageMetadata": usage, "modelVersion": model,
                           "responseId": rid}).encode(), "application/json"
    events = [{"candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}],
               "modelVersion": model, "responseId": rid} for p in parts]
    events[-1]["candidates"][0]["finishReason"] = "STOP"
    events[-1]["usageMetadata"] = usage
    body = "".join(f"data: {json.dumps(e)}\r\n\r\n" for e in events)
    return body.encode(), "text/event-stream"
