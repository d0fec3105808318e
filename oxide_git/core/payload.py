"""A msgpack payload read and checked, as plain values: what ``codec`` decodes into the model, and
what ``blame`` reads of a message without building it (its model name and its parts as dicts).
With ``codec``, the only module that imports msgpack; it imports neither the model nor dataclasses.
"""

from __future__ import annotations

from typing import Any

import msgpack

from oxide_git.core.errors import UnsupportedPayload
from oxide_git.core.log_layout import SCHEMA_VERSION

# A session log or a remote may hand us anything. msgpack bounds every container and string by
# the input's own length, so a payload cannot unpack to more than it is; we bound the input.
MAX_PAYLOAD = 256 * 1024 * 1024


def unpack(data: bytes, what: str) -> dict[str, Any]:
    """The payload's map (its ``v`` still in it); UnsupportedPayload when it is not one this build
    reads."""
    if len(data) > MAX_PAYLOAD:
        raise UnsupportedPayload(f"{what} is larger than {MAX_PAYLOAD} bytes")
    try:
        obj = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException, TypeError) as e:
        raise UnsupportedPayload(f"{what} is not a valid payload: {e}") from e
    if not isinstance(obj, dict) or not isinstance(obj.get("v"), int):
        raise UnsupportedPayload(f"{what} is not a git oxide payload")
    if obj["v"] > SCHEMA_VERSION:
        raise UnsupportedPayload(
            f"{what} has schema version {obj['v']}, newer than this build ({SCHEMA_VERSION})",
            hint="upgrade git oxide",
        )
    return obj


def message_parts(data: bytes) -> tuple[Any, list[Any]]:
    """Of a message payload, what ``codec.decode_message`` makes its ``model`` and its ``parts``
    (each as the map ``Part.from_dict`` reads; ``part_type`` and ``part_get`` read one as a
    ``Part`` would), checked as it checks them: no model objects built."""
    obj = unpack(data, "message")
    parts = obj.get("parts") or []
    if not isinstance(obj.get("role"), str) or not isinstance(parts, list):
        raise UnsupportedPayload("message payload lacks role or parts")
    return obj.get("model"), parts


def part_type(part: Any) -> str:
    """``Part.type`` of a part as ``message_parts`` gives it (one that is not a map is a bad
    ``other`` part, as the codec makes it)."""
    return str(part.get("type", "other")) if isinstance(part, dict) else "other"


def part_get(part: Any, key: str) -> Any:
    """``Part.get(key)`` of a part as ``message_parts`` gives it."""
    if not isinstance(part, dict):
        return {"kind": "bad", "raw": part}.get(key)
    return None if key == "type" else part.get(key)
