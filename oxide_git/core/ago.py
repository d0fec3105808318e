"""How long ago, as `list` and `blame` print it (stdlib only: the cached blame prints it too)."""

from __future__ import annotations


def ago_secs(secs: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{int(secs // size)}{unit} ago"
    return "just now"


def ago_ms(when_ms: int, now_ms: int) -> str:
    return ago_secs(max(0, (now_ms - when_ms) / 1000))
