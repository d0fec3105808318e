"""How the CLI prints: JSON for scripts, aligned tables for people, git-style messages on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click

from oxide_git.core.model import ago  # noqa: F401 - how long ago, as every command says it
from oxide_git.core.text_table import (  # noqa: F401 - re-exported
    clip,
    json_lines_text,
    json_list_text,
    table_text,
)
from oxide_git.export.render_text import counted  # noqa: F401 - re-exported


def emit_bytes(data: bytes) -> None:
    """Text already encoded (UTF-8), as it is."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)


def emit_json(obj: Any) -> None:
    """JSON on stdout; a list is written one element per line (readable, and each element goes
    through json's C encoder: `indent` would switch to the pure-Python one, 5x slower)."""
    sys.stdout.write(json_list_text(obj) if isinstance(obj, list) else json_text(obj))


def json_text(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n"


def stream_document(head: dict[str, Any], items: Iterable[dict[str, Any]], **fields: Any) -> None:
    """``{"session": head, <fields>, "messages": [...]}`` written item by item: a long session is
    never held in memory as one JSON document."""
    out = sys.stdout
    encode = _item_encoder()
    out.write('{"session": ' + encode(head))
    for k, v in fields.items():
        out.write(f', "{k}": ' + encode(v))
    out.write(', "messages": [')
    sep = "\n"
    chunk: list[str] = []
    size = 0
    for d in items:
        text = encode(d)
        chunk.append(text)
        size += len(text)
        if size >= _CHUNK:  # a few big writes, not one a message
            out.write(sep + ",\n".join(chunk))
            sep, chunk, size = ",\n", [], 0
    out.write((sep + ",\n".join(chunk) if chunk else "") + "\n]}\n")


_CHUNK = 1 << 18


def _item_encoder() -> Callable[[Any], str]:
    """``JSONEncoder(ensure_ascii=False, default=str).encode``, with json's C encoder made once
    rather than once a call (a third of the cost of a small message)."""
    from json import encoder as impl

    make = getattr(impl, "c_make_encoder", None)  # None without json's C speedups
    string = getattr(impl, "c_encode_basestring", None)
    if make is None or string is None:
        return json.JSONEncoder(ensure_ascii=False, default=str).encode
    # No circularity check (markers None): the items are decoded payloads, never cyclic.
    c = make(None, str, string, None, ": ", ", ", False, False, True)
    return lambda obj: "".join(c(obj, 0))


def status(msg: str) -> None:
    """A human message on stderr (data goes to stdout)."""
    click.echo(msg, err=True)


def warn(msg: str) -> None:
    click.echo(f"warning: {msg}", err=True)


def short(oid: str | None, n: int = 12) -> str:
    """The first ``n`` characters (a git commit such as HEAD, a message id)."""
    return (oid or "-")[:n]


_store: Any = None  # the Context whose index abbreviates ids (set by ``make_context``)
_abbrev: dict[str, Any] = {}


def use_store(ctx: Any) -> Any:
    """Abbreviate ids against ``ctx``'s index from now on; the store used until now."""
    global _store
    before, _store = _store, ctx
    _abbrev.clear()
    return before


FEW_IDS = 32  # ids printed one by one from their neighbours, before all are read at once


class _Ids:
    """The ids of one kind as they are shown: the first few each from its neighbours in the index
    (`show` names a session and a few forks: a lookup each, not 20,000 ids read), all of them at
    once past that (`list`). The same prefixes either way."""

    def __init__(self, index: Any, kind: str) -> None:
        self.index, self.kind = index, kind
        self.one: dict[str, str] = {}
        self.every: Any = None

    def of(self, oid: str) -> str:
        if self.every is None and len(self.one) < FEW_IDS:
            got = self.one.get(oid)
            if got is None:
                got = self.one[oid] = (self.index.session_prefix(oid) if self.kind == "session"
                                       else self.index.checkpoint_prefix(oid))
            return str(got)
        if self.every is None:
            sessions = self.kind == "session"
            self.every = self.index.session_abbrev() if sessions else self.index.checkpoint_abbrev()
        return str(self.every.of(oid))


def _abbreviated(kind: str, oid: str | None) -> str:
    if not oid:
        return "-"
    if _store is None:
        return oid[:12]
    ab = _abbrev.get(kind)
    try:
        if ab is None:
            ab = _abbrev[kind] = _Ids(_store.index, kind)
        return ab.of(oid)
    except Exception:  # no index to ask (not initialised, unreadable): a fixed cut
        return oid[:12]


def sid(oid: str | None) -> str:
    """A session id as people type it: its shortest unique prefix in this store (8 at least)."""
    return _abbreviated("session", oid)



def cid(oid: str | None) -> str:
    """A checkpoint id, abbreviated as git abbreviates commits (7 at least, unique)."""
    return _abbreviated("checkpoint", oid)


def refresh_ids() -> None:
    """Forget the abbreviations (after a command created sessions or checkpoints)."""
    _abbrev.clear()


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    click.echo(table_text(headers, rows), nl=False)
