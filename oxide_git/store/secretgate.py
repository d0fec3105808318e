"""A cheap test that a message cannot hold a secret, run on its encoded (msgpack) bytes.

Redacting walks every string of a message and costs ~90 µs per message; almost no message has
anything to redact. The gate looks for every rule's literal hints in the lowercased msgpack bytes
in one multi-pattern scan (Aho-Corasick, ``ahocorasick_rs``: hundreds of MB/s), and for the hints
that are ordinary words (``token``, ``secret``, ``password``…) it also checks what follows them:
a rule can only fire when an assignment (``=``/``:``) or a string value follows the word. When the
gate says no, no rule of ``redact.Redactor`` could match any string of the message; when it says
maybe, the full walk decides. It may say maybe wrongly (that costs time), never no wrongly.

Why bytes are enough: msgpack stores a string as its raw UTF-8, so a hint inside a string is a
hint in the blob, and the ASCII characters around it are the string's own. ``bytes.lower`` only
lowers ASCII; the four non-ASCII characters that ``str.lower`` or ``re.I`` turn into ASCII letters
(İ ı ſ K) make the gate say maybe. A string's end is followed by another item's header byte; the
tail checks accept every header byte that could start a string value (0xa4-0xbf, 0xd9-0xdb).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_acr: Any
try:  # a Rust multi-pattern scan (SIMD prefilter, then a DFA); ``_all`` is the fallback
    import ahocorasick_rs as _acr
except ImportError:  # pragma: no cover - a dependency of the package
    _acr = None

# What must follow a hint for a rule to have a chance (``Rule.tail``).
URL_TAIL = "url"  # `://user:password@`
PASSWORD_TAIL = "password"  # a word naming a password: an assignment, or a key of a string value
SECRET_TAIL = "secret"  # the same for secrets, whose values are judged only from 12 characters on

_URL = re.compile(rb"[^\t-\r\x1c-\x1f :/@\[\]]+:[^\t-\r\x1c-\x1f /@\[\]]+@")
# More name characters, then either `=` or `:` (maybe after a quote and whitespace; 0xc2/0xe1/0xe2/
# 0xe3 start the non-ASCII whitespace that `\s` also matches), or the header of a string.
_AFTER_NAME = re.compile(rb"[a-z0-9_.\-]*(?:([\"']?[\t-\r\x1c-\x1f ]*[=:\xc2\xe1\xe2\xe3])"
                         rb"|[\xa4-\xbf\xd9-\xdb])")
_NAME = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.-")  # what a key naming a secret is made of
_STR8, _STR16, _STR32 = 0xD9, 0xDA, 0xDB
# Shortest string value that a key rule judges: passwords from 4 characters, secrets from 12.
_MIN_VALUE = {PASSWORD_TAIL: 4, SECRET_TAIL: 12}
# Characters that lower() or re.I turn into ASCII letters: the gate cannot reason about them.
UNICODE_FOLDS = tuple(c.encode() for c in "\u0130\u0131\u017f\u212a")


class Gate:
    """``maybe(blob)``: could any rule match a string encoded in ``blob``?"""

    def __init__(self, hints: Iterable[tuple[str, str | None]]) -> None:
        tails: dict[bytes, set[str | None]] = {}
        for hint, tail in hints:
            tails.setdefault(hint.lower().encode(), set()).add(tail)
        for raw in UNICODE_FOLDS:
            tails.setdefault(raw, set()).add(None)
        self.patterns = list(tails)
        self.tails = [frozenset(t) for t in tails.values()]
        self._ac = (_acr.BytesAhoCorasick(self.patterns, implementation=_acr.Implementation.DFA)
                    if _acr is not None else None)

    def maybe(self, blob: bytes) -> bool:
        low = blob.lower()
        for i, start, end in self._matches(low):
            if any(_follows(tail, low, start, end) for tail in self.tails[i]):
                return True
        return False

    def _matches(self, low: bytes) -> Iterable[tuple[int, int, int]]:
        if self._ac is not None:
            return self._ac.find_matches_as_indexes(low, overlapping=True)
        return ((i, at, at + len(p)) for i, p in enumerate(self.patterns) for at in _all(low, p))


def _follows(tail: str | None, low: bytes, start: int, end: int) -> bool:
    """Does what surrounds the hint at ``low[start:end]`` leave its rule a chance?"""
    if tail is None:
        return True
    if tail == URL_TAIL:
        return _URL.match(low, end) is not None
    m = _AFTER_NAME.match(low, end)
    if m is None:  # `input_tokens` followed by a number: the common case, decided in C
        return False
    return m.group(1) is not None or _key_of_value(low, start, end, _MIN_VALUE[tail])


def _key_of_value(low: bytes, start: int, end: int, min_len: int) -> bool:
    """Could ``low[start:end]`` lie in a dict key made of name characters only, whose value is a
    string of at least ``min_len`` bytes? Exact when the key is a short string (fixstr header, the
    common case); otherwise it only asks whether a string header follows the name."""
    k = start
    while k > 0 and low[k - 1] in _NAME:
        k -= 1
    q = end
    while q < len(low) and low[q] in _NAME:
        q += 1
    header = low[k - 1] if k > 0 else -1
    longer = _STR8 in low[max(0, k - 2):k] or _STR16 in low[max(0, k - 3):k] or _STR32 in low[max(0, k - 5):k]
    if 0xA0 <= header <= 0xBF and not longer:  # a fixstr key: its length says where it ends
        key_end = k + (header & 0x1F)
        if key_end < end or key_end > q or key_end >= len(low):
            return False
        return _string_header(low[key_end], min_len)
    return q < len(low) and _string_header(low[q], min_len)


def _string_header(byte: int, min_len: int) -> bool:
    return 0xA0 + min_len <= byte <= 0xBF or byte in (_STR8, _STR16, _STR32)


def _all(low: bytes, p: bytes) -> Iterable[int]:
    at = low.find(p)
    while at >= 0:
        yield at
        at = low.find(p, at + 1)
