"""What earlier versions wrote into users' files keeps working after the modules moved into
packages: git hook shims running ``python -m oxide_git.hook_impl``, agents' settings running
``python -m oxide_git.agent_hooks`` (both names stay as modules that run the new ones)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git, make_ctx, oxide
from tests.hooks.test_hooks import SID_NATIVE, claude_line, make_session, note


def test_hook_shims_of_an_earlier_version_still_link_a_commit(repo: Path) -> None:
    oxide(repo, "hooks", "install")
    hooks = repo / ".git" / "hooks"
    old = 0
    for shim in hooks.iterdir():  # as the shims installed before the move name their module
        text = shim.read_text()
        if "-m oxide_git.hooks.impl" in text:
            shim.write_text(text.replace("-m oxide_git.hooks.impl", "-m oxide_git.hook_impl"))
            old += 1
    assert old >= 2
    sid = make_session(repo)
    (repo / "new.txt").write_text("x\n")
    git(repo, "add", "new.txt")
    git(repo, "commit", "-q", "-m", "through the old shim")
    n = note(repo)
    assert n["sessions"] == [sid] and len(n["checkpoints"]) == 1
    log = repo / ".git" / "oxide" / "log"
    assert not log.exists() or "Error" not in log.read_text()


def test_agent_settings_of_an_earlier_version_still_run_the_hook(repo: Path) -> None:
    from oxide_git.store import writes as store

    oxide(repo, "init")
    transcript = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p" / "t.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(claude_line(repo, 7, "first prompt"))
    payload = {"session_id": SID_NATIVE.format(7), "transcript_path": str(transcript), "cwd": str(repo),
               "hook_event_name": "UserPromptSubmit", "prompt": "second prompt"}
    r = subprocess.run([sys.executable, "-m", "oxide_git.agent_hooks", "claude", "prompt"], cwd=repo,
                       input=json.dumps(payload), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    sid = store.current_session(ctx)
    assert sid and [c["kind"] for c in ctx.index.checkpoint_rows(sid)] == ["prompt"]


def test_settings_written_today_still_name_the_public_path(repo: Path) -> None:
    """Agents' settings keep naming ``oxide_git.agent_hooks``: an earlier version's entries are
    recognised as ours (not doubled) and a later move of the code changes no user's file."""
    from oxide_git.hooks import agent_hooks

    assert agent_hooks.MODULE == "oxide_git.agent_hooks"
