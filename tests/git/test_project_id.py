"""``Repo.project_id``: the root commit, kept in ``oxide/project-id``, written whole (processes
started together read it: the parsing children of a bulk import, two hooks); a file cut short is
never taken for an id."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.git import repo as repo_mod
from oxide_git.git.repo import find_repo
from tests.conftest import git


@pytest.fixture(autouse=True)
def _no_kept_ids(monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    monkeypatch.setattr(repo_mod, "_PROJECT_IDS", {})
    (repo / ".git" / "oxide").mkdir(exist_ok=True)  # as `git oxide init` leaves it


def test_the_root_commit_is_kept_whole(repo: Path) -> None:
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert find_repo(repo).project_id() == root
    cache = repo / ".git" / "oxide" / "project-id"
    assert cache.read_text() == root + "\n"
    assert [p.name for p in cache.parent.glob("project-id*")] == ["project-id"]  # no temporary left


@pytest.mark.parametrize("content", ["", "4110ab91", "not an id\n"])
def test_a_file_cut_short_is_asked_of_git_again(repo: Path, content: str) -> None:
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    cache = repo / ".git" / "oxide" / "project-id"
    cache.write_text(content)
    assert find_repo(repo).project_id() == root
    assert cache.read_text() == root + "\n"


def test_a_repo_and_a_context_are_values_without_dataclasses(repo: Path) -> None:
    """``Repo`` and ``Context`` are plain classes (every command makes them; ``dataclasses`` costs
    ~5 ms to import): a Repo compares and hashes by its folders and is not changed after."""
    from oxide_git.store.context import Context

    a, b = find_repo(repo), find_repo(repo / "sub" if (repo / "sub").is_dir() else repo)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1 and a != "repo"
    assert repr(a) == f"Repo(workdir={a.workdir!r}, git_dir={a.git_dir!r}, common_dir={a.common_dir!r})"
    with pytest.raises(AttributeError):
        a.workdir = Path("/elsewhere")  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del a.git_dir  # type: ignore[misc]
    ctx = Context(a, 5)
    assert ctx.environ == {} and ctx._index is None and repr(ctx) == f"Context(repo={a!r}, now_ms=5)"
