"""Which lines of a file's newer version were already in an older one, by git's own line diff
(xdiff, as ``git diff`` and ``git blame`` use it; no text matching of our own).

``Diff(old, new)`` holds the hunks (no context lines); ``trace`` maps line numbers of ``new``
(0-based) to those of ``old``, or says the line was added there. ``hunks``/``of_hunks``: the same
as plain lists, as ``blame.memo`` keeps them.

The hunks are libgit2's (``Patch.create_from``: Myers, no indent heuristic, binary as text). A diff
that is not only lines added or removed is asked of ``git diff --no-index`` with those same
options and no configuration (git's xdiff is the one libgit2 carries: the same hunks, checked in
tests/blame/test_blame_diff.py), ~3 ms of a process against ~40 ms to import pygit2, for the first
``GIT_DIFFS`` diffs of a process (``line_hunks``); libgit2 past them, or when git does not answer.
"""

from __future__ import annotations

import contextlib
import os
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

Text = bytes | str | None


class Diff:
    """The line hunks that turn ``old`` into ``new`` (bytes or texts; None is no file)."""

    __slots__ = ("_delta", "_ends", "_starts")

    def __init__(self, old: Text, new: Text) -> None:
        a = old.encode("utf-8", "surrogateescape") if isinstance(old, str) else (old or b"")
        b = new.encode("utf-8", "surrogateescape") if isinstance(new, str) else (new or b"")
        # The lines both versions share at their start and their end are not diffed (xdiff trims
        # them too, after hashing every line of both): only the changed middle goes to libgit2.
        head, tail = _common_ends(a, b)
        first = a.count(b"\n", 0, head)
        mid_a, mid_b = a[head:len(a) - tail], b[head:len(b) - tail]
        starts: list[int] = []
        ends: list[int] = []
        delta = [0]
        if not mid_a or not mid_b:
            n_a, n_b = count_lines(mid_a), count_lines(mid_b)
            if n_a or n_b:  # only added, or only removed, lines
                starts, ends, delta = [first], [first + n_b], [0, n_a - n_b]
        else:
            for _old_start, old_lines, new_start, new_lines in line_hunks(mid_a, mid_b):
                s = first + (new_start - 1 if new_lines else new_start)
                starts.append(s)
                ends.append(s + new_lines)
                delta.append(delta[-1] + old_lines - new_lines)
        self._starts, self._ends, self._delta = starts, ends, delta

    @classmethod
    def of_hunks(cls, starts: list[int], ends: list[int], delta: list[int]) -> Diff:
        """The diff whose ``hunks()`` these are."""
        d = cls.__new__(cls)
        d._starts, d._ends, d._delta = starts, ends, delta
        return d

    def hunks(self) -> tuple[list[int], list[int], list[int]]:
        """(first line of each hunk in new, its end, the line shift after each), as plain lists."""
        return self._starts, self._ends, self._delta

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

    def trace_sorted(self, positions: list[int]) -> tuple[list[int], list[int]]:
        """For ascending ``positions`` of new: the old line of each, or -1 where it was added
        (mapped a run at a time between hunks), and the indexes of the added ones."""
        out: list[int] = []
        added: list[int] = []
        at = 0
        for k, (s, e) in enumerate(zip(self._starts, self._ends, strict=True)):
            i1 = bisect_left(positions, s, at)
            out += _shifted(positions, at, i1, self._delta[k])
            i2 = bisect_left(positions, e, i1)
            out += [-1] * (i2 - i1)
            added += range(i1, i2)
            at = i2
        out += _shifted(positions, at, len(positions), self._delta[-1])
        return out, added

    @property
    def unchanged(self) -> bool:
        return not self._starts and self._delta == [0]


Hunk = tuple[int, int, int, int]  # old start, old lines, new start, new lines (as in "@@ -a,b +c,d @@")


# `git diff` for the first few diffs of a process (a blame after a change needs one or two), pygit2
# past them: ~3 ms a process each against ~40 ms once for the import (the very first blame of a
# history, every memo empty, may need hundreds). The hunks are the same either way.
GIT_DIFFS = 10
_git_diffs = 0


def line_hunks(a: bytes, b: bytes) -> list[Hunk]:
    """The hunks of ``a`` to ``b`` (libgit2's), by `git diff` while a process has run fewer than
    ``GIT_DIFFS`` of them, else (or when git does not answer) by libgit2."""
    global _git_diffs
    if _git_diffs < GIT_DIFFS:
        _git_diffs += 1
        got = git_hunks(a, b)
        if got is not None:
            return got
    return libgit2_hunks(a, b)


def forget() -> None:
    """Count the diffs asked of git afresh (a process that goes on, at a new command)."""
    global _git_diffs
    _git_diffs = 0


def libgit2_hunks(a: bytes, b: bytes) -> list[Hunk]:
    """The hunks of ``a`` to ``b`` by libgit2 (FORCE_TEXT: as `git blame`, binary files by "line")."""
    import pygit2

    patch = pygit2.Patch.create_from(a, b, flag=pygit2.enums.DiffOption.FORCE_TEXT, context_lines=0,
                                     interhunk_lines=0)
    return [(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in patch.hunks]


# libgit2's defaults, spelled out: no configuration (neither the user's nor a repository's) moves them
_GIT_DIFF = ("git", "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "--text",
             "--diff-algorithm=myers", "--no-indent-heuristic", "-U0", "--inter-hunk-context=0", "--")


def git_hunks(a: bytes, b: bytes) -> list[Hunk] | None:
    """``libgit2_hunks(a, b)`` by `git diff --no-index` of the two as files in a folder of their
    own; None when git does not answer (or no folder can be made)."""
    import re
    import subprocess

    try:
        d = _folder()
    except OSError:
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CEILING_DIRECTORIES=os.path.dirname(d))  # no repository's configuration either
    try:
        for name, data in (("a", a), ("b", b)):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        p = subprocess.run([*_GIT_DIFF, "a", "b"], cwd=d, env=env, capture_output=True)
    except OSError:
        return None
    finally:
        for name in ("a", "b"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, name))
        with contextlib.suppress(OSError):
            os.rmdir(d)
    if p.returncode not in (0, 1):
        return None
    return [(int(m[1]), 1 if m[2] is None else int(m[2]), int(m[3]), 1 if m[4] is None else int(m[4]))
            for m in re.finditer(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", p.stdout, re.M)]


def _folder() -> str:
    """A new private folder under $TMPDIR (``tempfile`` would cost ~3 ms of imports)."""
    base = os.environ.get("TMPDIR") or "/tmp"
    while True:
        d = os.path.join(base, f"oxide-diff-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
        return d


def _shifted(positions: list[int], i: int, j: int, d: int) -> list[int]:
    """``positions[i:j]``, each plus ``d`` (the runs between hunks: most lines of a file)."""
    return positions[i:j] if d == 0 else list(map(d.__add__, positions[i:j]))


def _common_ends(a: bytes, b: bytes) -> tuple[int, int]:
    """Bytes of whole lines ``a`` and ``b`` share at their start, then at their end (not
    overlapping): a binary search comparing only the half not yet known equal (memcmp)."""
    n = min(len(a), len(b))
    lo, hi = 0, n  # a[:lo] == b[:lo] is known
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    head = lo if lo == len(a) == len(b) else a.rfind(b"\n", 0, lo) + 1
    if head == len(a) and head == len(b):
        return head, 0
    la, lb = len(a), len(b)
    lo, hi = 0, n - head  # a[la - lo:] == b[lb - lo:] is known
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    tail = lo
    if tail and not (_line_start(a, la - tail, head) and _line_start(b, lb - tail, head)):
        nl = a.find(b"\n", la - tail)
        tail = la - nl - 1 if nl >= 0 else 0
    return head, tail


def _line_start(data: bytes, at: int, head: int) -> bool:
    return at == head or data[at - 1:at] == b"\n"


def count_lines(data: bytes) -> int:
    """Lines as git counts them (a last line without a newline is a line)."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


SAME = Diff(b"", b"")  # two versions with the same blob: every line kept
