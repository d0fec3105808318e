"""Blame of committed lines: `git blame` to the commit, its note to the checkpoint taken as it was
made, and the worktree's checkpoints from there; notes follow amend and rebase."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from oxide_git.blame.attribution import BadRevision
from oxide_git.store import writes as store
from tests.blame_helpers import Clock, FakeAgent, commit, exact_blame, human_edit
from tests.conftest import git, make_ctx, oxide
from tests.hooks.test_hooks import idle

SID = "0" * 12 + "a" * 20


def blame(repo: Path, rel: str, **kw):  # type: ignore[no-untyped-def]
    ctx = make_ctx(repo, Clock().tick())
    try:
        return exact_blame(ctx, rel, **kw)
    finally:
        ctx.close()


def rows(res) -> list[tuple[str, str, str | None]]:  # type: ignore[no-untyped-def]
    return [(ln.text, ln.who, ln.session_id) for ln in res.lines]


@pytest.fixture
def work(repo: Path) -> tuple[Path, Clock, FakeAgent]:
    oxide(repo, "hooks", "install")
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("start")  # creates the session
    ctx = make_ctx(repo, clock.t)
    store.set_current_session(ctx, SID)
    ctx.close()
    return repo, clock, a


EXPECTED = [("one", "agent", SID), ("two", "agent", SID), ("three", "human", None)]


def _turn_and_commit(repo: Path, clock: Clock, a: FakeAgent) -> str:
    a.write("app.txt", "one\ntwo\n")
    a.say("done")
    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\n")
    return commit(repo, "-m", "app")


def test_committed_lines_come_through_the_note(work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    c = _turn_and_commit(repo, clock, a)
    res = blame(repo, "app.txt")
    assert rows(res) == EXPECTED
    assert {ln.commit for ln in res.lines} == {c}
    assert res.to_json()["lines"][0]["commit"] == git(repo, "rev-parse", "--short", c).strip()
    # the same at the commit, and after more work on top
    a.prompt("more")
    a.edit("app.txt", "three\n", "three\nfour\n")
    commit(repo, "-m", "four")
    assert rows(blame(repo, "app.txt", rev=c)) == EXPECTED
    assert rows(blame(repo, "app.txt")) == [*EXPECTED, ("four", "agent", SID)]


def test_amend_and_rebase_keep_the_attribution(work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    base = git(repo, "rev-parse", "HEAD").strip()
    _turn_and_commit(repo, clock, a)
    git(repo, "commit", "-q", "--amend", "-m", "app, amended")
    idle(repo)
    assert rows(blame(repo, "app.txt")) == EXPECTED
    # rebase onto a commit made elsewhere (the branch's commit gets a new parent)
    git(repo, "checkout", "-q", "-b", "side", base)
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", "main")
    r = subprocess.run(["git", "rebase", "-q", "side"], cwd=repo, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    idle(repo)
    rewritten = git(repo, "rev-parse", "HEAD").strip()
    res = blame(repo, "app.txt")
    assert {ln.commit for ln in res.lines} == {rewritten}
    assert rows(res) == EXPECTED


def test_without_git_hooks_the_commit_is_found_by_its_parent(repo: Path) -> None:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("start")
    a.write("app.txt", "one\ntwo\n")
    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\n")
    a.prompt("next")  # a prompt checkpoint after the human's edit, before the commit
    env = dict(os.environ, GIT_COMMITTER_DATE=f"@{clock.tick() // 1000 + 1} +0000")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "app"], cwd=repo, check=True, env=env)
    assert rows(blame(repo, "app.txt")) == EXPECTED


def test_lines_and_revision_arguments(work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    _turn_and_commit(repo, clock, a)
    res = blame(repo, "app.txt", lines=(2, 3))
    assert [(ln.number, ln.text) for ln in res.lines] == [(2, "two"), (3, "three")]
    with pytest.raises(BadRevision):
        blame(repo, "app.txt", rev="no-such-rev")
    with pytest.raises(BadRevision):
        blame(repo, "missing.txt")
    assert rows(blame(repo, "README.md")) == [("hello", "before oxide", None)]
