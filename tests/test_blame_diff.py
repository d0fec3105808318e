"""``blame_diff``: the line map of a diff, a run at a time (``trace_sorted``) as a line at a time
(``old_line``), against libgit2's own hunks of the whole texts; and ``blame_timeline.runs``."""

from __future__ import annotations

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from oxide_git.blame_diff import Diff
from oxide_git.blame_timeline import runs

# few distinct lines, so that versions share many of them and hunks slide among equal lines
_lines = st.lists(st.sampled_from(["a", "b", "c", "", "d e"]), max_size=30)


def _text(lines: list[str]) -> bytes:
    return "".join(f"{ln}\n" for ln in lines).encode()


@settings(max_examples=400, deadline=None)
@given(_lines, _lines)
def test_every_line_maps_as_one_diff_says(old: list[str], new: list[str]) -> None:
    a, b = _text(old), _text(new)
    d = Diff(a, b)
    mapped = [d.old_line(i) for i in range(len(new))]
    kept = [(i, o) for i, o in enumerate(mapped) if o is not None]
    # a kept line is the same text, in the same order, and the added ones are all the others
    assert all(new[i] == old[o] for i, o in kept)
    assert [o for _, o in kept] == sorted({o for _, o in kept})
    # as many lines added as a diff of the whole texts adds (trimming the ends changes no count)
    whole = pygit2.Patch.create_from(a, b, context_lines=0)
    assert len(new) - len(kept) == sum(h.new_lines for h in whole.hunks)
    # the run-at-a-time map agrees with the line-at-a-time one, for any ascending subset
    for positions in (list(range(len(new))), list(range(0, len(new), 3))):
        out, added = d.trace_sorted(positions)
        assert out == [-1 if mapped[p] is None else mapped[p] for p in positions]
        assert added == [j for j, p in enumerate(positions) if mapped[p] is None]


def test_runs_of_ascending_integers() -> None:
    assert runs([]) == []
    assert runs([4]) == [(4, 5)]
    assert runs([0, 1, 2, 5, 6, 9]) == [(0, 3), (5, 7), (9, 10)]
