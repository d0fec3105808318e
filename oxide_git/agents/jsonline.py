"""One JSON value from a line of an agent's file, with the stdlib's exact results, faster.

orjson parses about 2.4 times faster than ``json`` (the parse is a quarter of an import), but it
refuses what ``json`` accepts (NaN, lone surrogates, numbers out of range: then ``json`` decides)
and turns integers beyond 64 bits into floats without a word. A line with 19 or more digits in a
row (found with one ``translate`` and one substring search, ~1 GB/s) goes to ``json`` directly.
A ``str`` (JSON held in a string field, like a Codex tool call's arguments) is read the same way.
"""

from __future__ import annotations

import json
from typing import Any

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - a dependency of the package
    _orjson = None

_DIGITS = bytes(0x39 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))  # digits -> "9", rest " "
_LONG_NUMBER = b"9" * 19


def loads(raw: bytes | str) -> Any:
    """``json.loads(raw)``: the same value or the same exception."""
    if _orjson is not None:
        data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
        if _LONG_NUMBER not in data.translate(_DIGITS):
            try:
                return _orjson.loads(raw)
            except _orjson.JSONDecodeError:
                pass
    return json.loads(raw)
