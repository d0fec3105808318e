"""A restart point's state whose long lists are shared, not copied (for the log parsers).

A parser that emits a ``Resumable`` before every message, with a state holding lists that grow
with the session (Gemini CLI's history ids, Qwen Code's record uuids), would copy them each time:
O(n^2) for a file of n messages. ``State`` keeps the small fields copied and each list by its
length at that point: the lists are only ever appended to (a parser that shortens one makes a new
list), so ``items[:n]`` is what it held then. The importer materialises the last one it keeps
(``dict(state)``). Pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class State(Mapping[str, Any]):
    def __init__(self, small: dict[str, Any], lists: dict[str, tuple[list[Any], int]]) -> None:
        self._small, self._lists = small, lists

    def __getitem__(self, key: str) -> Any:
        if key in self._lists:
            items, n = self._lists[key]
            return items[:n]
        return self._small[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._small
        yield from self._lists

    def __len__(self) -> int:
        return len(self._small) + len(self._lists)
