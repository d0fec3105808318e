"""The console script's ``run``: a command's exit code and whether its process may skip the
interpreter's teardown; ``settle``: what the end of a command's process drops, dropped in a process
that goes on (the tests' in-process ``oxide``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from oxide_git import entry
from oxide_git.git import prefetch
from tests.conftest import git, oxide, oxide_process


def test_a_status_pass_a_failed_command_left_is_not_the_next_commands(repo: Path) -> None:
    """`checkpoint --bogus` starts its `git status` pass and fails before taking it: the next
    checkpoint, after a change, must not take that pass (it would miss the change)."""
    oxide(repo, "init")
    assert oxide(repo, "checkpoint", "--bogus", check=False).returncode == 2
    time.sleep(0.5)  # that pass has long looked at this small worktree
    (repo / "new.txt").write_text("after the failed one\n")
    cp = json.loads(oxide(repo, "checkpoint", "--json").stdout)
    assert git(repo, "show", f"{cp['id']}:new.txt") == "after the failed one\n"


def test_settle_ends_a_pass_no_command_took(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    prefetch.start()
    entry.settle()
    assert prefetch.take(str(repo)) is None
    entry.settle()  # nothing left: nothing to do


def test_run_says_which_commands_may_skip_the_teardown(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repo)
    assert entry.run(["blame", "--bogus"], own_process=False) == (2, True)
    assert entry.run(["status", "--bogus"], own_process=False) == (2, False)
    assert "No such option '--bogus'" in capsys.readouterr().err


@pytest.mark.process
def test_the_process_exits_with_the_commands_code(repo: Path) -> None:
    assert oxide_process(repo, "checkpoint", "--bogus", check=False).returncode == 2
    assert oxide_process(repo, "hook", "no-such-hook", check=False).returncode == 0


def test_what_blame_kept_out_of_the_collector_is_given_back(repo: Path) -> None:
    """A blame freezes what the process holds (``gc.freeze``: its process exits); a process that
    goes on collects it again."""
    import gc

    oxide(repo, "init")
    assert oxide(repo, "blame", "README.md").stdout
    assert gc.get_freeze_count() == 0
