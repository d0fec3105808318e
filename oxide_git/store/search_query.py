"""`search`: the words of a query as the search index's terms, its ranked hits filtered by the
session's agent and branch and the message's time, and a snippet of each (search_index.py ranks).
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from typing import TYPE_CHECKING, Any

from oxide_git.store import search_index
from oxide_git.store.index_ids import id_chunks

if TYPE_CHECKING:
    from oxide_git.store.index import Index

_TOKEN = re.compile(r"[^\W_]+")
_LONG = 4_000
_COLUMNS = ("session_id", "seq", "message_id", "role", "created_at")


def search(index: Index, query: str, limit: int = 50, *, offset: int = 0, agent: str | None = None,
           branch: str | None = None, since_ms: int | None = None, until_ms: int | None = None
           ) -> list[dict[str, Any]]:
    """Messages holding every word of ``query``, best first (BM25); ``agent``/``branch`` filter on
    the session, ``since_ms``/``until_ms`` on the message's time (else its session's)."""
    terms = query_terms(query)
    when = "coalesce(m.created_at, s.updated_at)"
    where, args = "", list[Any]()
    for cond, val in (("s.agent=?", agent), ("s.branch=?", branch), (f"{when}>=?", since_ms),
                      (f"{when}<?", until_ms)):
        if val is not None:
            where, args = f"{where} AND {cond}", [*args, val]
    want = offset + limit
    n = max(64, 2 * want)
    while True:  # ranked hits, filtered here; more asked for while the filters leave too few
        rids = _ranked(index, terms, n)
        found = _rows(index, rids, where, args)
        hits = [found[r] for r in rids if r in found]  # a hit whose row is gone is not one
        if len(hits) >= want or len(rids) < n:
            break
        n *= 4
    return [{**{k: h[k] for k in _COLUMNS}, "snippet": snippet(h["text"] or "", terms)}
            for h in hits[offset:want]]


def _ranked(index: Index, terms: list[list[str]], n: int) -> list[int]:
    for attempt in range(3):
        try:
            return search_index.ranked(index.db, index.path, terms, n)
        except (ValueError, OSError):
            if attempt == 2:
                raise
            # its files changed under this process (built anew by another): opened again; and if
            # that fails too, they are broken: built anew
            search_index.forget(index.path, note=attempt == 1)
    raise AssertionError("unreachable")


def _rows(index: Index, rids: list[int], where: str, args: list[Any]) -> dict[int, sqlite3.Row]:
    found: dict[int, sqlite3.Row] = {}
    for part, marks in id_chunks(rids):
        found.update((r["rid"], r) for r in index.query(
            "SELECT m.rowid AS rid, m.session_id, m.seq, m.id AS message_id, m.role, m.created_at, "
            "m.text FROM messages m LEFT JOIN sessions s ON s.id = m.session_id "
            f"WHERE m.rowid IN ({marks}){where}", [*part, *args]))
    return found


def query_terms(query: str) -> list[list[str]]:
    """Each word of ``query`` as the index's tokens (a word such as ``foo.bar`` is a phrase);
    words with no letter or digit are left out."""
    a = search_index.analyzer()
    return [t for t in (a.analyze(w) for w in query.split()) if t]


def snippet(text: str, terms: list[list[str]], width: int = 12) -> str:
    """``width`` words of ``text`` around the most query words, those in brackets, ``…`` where
    cut (what FTS5's ``snippet()`` printed). A long text (a tool's output) is cut first around
    the first place a word shows up in it, so that a hit costs the same whatever its size."""
    if len(text) > _LONG:
        low = text.lower()
        at = min((i for t in {t for phrase in terms for t in phrase} if (i := low.find(t)) >= 0), default=0)
        start, end = max(0, at - 200), min(len(text), at + 800)
        cut = _window(text[start:end], terms, width)
        return ("…" if start and not cut.startswith("…") else "") + cut + \
            ("…" if end < len(text) and not cut.endswith("…") else "")
    return _window(text, terms, width)


def _window(text: str, terms: list[list[str]], width: int) -> str:
    wanted = {t for phrase in terms for t in phrase}
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    if not spans:
        return text
    folded = [_fold(text[a:b]) for a, b in spans]
    hits = [i for i, f in enumerate(folded) if f in wanted][:200]
    best, best_n = 0, 0
    for h in hits:
        n = len({folded[i] for i in hits if h <= i < h + width})
        if n > best_n:
            best, best_n = h, n
    start = max(0, min(best - 2, len(spans) - width))
    end = min(len(spans), start + width)
    out, pos = [], spans[start][0] if start else 0
    for i in range(start, end):
        a, b = spans[i]
        out.append(text[pos:a])
        out.append(f"[{text[a:b]}]" if folded[i] in wanted else text[a:b])
        pos = b
    if end == len(spans):
        out.append(text[pos:])
    return ("…" if start else "") + "".join(out) + ("" if end == len(spans) else "…")


def _fold(token: str) -> str:
    if token.isascii():
        return token.lower()
    return "".join(search_index.analyzer().analyze(token)) or unicodedata.normalize("NFKD", token).lower()
