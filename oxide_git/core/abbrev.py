"""Shortest unique id prefixes, as git abbreviates object names (with a minimum length).

An id is shown by the fewest leading characters that no other object's key starts with; the keys
of one object (a session's oxide id and its agent's own id) do not compete with each other.
Pure: the keys arrive as arguments.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable

MIN_LENGTH = 8
_SHARED = "\0"  # the owner of a key two owners have: no owner's own


def _lcp(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class Abbreviator:
    """``of(id)``: the shortest prefix of ``id`` that matches no key of another owner."""

    def __init__(self, keys: Iterable[tuple[str, str]], minimum: int = MIN_LENGTH) -> None:
        owner_of: dict[str, str] = {}
        for k, owner in keys:
            if k and owner_of.setdefault(k, owner) != owner:
                owner_of[k] = _SHARED  # matches every owner's key in full: no prefix of it is unique
        self._keys = sorted(owner_of)  # strings, not pairs: 20,000 keys sort in a few ms
        self._owners = [owner_of[k] for k in self._keys]
        self._min = minimum
        self._cache: dict[str, str] = {}

    def length(self, oid: str, owner: str | None = None) -> int:
        owner = oid if owner is None else owner
        keys, owners, least = self._keys, self._owners, self._min
        i = bisect_left(keys, oid)
        need = 0
        for step, start in ((1, i), (-1, i - 1)):
            j = start
            while 0 <= j < len(keys):
                if owners[j] != owner:
                    if keys[j][:least] == oid[:least]:  # else they part within the minimum
                        need = max(need, _lcp(oid, keys[j]) + 1)
                    break
                j += step
        return min(len(oid), max(least, need))

    def of(self, oid: str | None) -> str:
        if not oid:
            return "-"
        got = self._cache.get(oid)
        if got is None:
            got = self._cache[oid] = oid[: self.length(oid)]
        return got


def fixed(n: int = 12) -> Callable[[str | None], str]:
    return lambda oid: (oid or "-")[:n]
