"""``blame_diff``: the line map of a diff, a run at a time (``trace_sorted``) as a line at a time
(``old_line``), against libgit2's own hunks of the whole texts; `git diff --no-index`'s hunks are
libgit2's, whatever the configuration says; and ``blame_timeline.runs``."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oxide_git.blame import diff as blame_diff
from oxide_git.blame.diff import Diff
from oxide_git.blame.timeline import runs

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


# lines that repeat (hunks slide among them), blank ones, carriage returns, a NUL, none at the end
_raw = st.lists(st.sampled_from([b"a", b"b", b"c", b"", b"  ", b"d e", b"a\r", b"\r", b"x\x00y", b"}"]),
                min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(_raw, _raw, st.booleans(), st.booleans())
def test_git_diffs_as_libgit2_does(old: list[bytes], new: list[bytes], end_a: bool, end_b: bool) -> None:
    a, b = b"\n".join(old) + (b"\n" if end_a else b""), b"\n".join(new) + (b"\n" if end_b else b"")
    if a and b:
        assert blame_diff.git_hunks(a, b) == blame_diff.libgit2_hunks(a, b)


def test_no_configuration_moves_git_diffs_hunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's configuration (patience, the indent heuristic, context) and a repository's
    around the folder are not read; without git, libgit2 answers."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[diff]\n\talgorithm = patience\n\tindentHeuristic = true\n"
                                     "\tcontext = 5\n[core]\n\tautocrlf = true\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'diff.algorithm'='histogram'")
    # a case where patience's hunks are not Myers's, and one the indent heuristic slides
    pairs = [(b"fn b() {\nb\nfn b() {\n", b"fn b() {\nfn b() {\nb\n"),
             (b"\n\nfn b() {\nfn b() {\n  x\nb\nfn a() {\n\n",
              b"\nfn b() {\nfn b() {\n  x\nb\n  y\nb\nfn a() {\n\n")]
    for old, new in pairs:
        assert blame_diff.git_hunks(old, new) == blame_diff.libgit2_hunks(old, new)
    want = [Diff(b"x\n" + old, b"y\n" + new).hunks() for old, new in pairs]
    monkeypatch.setenv("PATH", str(tmp_path))  # no git: libgit2's hunks, the same
    assert blame_diff.git_hunks(*pairs[0]) is None
    monkeypatch.setenv("TMPDIR", str(tmp_path / "none"))  # nowhere to write the two
    assert blame_diff.git_hunks(*pairs[0]) is None and not (tmp_path / "none").exists()
    monkeypatch.setattr(blame_diff, "_git_diffs", 0)
    assert [Diff(b"x\n" + old, b"y\n" + new).hunks() for old, new in pairs] == want


def test_past_a_few_diffs_a_process_libgit2_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blame_diff, "_git_diffs", 0)
    asked, by_git = [], blame_diff.git_hunks
    monkeypatch.setattr(blame_diff, "git_hunks", lambda a, b: asked.append(a) or by_git(a, b))
    got = [Diff(b"s\n%d\nt\n" % i, b"s\nx\nt\n").hunks() for i in range(blame_diff.GIT_DIFFS + 3)]
    assert len(asked) == blame_diff.GIT_DIFFS and got == [([1], [2], [0, 0])] * len(got)
    assert not list(Path(os.environ.get("TMPDIR") or "/tmp").glob(f"oxide-diff-{os.getpid()}-*"))


def test_runs_of_ascending_integers() -> None:
    assert runs([]) == []
    assert runs([4]) == [(4, 5)]
    assert runs([0, 1, 2, 5, 6, 9]) == [(0, 3), (5, 7), (9, 10)]
