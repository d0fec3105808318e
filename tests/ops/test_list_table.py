"""`list`'s table (``ops/list_table.py``): the ids abbreviated as one at a time would be, forks
under their parents, the note under the table; the same text from the click command and the
click-free form."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.ops.list_table import listing
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, make_ctx, oxide


def _session(ctx, sid: str, title: str, *, parent: str | None = None, worktree: str | None = None,
             at: int = 0, native: str | None = None) -> None:  # type: ignore[no-untyped-def]
    s = Session(sid, "claude", native_id=native, title=title, parent_id=parent,
                worktree=worktree or ctx.repo.worktree_id, updated_at=NOW_MS - at)
    store.append(ctx, s, [Message("user", (Part.text(f"prompt of {title}"),), created_at=NOW_MS - at)])


def test_each_id_is_abbreviated_as_it_is_alone(repo: Path) -> None:
    """40 time-ordered ids sharing their first 9 characters (and agent ids beside them): the table
    reads every id at once, `show` one at a time from its neighbours; the same prefixes."""
    oxide(repo, "init")
    ctx = make_ctx(repo)
    ids = [f"0199c50b1{n:02x}{'0' * 19}{n:02x}" for n in range(40)]
    for n, sid in enumerate(ids):
        _session(ctx, sid, f"s{n}", at=n * 1000, native=f"0199c50b1{n:02x}ffff" if n % 3 == 0 else None)
    shown = listing(make_ctx(repo))
    lines = shown.text.splitlines()
    assert lines[0].split() == ["ID", "AGENT", "MSGS", "WORKTREE", "BRANCH", "UPDATED", "TITLE"]
    got = [line.split()[0] for line in lines[1:]]
    assert got == [ctx.index.session_prefix(sid) for sid in ids]  # newest first
    assert len(set(got)) == 40 and {len(p) for p in got} == {11}
    assert shown.note is None


def test_forks_stand_under_their_parents(repo: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    _session(ctx, "a" * 32, "parent", at=3000)
    _session(ctx, "b" * 32, "the fork", parent="a" * 32, at=1000)
    _session(ctx, "c" * 32, "an orphan fork", parent="f" * 32, at=2000)  # its parent is not listed
    assert _titles(listing(make_ctx(repo), tree=True).text) == ["an orphan fork", "parent", "  └ the fork"]
    assert _titles(listing(make_ctx(repo)).text) == ["the fork", "an orphan fork", "parent"]


def _titles(text: str) -> list[str]:
    header, *lines = text.splitlines()
    return [line[header.index("TITLE"):] for line in lines]


def test_the_note_says_what_is_not_shown(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OXIDE_NOW", str(NOW_MS))
    oxide(repo, "init")
    assert listing(make_ctx(repo)) == ("", "No session yet; `git oxide import` finds this repository's sessions")
    assert listing(make_ctx(repo), all_worktrees=True, agent="codex").note == (
        "No codex session in this store; `git oxide import` finds this repository's sessions")
    ctx = make_ctx(repo)
    _session(ctx, "d" * 32, "elsewhere", worktree="another-worktree")
    _session(ctx, "e" * 32, "here")
    shown = listing(make_ctx(repo))
    assert [line.split()[0] for line in shown.text.splitlines()[1:]] == ["e" * 8]
    assert shown.note is not None and shown.note.startswith("1 session(s) of other worktrees")
    r = oxide(repo, "list")  # the click-free form: the same table, the note on stderr
    assert r.stdout == shown.text and r.stderr == shown.note + "\n"
    assert len(listing(make_ctx(repo), all_worktrees=True).text.splitlines()) == 3
    codex = Session("c0de" * 8, "codex", title="codex here", worktree=ctx.repo.worktree_id, updated_at=NOW_MS)
    store.append(ctx, codex, [Message("user", (Part.text("p"),), created_at=NOW_MS)])
    only = listing(make_ctx(repo), agent="claude")  # counts claude's sessions elsewhere, not codex's
    assert [line.split()[0] for line in only.text.splitlines()[1:]] == ["e" * 8]
    assert only.note is not None and only.note.startswith("1 session(s) of other worktrees")
    assert listing(make_ctx(repo), agent="codex").note is None
