"""The console script's early `git status` pass (started in the current folder before anything is
imported) must give what a pass in the worktree gives, and be used only for that worktree."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.git import prefetch, status
from tests.conftest import git


def _dirty(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("print('changed')\n")
    (repo / "src" / "new.py").write_text("x = 1\n")
    (repo / "README.md").unlink()


@pytest.mark.parametrize("where", [".", "src"])
def test_the_early_pass_is_the_worktrees_status(repo: Path, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _dirty(repo)
    monkeypatch.chdir(repo / where)
    prefetch.start()
    early = status.run(repo)
    assert prefetch._started is None  # taken
    fresh = status.run(repo)
    assert early == fresh
    assert early.paths == {"src/app.py", "src/new.py", "README.md"}


def test_a_pass_started_in_another_repository_is_not_used(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    (other / "stray.txt").write_text("not ours\n")
    _dirty(repo)
    monkeypatch.chdir(other)
    prefetch.start()
    assert status.run(repo).paths == {"src/app.py", "src/new.py", "README.md"}
    assert prefetch._started is None


def test_a_pass_that_failed_is_run_again_in_the_worktree(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _dirty(repo)
    monkeypatch.chdir(repo / ".git")  # git status refuses to run here
    prefetch.start()
    assert status.run(repo).paths == {"src/app.py", "src/new.py", "README.md"}


def test_no_early_pass_with_git_dir_set(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    prefetch.start()
    assert prefetch._started is None
