"""Issue 38 item 3: blame in a clone without checkpoints says so, and how to get them, instead of
answering as if every line were older than oxide."""

from __future__ import annotations

import json
from pathlib import Path

from tests.blame.test_blame_history import SID, _turn_and_commit, work  # noqa: F401 - the fixture
from tests.blame_helpers import Clock, FakeAgent
from tests.conftest import git, oxide

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_a_clone_pulled_without_checkpoints(work: tuple[Path, Clock, FakeAgent], tmp_path: Path) -> None:  # noqa: F811
    repo, clock, a = work
    _turn_and_commit(repo, clock, a)
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    oxide(repo, "push", "origin")  # sessions and notes; checkpoints stay here
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", "main", str(bare), str(clone))
    oxide(clone, "init")
    oxide(clone, "pull", "origin")
    r = oxide(clone, "blame", "app.txt")
    assert "hint: 3 line(s) come from commits whose notes name 1 checkpoint(s) this clone does not have" \
        in r.stderr, r.stderr
    assert "git oxide pull --checkpoints" in r.stderr and "git oxide push --checkpoints" in r.stderr
    doc = json.loads(oxide(clone, "blame", "app.txt", "--json").stdout)
    assert doc["checkpoints_missing"]["lines"] == 3 and doc["checkpoints_missing"]["checkpoints"] == 1
    assert "pull --checkpoints" in doc["checkpoints_missing"]["hint"]
    summary = json.loads(oxide(clone, "blame", "app.txt", "--summary", "--json").stdout)
    assert summary["checkpoints_missing"]["lines"] == 3
    # what the hint says works: pushed from where they were made, pulled here
    oxide(repo, "push", "origin", "--checkpoints")
    oxide(clone, "pull", "origin", "--checkpoints")
    r = oxide(clone, "blame", "app.txt")
    assert "hint:" not in r.stderr, r.stderr
    assert [line.split("(")[1].split()[0] for line in r.stdout.splitlines()] == ["claude", "claude", "human"]
    assert json.loads(oxide(clone, "blame", "app.txt", "--json").stdout)["checkpoints_missing"] is None


def test_sessions_and_no_checkpoint(repo: Path) -> None:
    """Sessions imported, no hook ever took a checkpoint: `before oxide` everywhere, said why."""
    oxide(repo, "init")
    oxide(repo, "import", "--agent", "claude", str(FIXTURES / "claude" / "split_response.jsonl"))
    r = oxide(repo, "blame", "README.md")
    assert "before oxide" in r.stdout
    assert "hint: this clone has sessions but no checkpoints" in r.stderr, r.stderr
    assert json.loads(oxide(repo, "blame", "README.md", "--json").stdout)["checkpoints_missing"]["lines"] == 1


def test_no_session_no_hint(repo: Path) -> None:
    oxide(repo, "init")
    r = oxide(repo, "blame", "README.md")
    assert "before oxide" in r.stdout and r.stderr == ""
