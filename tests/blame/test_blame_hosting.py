"""Blame through what a host does to a pull request (issue 37, item 3): a squash merge or a rebase
merge made without the git hooks has no note, and its parent (main, moved on meanwhile) no
checkpoint; the checkpoint that holds the commit's very file says where its lines were written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.blame.test_blame_history import EXPECTED, SID, blame, rows, work  # noqa: F401 - the fixture
from tests.blame_helpers import Clock, FakeAgent, commit
from tests.conftest import git


def _host(repo: Path, clock: Clock, *args: str) -> str:
    """``git ARGS`` as a host runs it: no hooks, dated now."""
    env = dict(os.environ, GIT_COMMITTER_DATE=f"@{clock.tick() // 1000 + 1} +0000")
    r = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *args], cwd=repo, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return git(repo, "rev-parse", "HEAD").strip()


def _pull_request(repo: Path, clock: Clock, a: FakeAgent) -> tuple[str, list[str]]:
    """The agent's turn and the user's line committed on a branch with the hooks, in two commits;
    main moved on meanwhile (a teammate's commit, no checkpoint on it). Main's tip, the commits."""
    from tests.blame_helpers import human_edit

    git(repo, "checkout", "-q", "-b", "feature")
    a.write("app.txt", "one\ntwo\n")
    a.say("done")
    first = commit(repo, "-m", "app")
    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\n")
    second = commit(repo, "-m", "three")
    assert rows(blame(repo, "app.txt")) == EXPECTED
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("hello\nfrom a teammate\n")
    return _host(repo, clock, "commit", "-q", "-am", "a teammate's change"), [first, second]


def test_a_squash_merge(work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    repo, clock, a = work
    _pull_request(repo, clock, a)
    git(repo, "merge", "-q", "--squash", "feature")
    squashed = _host(repo, clock, "commit", "-q", "-m", "app (#1)")
    assert git(repo, "notes", "--ref=oxide", "list", squashed, check=False) == ""
    res = blame(repo, "app.txt")
    assert rows(res) == EXPECTED
    assert {ln.commit for ln in res.lines} == {squashed}


def test_a_rebase_merge(work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    repo, clock, a = work
    base, picks = _pull_request(repo, clock, a)
    git(repo, "checkout", "-q", "-b", "rebased", base)
    top = _host(repo, clock, "cherry-pick", *picks)
    res = blame(repo, "app.txt")
    assert rows(res) == EXPECTED
    assert {ln.commit for ln in res.lines} == {top, git(repo, "rev-parse", "HEAD~1").strip()}


def test_a_file_no_checkpoint_holds_is_not_taken_for_one(work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    """Main changed the file too (the user, without the hooks, after the first checkpoint: the
    commit closes its interval, so "zero" is theirs): the squash's file is in no checkpoint, and
    its lines are given to no one; a commit older than every checkpoint reads none."""
    repo, clock, a = work
    (repo / "README.md").write_text("hello\nan old line\n")  # committed on 2026-01-01 (the suite's date)
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "before the first checkpoint")
    git(repo, "checkout", "-q", "-b", "feature")
    a.write("app.txt", "one\ntwo\n")
    a.say("done")
    commit(repo, "-m", "app")
    git(repo, "checkout", "-q", "main")
    (repo / "app.txt").write_text("zero\n")
    git(repo, "add", "app.txt")
    _host(repo, clock, "commit", "-q", "-m", "main's app.txt")
    subprocess.run(["git", "merge", "-q", "--squash", "feature"], cwd=repo, capture_output=True)
    (repo / "app.txt").write_text("zero\none\ntwo\n")
    git(repo, "add", "app.txt")
    _host(repo, clock, "commit", "-q", "-m", "app (#1)")
    assert rows(blame(repo, "app.txt")) == [("zero", "human", None), ("one", "before oxide", None),
                                            ("two", "before oxide", None)]
    assert [who for _t, who, _s in rows(blame(repo, "README.md"))] == ["before oxide"] * 2
