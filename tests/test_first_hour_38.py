"""Issue 38 item 3, "the first hour": each test does what the new user did."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from oxide_git import logwrite

from .conftest import git, make_ctx, oxide

DEMO = Path(__file__).resolve().parent.parent / "docs" / "demo.sh"


def test_the_demo_shows_commands_that_paste() -> None:
    """It showed `$ git oxide fork 019ca8d7 --at 3 --title try another approach`."""
    text = DEMO.read_text()
    functions = "\n".join(m.group(0) for m in re.finditer(r"(?ms)^(quote|show)\(\) \{.*?\}$", text))
    args = ["git", "oxide", "fork", "019ca8d7", "--at", "3", "--title", "try another approach",
            "it's", "", "$HOME", "a\\b", "--x=1"]
    out = subprocess.run(["bash", "-c", functions + '\nshow "$@"', "bash", *args],
                         capture_output=True, text=True, check=True).stdout
    shown = re.sub(r"\x1b\[[0-9;]*m", "", out).strip()
    assert shown.startswith("$ ")
    assert shlex.split(shown[2:]) == args
    assert "git oxide fork 019ca8d7 --at 3" in shown  # plain words stay plain
    assert 'show git oxide checkpoint -m \'"' not in text  # no hand-quoting left


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_list_shows_sessions_imported_by_path(repo: Path, tmp_path: Path) -> None:
    """A transcript from another machine (cwd /work/project), imported by path: `list` printed
    nothing on stdout."""
    oxide(repo, "init")
    copy = tmp_path / "theirs.jsonl"
    copy.write_bytes((FIXTURES / "claude" / "split_response.jsonl").read_bytes())
    oxide(repo, "import", "--agent", "claude", str(copy))
    listed = oxide(repo, "list")
    assert "List the files and read README.md" in listed.stdout, listed.stderr
    assert "not shown" not in listed.stderr
    [row] = json.loads(oxide(repo, "list", "--json").stdout)
    assert row["cwd"] == "/work/project" and row["worktree"] == "main"  # where it ran, where it is
    ctx = make_ctx(repo)
    stored = logwrite.tip(ctx.repo.objects, ctx.repo.common_dir, row["id"])
    ctx.close()
    assert stored is not None and stored.session.source["imported_by_path"] == "main"  # recorded
    # Growing and imported again (by path, or found otherwise), it stays this worktree's.
    with copy.open("a") as f:
        f.write(json.dumps({"type": "user", "uuid": "u-more", "sessionId": row["native_id"],
                            "cwd": "/work/project", "timestamp": "2026-02-01T11:00:00.000Z",
                            "message": {"role": "user", "content": "one more thing"}}) + "\n")
    oxide(repo, "import", "--agent", "claude", str(copy))
    assert json.loads(oxide(repo, "list", "--json").stdout)[0]["worktree"] == "main"
    assert len(json.loads(oxide(repo, "list", "--all", "--json").stdout)) == 1


def test_a_session_of_another_worktree_stays_there(repo: Path, tmp_path: Path) -> None:
    """By path or not, a session whose folder is a worktree here is that worktree's."""
    oxide(repo, "init")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other), "-b", "other")
    copy = tmp_path / "theirs.jsonl"
    copy.write_text((FIXTURES / "claude" / "split_response.jsonl").read_text()
                    .replace("/work/project", str(other)))
    oxide(repo, "import", "--agent", "claude", str(copy))
    assert oxide(repo, "list", "--json").stdout.strip() in ("[]", "")
    assert len(json.loads(oxide(other, "list", "--json").stdout)) == 1
