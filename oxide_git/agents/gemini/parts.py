"""Gemini API content parts as model Parts and back: the message shape Gemini CLI and Qwen Code keep.

A Gemini ``Content`` is ``{role: user|model, parts: [...]}``; a part holds one of ``text`` (with
``thought: true`` it is reasoning), ``functionCall {id, name, args}``, ``functionResponse {id,
name, response}``, ``inlineData {mimeType, data}``, ``fileData {mimeType, fileUri}``, plus fields
such as ``thoughtSignature``. ``to_part`` and ``from_part`` are exact inverses (key order
included): a part whose rebuilt form would differ in any way is kept whole as an ``other`` part
(kind ``gemini-part``), so nothing is ever rewritten. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from oxide_git.core.model import Part, PartType

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - a dependency of the package
    _orjson = None

OTHER_KIND = "gemini-part"
_TEXT_KEYS = ("text", "thought", "thoughtSignature")
_CALL_KEYS = ("id", "name", "args")
_RESPONSE_KEYS = ("id", "name", "response")
_OUTPUT_KEYS = ("output", "error")  # a response of one such key is its output (error: is_error)


def _order(d: Mapping[str, Any], default: Sequence[str]) -> str | None:
    """``d``'s key order when it is not ``default``'s (restricted to the keys present)."""
    keys = list(d)
    want = [k for k in default if k in d] + [k for k in keys if k not in default]
    return None if keys == want else ",".join(keys)


def _ordered(d: dict[str, Any], keys: str | None, default: Sequence[str]) -> dict[str, Any]:
    names = keys.split(",") if keys else [k for k in default if k in d]
    out = {k: d[k] for k in names if k in d}
    out.update((k, v) for k, v in d.items() if k not in out)
    return out


def _decode(p: Mapping[str, Any]) -> Part | None:
    rest = {k: v for k, v in p.items() if k not in ("text", "thought", "thoughtSignature",
                                                    "functionCall", "functionResponse")}
    data: dict[str, Any] = {}
    if isinstance(p.get("thoughtSignature"), str):
        data["signature"] = p["thoughtSignature"]
    elif "thoughtSignature" in p:
        return None
    if isinstance(p.get("text"), str) and not {"functionCall", "functionResponse"} & p.keys():
        thought = p.get("thought")
        if thought not in (None, True, False):
            return None
        if thought is False:
            data["thought"] = False
        kind = PartType.REASONING if thought is True else PartType.TEXT
        part = Part(kind, {"text": p["text"], **data})
        default: Sequence[str] = _TEXT_KEYS
    elif isinstance(p.get("functionCall"), dict) and "text" not in p and "functionResponse" not in p:
        fc = p["functionCall"]
        if not isinstance(fc.get("name"), str) or ("id" in fc and not isinstance(fc["id"], str)):
            return None
        data.update(call_id=fc.get("id", ""), name=fc["name"], input=fc.get("args"))
        if "id" not in fc:
            data["no_id"] = True
        if "args" not in fc:
            data["no_args"] = True
        inner = {k: v for k, v in fc.items() if k not in _CALL_KEYS}
        if inner:
            data["native_call"] = inner
        if (order := _order(fc, _CALL_KEYS)) is not None:
            data["inner"] = order
        part = Part(PartType.TOOL_CALL, data)
        default = ("functionCall", "thoughtSignature")
    elif isinstance(p.get("functionResponse"), dict) and "text" not in p and "functionCall" not in p:
        fr = p["functionResponse"]
        if "id" in fr and not isinstance(fr["id"], str):
            return None
        resp = fr.get("response")
        data.update(call_id=fr.get("id", ""), name=fr.get("name"))
        if isinstance(resp, dict) and len(resp) == 1 and next(iter(resp)) in _OUTPUT_KEYS:
            key = next(iter(resp))
            data.update(output=resp[key], is_error=key == "error", response=key)
        else:
            data.update(output=resp, is_error=False, response="whole" if "response" in fr else "none")
        if "id" not in fr:
            data["no_id"] = True
        inner = {k: v for k, v in fr.items() if k not in _RESPONSE_KEYS}
        if inner:
            data["native_response"] = inner
        if (order := _order(fr, _RESPONSE_KEYS)) is not None:
            data["inner"] = order
        part = Part(PartType.TOOL_RESULT, data)
        default = ("functionResponse", "thoughtSignature")
    elif set(p) == {"inlineData"} and isinstance(p["inlineData"], dict) and set(p["inlineData"]) == {
            "mimeType", "data"} and str(p["inlineData"]["mimeType"]).startswith("image/"):
        d = p["inlineData"]
        order = _order(d, ("mimeType", "data"))
        return Part.image(d["mimeType"], data=d["data"], **({"inner": order} if order else {}))
    elif set(p) == {"fileData"} and isinstance(p["fileData"], dict) and set(p["fileData"]) == {
            "mimeType", "fileUri"} and isinstance(p["fileData"]["fileUri"], str):
        d = p["fileData"]
        return Part.file(d["fileUri"], mime=d["mimeType"], inner=_order(d, ("mimeType", "fileUri")) or "")
    else:
        return None
    if rest:
        part = Part(part.type, {**part.data, "native": rest})
    if (order := _order(p, default)) is not None:
        part = Part(part.type, {**part.data, "keys": order})
    return part


def from_part(part: Part) -> dict[str, Any] | None:
    """The Gemini part ``part`` came from (``to_part``'s inverse); None for a part of another agent
    that has no Gemini form (a caller writes it as text, or leaves it out)."""
    d = part.data
    t = part.type
    out: dict[str, Any]
    if t in (PartType.TEXT, PartType.REASONING) or (t == PartType.COMPACTION and d.get("gemini_text")):
        out = {"text": d.get("summary", "") if t == PartType.COMPACTION else d.get("text", "")}
        if t == PartType.REASONING:
            out["thought"] = True
        elif d.get("thought") is False:
            out["thought"] = False
        default: Sequence[str] = _TEXT_KEYS
    elif t == PartType.TOOL_CALL:
        fc: dict[str, Any] = {} if d.get("no_id") else {"id": d.get("call_id")}
        fc["name"] = d.get("name")
        if not d.get("no_args"):
            fc["args"] = d.get("input")
        fc.update(d.get("native_call") or {})
        out = {"functionCall": _ordered(fc, d.get("inner"), _CALL_KEYS)}
        default = ("functionCall", "thoughtSignature")
    elif t == PartType.TOOL_RESULT:
        fr: dict[str, Any] = {} if d.get("no_id") else {"id": d.get("call_id")}
        fr["name"] = d.get("name")
        how = d.get("response")
        if how in _OUTPUT_KEYS:
            fr["response"] = {how: d.get("output")}
        elif how != "none":
            fr["response"] = d.get("output") if how == "whole" else {
                "error" if d.get("is_error") else "output": d.get("output")}
        fr.update(d.get("native_response") or {})
        out = {"functionResponse": _ordered(fr, d.get("inner"), _RESPONSE_KEYS)}
        default = ("functionResponse", "thoughtSignature")
    elif t == PartType.IMAGE and d.get("data") is not None:
        inner = _ordered({"mimeType": d.get("mime"), "data": d.get("data")}, d.get("inner"),
                         ("mimeType", "data"))
        return {"inlineData": inner}
    elif t == PartType.FILE and "inner" in d:  # a fileData part (another agent's file has no uri)
        inner = _ordered({"mimeType": d.get("mime"), "fileUri": d.get("path")}, d.get("inner") or None,
                         ("mimeType", "fileUri"))
        return {"fileData": inner}
    elif t == PartType.OTHER and d.get("kind") == OTHER_KIND and isinstance(d.get("raw"), dict):
        return dict(d["raw"])
    else:
        return None
    if "signature" in d:
        out["thoughtSignature"] = d["signature"]
    out.update(d.get("native") or {})
    return _ordered(out, d.get("keys"), default)


def _same(a: Any, b: Any) -> bool:
    """Equal, with every dict's keys in the same order (what JSON.stringify writes)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return a == b and type(a) is type(b)


def to_part(p: Any) -> Part:
    """One Gemini part as a Part; anything ``from_part`` would not give back exactly is kept whole."""
    part = _decode(p) if isinstance(p, dict) else None
    if part is None or not same(from_part(part), p):
        return Part.other(OTHER_KIND, p)
    return part


def to_parts(parts: Iterable[Any]) -> list[Part]:
    return [to_part(p) for p in parts]


def from_parts(parts: Iterable[Part]) -> list[dict[str, Any]]:
    """The Gemini parts of ``parts`` (those without a Gemini form are left out)."""
    return [g for g in (from_part(p) for p in parts) if g is not None]


def same(a: Any, b: Any) -> bool:
    """``a == b`` as JSON text would say (key order included): orjson's text of both (insertion
    order, ``true`` is not ``1``, ``1.0`` is not ``1``), else a walk (what orjson refuses)."""
    if _orjson is not None:
        try:
            return bool(_orjson.dumps(a) == _orjson.dumps(b))
        except (TypeError, _orjson.JSONEncodeError):
            pass
    return _same(a, b)
