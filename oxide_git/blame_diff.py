"""Which lines of a file's newer version were already in an older one, by git's own line diff
(libgit2's xdiff, as ``git diff`` and ``git blame`` use it; no text matching of our own).

``Diff(old, new)`` holds the hunks (no context lines); ``trace`` maps line numbers of ``new``
(0-based) to those of ``old``, or says the line was added there.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

import pygit2

_FORCE_TEXT = int(pygit2.enums.DiffOption.FORCE_TEXT)  # as `git blame`, binary files by "line"

Text = pygit2.Blob | bytes | str | None


class Diff:
    """The line hunks that turn ``old`` into ``new`` (blobs or texts; None is no file)."""

    __slots__ = ("_ends", "_starts", "_delta")

    def __init__(self, old: Text, new: Text) -> None:
        starts, ends, delta = [], [], [0]
        if old is None or new is None or (not _size(old)) or (not _size(new)):
            n = _lines(new)  # one side empty: every line of new is new
            if n:
                starts, ends, delta = [0], [n], [0, -n]
        else:
            if isinstance(old, str):
                old = old.encode("utf-8", "surrogateescape")
            if isinstance(new, str):
                new = new.encode("utf-8", "surrogateescape")
            patch = pygit2.Patch.create_from(old, new, flag=_FORCE_TEXT, context_lines=0, interhunk_lines=0)
            for h in patch.hunks:
                s = h.new_start - 1 if h.new_lines else h.new_start
                starts.append(s)
                ends.append(s + h.new_lines)
                delta.append(delta[-1] + h.old_lines - h.new_lines)
        self._starts, self._ends, self._delta = starts, ends, delta

    def old_line(self, line: int) -> int | None:
        """Where line ``line`` of new was in old; None: it was added."""
        k = bisect_right(self._ends, line)
        if k < len(self._starts) and self._starts[k] <= line:
            return None
        return line + self._delta[k]

    def trace(self, lines: Iterable[int]) -> tuple[dict[int, int], list[int]]:
        """(new line -> old line for the lines that were there, the lines that were added)."""
        kept: dict[int, int] = {}
        added: list[int] = []
        for ln in lines:
            old = self.old_line(ln)
            if old is None:
                added.append(ln)
            else:
                kept[ln] = old
        return kept, added

    @property
    def unchanged(self) -> bool:
        return not self._starts and self._delta == [0]


def _size(t: Text) -> int:
    if t is None:
        return 0
    if isinstance(t, pygit2.Blob):
        return int(t.size)
    return len(t)


def _lines(t: Text) -> int:
    if t is None:
        return 0
    data = t.data if isinstance(t, pygit2.Blob) else (t.encode("utf-8", "surrogateescape") if isinstance(t, str) else t)
    return count_lines(data)


def count_lines(data: bytes) -> int:
    """Lines as git counts them (a last line without a newline is a line)."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
