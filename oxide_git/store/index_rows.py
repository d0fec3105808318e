"""The index's rows of messages, worked out from the messages alone (pure: an import's parser
process computes them, the writer only inserts them): the ``messages`` and ``parts`` tables'
columns, as one JSON array per table, which ``Index.put_rows`` inserts in one statement each."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from oxide_git.core.model import PartType

if TYPE_CHECKING:
    from oxide_git.core.model import Message

FTS_TEXT_LIMIT = 64 * 1024  # of a message's text, what is indexed for search

# The index rows of some messages, per table: (columns, JSON array of rows); 0 columns: no rows.
Rows = tuple[tuple[int, str], tuple[int, str]]


def message_rows(puts: Mapping[int, Message]) -> Rows:
    """The ``messages`` and ``parts`` rows of the messages by seq (without the session id), as
    ``put_rows`` takes them. Pure: an import's parser process computes them."""
    messages = []
    for q, m in puts.items():
        text = m.text()[:FTS_TEXT_LIMIT]
        messages.append((q, m.id, m.role, m.created_at, m.native_id, int(m.compacted), int(m.is_compaction()),
                         text, m.model, is_real(m, text)))
    parts = [(q, i, p.type, p.get("call_id"), p.get("name"),
              int(bool(p.get("is_error"))) if p.type == PartType.TOOL_RESULT else None)
             for q, m in puts.items() for i, p in enumerate(m.parts)]
    return ((len(messages[0]) if messages else 0, _json_rows(messages)),
            (len(parts[0]) if parts else 0, _json_rows(parts)))


def is_real(m: Message, text: str) -> int:
    """1 when the message holds more than records kept whole: a part that is not ``other``, and
    for text parts, text that is not only blanks (``text``: the message's indexed text)."""
    return int(any(p.type != PartType.OTHER and (p.type != PartType.TEXT or text.strip(" \t\n\r"))
                   for p in m.parts))


def _json_rows(rows: list[tuple[Any, ...]]) -> str:
    if len(rows) >= 256:  # an import's batch: orjson writes it 6x faster than json
        try:
            import orjson  # not loaded for the few rows of a hook's append

            return str(orjson.dumps(rows, default=str), "utf-8")
        except (ImportError, TypeError):  # text that is not UTF-8 (a lone surrogate): json writes it
            pass
    return json.dumps(rows, ensure_ascii=False, default=str)
