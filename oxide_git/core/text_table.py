"""Text for people and scripts without click: aligned tables, clipped cells, JSON lists (the
CLI's output module re-exports them; the click-free forms of commands use them directly)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any


def json_lines_text(items: list[str]) -> str:
    """A JSON list from elements that are already JSON text, one per line."""
    body = ",\n".join(items)
    return f"[\n{body}\n]\n" if items else "[]\n"


def json_list_text(items: list[Any]) -> str:
    return json_lines_text([json.dumps(x, ensure_ascii=False, default=str) for x in items])


def clip(text: Any, width: int) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def table_text(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Aligned columns, a line per row under a line of headers."""
    cells = [tuple(map(str, r)) for r in rows]
    widths = [len(h) for h in headers]
    if cells:  # a row of another width fails here (strict)
        widths = [max(w, *map(len, col)) for w, col in zip(widths, zip(*cells, strict=True), strict=True)]
    line = "  ".join(f"{{:<{w}}}" for w in widths).format  # one call a row (10,000 rows: `list`)
    return "".join(line(*r).rstrip() + "\n" for r in (tuple(headers), *cells))
