"""Gemini CLI's hooks: settings merged and taken out again, and what the hook command does with the
payload the CLI sends (the payloads here are 0.61's, seen in a real run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import make_ctx, oxide

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "gemini" / "project" / "chats"
MAIN = FIX / "session-2026-12-01T22-08-29b5301f.jsonl"
NATIVE = "29b5301f-f84d-4437-bfbd-3b5886c08b03"


def run_hook(cwd: Path, args: list[str], payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "oxide_git.agent_hooks", *args], cwd=cwd,
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60)


def test_gemini_settings_merge_and_remove(repo: Path) -> None:
    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    mine = {"model": {"name": "gemini-2.5-pro"},
            "hooks": {"AfterAgent": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo mine"}]}]}}
    settings.write_text(json.dumps(mine))
    oxide(repo, "init", "--agent-hooks", "gemini")
    oxide(repo, "init", "--agent-hooks", "gemini")  # idempotent
    got = json.loads(settings.read_text())
    assert got["model"] == mine["model"]
    assert got["hooks"]["AfterAgent"][0] == mine["hooks"]["AfterAgent"][0]
    for event, action in (("BeforeAgent", "prompt"), ("AfterAgent", "stop")):
        hooks = [h for e in got["hooks"][event] for h in e["hooks"]]
        ours = [h for h in hooks if "agent-hook" in h["command"]]
        assert [h["command"] for h in ours] == [f"git oxide agent-hook gemini {action}"]
        assert ours[0]["type"] == "command" and ours[0]["timeout"] == 10000  # milliseconds
    oxide(repo, "init", "--agent-hooks", "gemini", "--remove")
    assert json.loads(settings.read_text()) == mine


def test_without_git_oxide_on_path_the_hooks_go_in_the_users_settings(repo: Path) -> None:
    from oxide_git.hooks.agent_hooks_gemini import configure

    done = configure(repo, python="/opt/py/bin/python3")
    user = Path(os.environ["HOME"]) / ".gemini" / "settings.json"
    got = json.loads(user.read_text())
    cmd = got["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
    assert cmd == "/opt/py/bin/python3 -m oxide_git.agent_hooks gemini prompt"
    assert not (repo / ".gemini" / "settings.json").exists()  # the shared file names no machine
    assert done[-1].endswith(f"so they go in your own {user})")
    configure(repo, remove=True)
    assert json.loads(user.read_text()) == {}


def test_the_first_prompt_checkpoints_the_session_the_cli_is_starting(repo: Path, tmp_path: Path) -> None:
    """At BeforeAgent of a new session the file holds only its header and the CLI's context:
    the session is stored empty, the checkpoint is its own, and AfterAgent fills it in."""
    oxide(repo, "init")
    chats = Path(os.environ["HOME"]) / ".gemini" / "tmp" / "repo" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text(str(repo))
    lines = MAIN.read_bytes().splitlines(keepends=True)
    transcript = chats / MAIN.name
    transcript.write_bytes(b"".join(lines[:2]))  # the header, $set.messages [<session_context>]
    payload = {"session_id": NATIVE, "transcript_path": str(transcript), "cwd": str(repo),
               "hook_event_name": "BeforeAgent", "prompt": "GEMINI-PROMPT-1: do it"}
    (repo / "README.md").write_text("changed by me\n")
    r = run_hook(repo, ["gemini", "prompt"], payload)
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    [row] = ctx.index.query("SELECT id, native_id, message_count FROM sessions")
    assert tuple(row) == (row[0], NATIVE, 0)
    cps = ctx.index.checkpoint_rows(row[0])
    assert [c["kind"] for c in cps] == ["prompt"] and cps[0]["message"] == "GEMINI-PROMPT-1: do it"
    transcript.write_bytes(MAIN.read_bytes())
    r = run_hook(repo, ["gemini", "stop"], {**payload, "hook_event_name": "AfterAgent"})
    assert r.returncode == 0 and r.stdout == ""
    ctx = make_ctx(repo)
    assert [tuple(x) for x in ctx.index.query("SELECT id, message_count FROM sessions")] == [(row[0], 13)]
    log = repo / ".git" / "oxide" / "log"
    assert not log.exists() or "failed" not in log.read_text()
