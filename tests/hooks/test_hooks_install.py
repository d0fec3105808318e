"""Installing, uninstalling and reporting the git hook shims next to the user's own hooks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from oxide_git.core.errors import OxideError, Refused
from oxide_git.git.repo import find_repo
from oxide_git.hooks import install as hooks
from tests.conftest import oxide


def _states(repo: Path) -> dict[str, str]:
    return {h.hook: h.state for h in hooks.status(find_repo(repo)).hooks}


def test_status_before_and_after_install_and_pending_jobs(repo: Path) -> None:
    oxide(repo, "init")
    r = find_repo(repo)
    before = _states(repo)
    assert before["pre-commit"] == "missing" and before["prepare-commit-msg"] == "not needed"
    hooks.install(r)
    after = hooks.status(r)
    assert {h.hook: h.state for h in after.hooks}["post-commit"] == "installed"
    assert all(h.python == sys.executable for h in after.hooks if h.state == "installed")
    assert after.enabled and after.pending_jobs == 0
    (r.oxide_dir / "hooks.queue").write_text("job one\njob two\n")
    assert hooks.status(r).pending_jobs == 2
    (Path(hooks.hooks_dir(r)) / "post-commit").write_text("#!/bin/sh\necho mine\n")  # the user replaced ours
    assert _states(repo)["post-commit"] == "foreign"


def test_a_foreign_hook_with_an_aside_already_there_is_refused(repo: Path) -> None:
    r = find_repo(repo)
    d = Path(hooks.hooks_dir(r))
    d.mkdir(parents=True, exist_ok=True)
    (d / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (d / "pre-commit.pre-oxide").write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(Refused) as e:
        hooks.install(r, types=("pre-commit",))
    assert "already exists" in e.value.message and "move one of them away" in (e.value.hint or "")
    assert (d / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


def test_uninstall_leaves_a_hook_the_user_put_over_ours(repo: Path) -> None:
    r = find_repo(repo)
    d = Path(hooks.hooks_dir(r))
    d.mkdir(parents=True, exist_ok=True)
    (d / "post-commit").write_text("#!/bin/sh\necho original\n")
    hooks.install(r, types=("post-commit",))
    assert (d / "post-commit.pre-oxide").read_text() == "#!/bin/sh\necho original\n"
    (d / "post-commit").write_text("#!/bin/sh\necho newer, the user's\n")
    rep = hooks.uninstall(r, ("post-commit",))
    assert rep.actions == ["left post-commit (not git oxide's) and post-commit.pre-oxide in place"]
    assert (d / "post-commit").read_text() == "#!/bin/sh\necho newer, the user's\n"
    (d / "post-commit").unlink()  # once the user's is gone, uninstall puts the original back
    assert hooks.uninstall(r, ("post-commit",)).actions == ["restored post-commit from post-commit.pre-oxide"]
    assert (d / "post-commit").read_text() == "#!/bin/sh\necho original\n"


def test_a_python_path_with_a_quote_is_refused(repo: Path) -> None:
    with pytest.raises(OxideError) as e:
        hooks.install(find_repo(repo), python="/opt/it's/python", types=("post-commit",))
    assert "a quote" in e.value.message
