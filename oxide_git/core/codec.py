"""Sessions and messages to and from msgpack; with ``payload`` (which reads and checks a payload
as plain values), the only module that imports msgpack.

Every payload is a map whose ``v`` field is the schema version. Keys this build does not know are
kept in ``unknown`` and written back unchanged, so an older build never drops a newer build's data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import msgpack

from oxide_git.core.errors import UnsupportedPayload
from oxide_git.core.model import Message, Part, Session
from oxide_git.core.payload import MAX_PAYLOAD as MAX_PAYLOAD
from oxide_git.core.payload import SCHEMA_VERSION
from oxide_git.core.payload import unpack as _unpack

_SESSION_FIELDS = [f.name for f in dataclasses.fields(Session) if f.name != "unknown"]
_MESSAGE_FIELDS = [f.name for f in dataclasses.fields(Message) if f.name not in ("unknown", "parts")]


def _as_plain(obj: Any) -> Any:
    # msgpack packs dicts, lists and tuples itself; only other mappings need a hand.
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(f"cannot encode {type(obj).__name__}")


def _pack(d: dict[str, Any]) -> bytes:
    return bytes(msgpack.packb(d, use_bin_type=True, default=_as_plain))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def session_to_dict(s: Session) -> dict[str, Any]:
    d = {**_plain(s.unknown), **{k: _plain(getattr(s, k)) for k in _SESSION_FIELDS}}
    return d


def message_to_dict(m: Message) -> dict[str, Any]:
    d = {**_plain(m.unknown), **{k: _plain(getattr(m, k)) for k in _MESSAGE_FIELDS}}
    d["parts"] = [_plain(p.to_dict()) for p in m.parts]
    return d


def encode_session(s: Session) -> bytes:
    return _pack({"v": SCHEMA_VERSION, **session_to_dict(s)})


def encode_message(m: Message) -> bytes:
    return encode_message_scan(m)[0]


_HEAD_FIELDS = [k for k in _MESSAGE_FIELDS if k != "extra"]
_MESSAGE_KEYS = frozenset(("v", "parts", *_MESSAGE_FIELDS))


def encode_message_scan(m: Message) -> tuple[bytes, bytes]:
    """``encode_message(m)`` (the same bytes) and the part of them that redaction reads: parts,
    ``extra`` and ``unknown``, not the id, times, model or token usage (whose key names would look
    like secrets to ``secretgate``). A msgpack map is a header and its entries, so three maps' entries
    under one header are the one map."""
    if m.unknown and not _MESSAGE_KEYS.isdisjoint(m.unknown):  # keys would merge: the plain way
        blob = _pack({"v": SCHEMA_VERSION, **message_to_dict(m)})
        return blob, blob
    fields = {k: getattr(m, k) for k in _HEAD_FIELDS}
    n3, body = _entries({"extra": m.extra, "parts": [p.to_dict() for p in m.parts]})
    if not m.unknown:  # the usual case: "v" and the fields in one map, nothing of it to scan
        n2, head = _entries({"v": SCHEMA_VERSION, **fields})
        return _map_header(n2 + n3) + head + body, body
    n1, unknown = _entries({"v": SCHEMA_VERSION, **m.unknown})
    n2, head = _entries(fields)
    return _map_header(n1 + n2 + n3) + unknown + head + body, unknown + body


def _entries(d: dict[str, Any]) -> tuple[int, bytes]:
    b = _pack(d)
    first = b[0]
    if first & 0xF0 == 0x80:
        return first & 0x0F, b[1:]
    if first == 0xDE:
        return int.from_bytes(b[1:3], "big"), b[3:]
    return int.from_bytes(b[1:5], "big"), b[5:]


def _map_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x80 | n,))
    if n < 0x10000:
        return b"\xde" + n.to_bytes(2, "big")
    return b"\xdf" + n.to_bytes(4, "big")


def _split(obj: dict[str, Any], known: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    obj.pop("v", None)
    kw = {k: obj.pop(k) for k in known if k in obj}
    return kw, obj


def session_from_dict(obj: dict[str, Any]) -> Session:
    kw, unknown = _split(dict(obj), _SESSION_FIELDS)
    if not isinstance(kw.get("id"), str) or not isinstance(kw.get("agent"), str):
        raise UnsupportedPayload("session payload lacks id or agent")
    for key in ("redactions", "source", "extra"):
        if not isinstance(kw.get(key, {}), dict):
            kw[key] = {}
    return Session(**kw, unknown=unknown)


def message_from_dict(obj: dict[str, Any]) -> Message:
    kw, unknown = _split(dict(obj), [*_MESSAGE_FIELDS, "parts"])
    parts = kw.pop("parts", None) or []
    if not isinstance(kw.get("role"), str) or not isinstance(parts, list):
        raise UnsupportedPayload("message payload lacks role or parts")
    if not isinstance(kw.get("extra", {}), dict):
        kw["extra"] = {}
    kw["parts"] = tuple(Part.from_dict(p) if isinstance(p, dict) else Part.other("bad", p) for p in parts)
    return Message(**kw, unknown=unknown)


def decode_session(data: bytes) -> Session:
    return session_from_dict(_unpack(data, "session.msgpack"))


def decode_message(data: bytes) -> Message:
    return message_from_dict(_unpack(data, "message"))


def decode_message_dict(data: bytes) -> dict[str, Any]:
    """A message payload as the plain dict ``message_to_dict`` wrote (for JSON output: no model
    objects in between). Validated like ``decode_message``."""
    obj = _unpack(data, "message")
    obj.pop("v", None)
    if not isinstance(obj.get("role"), str) or not isinstance(obj.get("parts"), list):
        raise UnsupportedPayload("message payload lacks role or parts")
    return obj


def pack_state(obj: Any) -> bytes:
    """Small versioned records (undo journal, cursors) in the same encoding."""
    return _pack({"v": SCHEMA_VERSION, "data": obj})


def unpack_state(data: bytes) -> Any:
    return _unpack(data, "state").get("data")
