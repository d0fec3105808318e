"""Paging of `git oxide mcp`'s answers: a page of items clipped to the answer's size, and the opaque
cursor an agent hands back to go on."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from oxide_git.core.errors import OxideError

MAX_CHARS = 20_000  # characters of JSON per result, about 5,000 tokens: well under agents' limits


class BadCursor(OxideError):
    pass


def make_cursor(tool: str, **state: Any) -> str:
    raw = json.dumps({"tool": tool, **state}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def read_cursor(tool: str, args: dict[str, Any], shape: dict[str, Any]) -> dict[str, Any] | None:
    """The state saved in ``args["cursor"]`` (None without one), which must hold ``shape``'s keys
    with values of its types (a cursor is the agent's to pass back, not to make up)."""
    cursor = args.get("cursor")
    if not cursor:
        return None
    try:
        d = json.loads(base64.urlsafe_b64decode(str(cursor) + "=" * (-len(str(cursor)) % 4)))
    except (ValueError, binascii.Error):
        d = None
    if not isinstance(d, dict) or d.get("tool") != tool or set(d) != {"tool", *shape} or any(
            isinstance(d[k], bool) is not (t is bool) or not isinstance(d[k], t) for k, t in shape.items()):
        raise BadCursor(f"this cursor was not given by {tool}",
                        hint=f"pass next_cursor of an earlier {tool} result, unchanged")
    return {k: v for k, v in d.items() if k != "tool"}


class Page:
    """Items up to a count and ``MAX_CHARS`` of JSON; the first item always fits (callers clip
    what they add to ``room``)."""

    def __init__(self, limit: int, used: int = 0) -> None:
        self.limit = limit
        self.items: list[dict[str, Any]] = []
        self.size = used + 200  # the result's own keys and the cursor

    @property
    def room(self) -> int:
        return max(MAX_CHARS - self.size, 1_000)

    def add(self, item: dict[str, Any]) -> bool:
        n = len(json.dumps(item, ensure_ascii=False, default=str))
        if self.items and (len(self.items) >= self.limit or self.size + n > MAX_CHARS):
            return False
        self.items.append(item)
        self.size += n
        return True


def clip(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    return text[:room] + f"\n… ({len(text) - room} more characters)"


def limit_of(args: dict[str, Any], default: int, most: int) -> int:
    try:
        n = int(args.get("limit") or default)
    except (TypeError, ValueError):
        raise OxideError(f"limit {args.get('limit')!r} is not a number") from None
    return max(1, min(n, most))
