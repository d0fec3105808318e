"""How the CLI prints: JSON for scripts, aligned tables for people, git-style messages on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import click


def emit_json_lines(items: list[str]) -> None:
    """A JSON list from elements that are already JSON text, one per line."""
    body = ",\n".join(items)
    sys.stdout.write(f"[\n{body}\n]\n" if items else "[]\n")


def emit_json(obj: Any) -> None:
    """JSON on stdout; a list is written one element per line (readable, and each element goes
    through json's C encoder: `indent` would switch to the pure-Python one, 5x slower)."""
    if isinstance(obj, list):
        emit_json_lines([json.dumps(x, ensure_ascii=False, default=str) for x in obj])
        return
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def stream_document(head: dict[str, Any], items: Iterable[dict[str, Any]], **fields: Any) -> None:
    """``{"session": head, <fields>, "messages": [...]}`` written item by item: a long session is
    never held in memory as one JSON document."""
    out = sys.stdout
    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode  # one encoder, not one a line
    out.write('{"session": ' + encode(head))
    for k, v in fields.items():
        out.write(f', "{k}": ' + encode(v))
    out.write(', "messages": [')
    sep = "\n"
    for d in items:
        out.write(sep + encode(d))
        sep = ",\n"
    out.write("\n]}\n")


def status(msg: str) -> None:
    """A human message on stderr (data goes to stdout)."""
    click.echo(msg, err=True)


def warn(msg: str) -> None:
    click.echo(f"warning: {msg}", err=True)


def short(oid: str | None, n: int = 12) -> str:
    return (oid or "-")[:n]


def ago(iso: str | None, now_ms: int) -> str:
    if not iso:
        return "-"
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    secs = max(0, now_ms / 1000 - t.replace(tzinfo=t.tzinfo or UTC).timestamp())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{int(secs // size)}{unit} ago"
    return "just now"


def clip(text: Any, width: int) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    rows = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    click.echo(line.rstrip())
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
