"""`git oxide blame` of a turn that no checkpoint follows (issue 37, item 2): the commit, or the
worktree as it is, closes the last interval, and Claude Code's Stop hook closes the turn."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oxide_git.cli import main

from .blame_helpers import exact_blame
from .claude_run import ClaudeRun
from .conftest import git, make_ctx, oxide

CALC = "".join(f"line {i} = {i}\n" for i in range(1, 11))


def _real_clock_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits dated now, as a user's are (the suite pins them to 2026-01-01)."""
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")


def blame_json(repo: Path, monkeypatch: pytest.MonkeyPatch, rel: str, *extra: str) -> list[dict[str, Any]]:
    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, ["blame", rel, "--json", *extra])
    assert r.exit_code == 0, r.output
    return list(json.loads(r.output)["lines"])


def two_turns(repo: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ClaudeRun, str]:
    """Issue 37's run: turn 1 writes calc.py, the user edits line 3, turn 2 edits line 7."""
    run = ClaudeRun(repo, monkeypatch)
    run.prompt("write calc.py")
    run.write("calc.py", CALC)
    run.answer("calc.py is written")
    time.sleep(0.01)
    (repo / "calc.py").write_text(CALC.replace("line 3 = 3", "line 3 = mine"))
    time.sleep(0.01)
    run.prompt("change line 7")
    run.edit("calc.py", "line 7 = 7", "line 7 = seven")
    run.answer("line 7 is changed")
    ctx = make_ctx(repo)
    sid = ctx.index.query("SELECT id FROM sessions WHERE native_id=?", (run.native,))[0][0]
    ctx.close()
    return run, sid


def _who(lines: list[dict[str, Any]], sid_short: str) -> list[str]:
    return ["mine" if ln["who"] == "human" else "turn" if ln["session_id"] == sid_short else ln["who"]
            for ln in lines]


WANT = ["turn", "turn", "mine", "turn", "turn", "turn", "turn", "turn", "turn", "turn"]


@pytest.mark.parametrize("hooks", [False, True], ids=["agent-hooks-only", "git-hooks"])
def test_the_last_turn_before_a_commit_is_the_agents(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                      hooks: bool) -> None:
    _real_clock_commits(monkeypatch)
    oxide(repo, "init", "--agent-hooks", "claude", *(["--hooks"] if hooks else []))
    monkeypatch.setenv("OXIDE_HOOK_SYNC", "1")  # the hooks' jobs done when `git commit` returns
    _run, sid = two_turns(repo, monkeypatch)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    lines = blame_json(repo, monkeypatch, "calc.py")
    short = lines[0]["session_id"]
    assert short and sid.startswith(short)
    assert _who(lines, short) == WANT, lines
    assert lines[6]["text"] == "line 7 = seven" and lines[6]["agent"] == "claude"
    ctx = make_ctx(repo)
    try:
        assert [ln.who for ln in exact_blame(ctx, "calc.py").lines] == ["agent"] * 2 + ["human"] + ["agent"] * 7
    finally:
        ctx.close()


def test_the_last_turn_in_the_worktree_is_the_agents(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    oxide(repo, "init", "--agent-hooks", "claude")
    two_turns(repo, monkeypatch)
    lines = blame_json(repo, monkeypatch, "calc.py")
    assert _who(lines, lines[0]["session_id"]) == WANT, lines
