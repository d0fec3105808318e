"""Agent hooks: Claude Code settings merge/remove, the hook commands themselves, Codex notify."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import make_ctx, oxide
from tests.hooks.test_hooks import SID_NATIVE, claude_line


def run_hook(cwd: Path, args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "oxide_git.agent_hooks", *args], cwd=cwd,
                          input=stdin, capture_output=True, text=True, timeout=30)


def hook_log(repo: Path) -> str:
    """The oxide log, where a hook that swallowed an error wrote it."""
    log = repo / ".git" / "oxide" / "log"
    return log.read_text() if log.exists() else ""


def test_claude_settings_merge_and_remove(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(ls)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    settings.write_text(json.dumps(mine))
    oxide(repo, "init", "--agent-hooks", "claude")
    oxide(repo, "init", "--agent-hooks", "claude")  # idempotent
    got = json.loads(settings.read_text())
    assert got["permissions"] == mine["permissions"]
    assert len(got["hooks"]["Stop"]) == 2 and got["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]
    for event in ("UserPromptSubmit", "Stop", "SubagentStop"):
        cmds = [h["command"] for e in got["hooks"][event] for h in e["hooks"]]
        assert cmds.count(f"git oxide agent-hook claude {'prompt' if event == 'UserPromptSubmit' else 'stop'}") == 1
    oxide(repo, "init", "--agent-hooks", "claude", "--remove")
    assert json.loads(settings.read_text()) == mine


def test_claude_hook_commands_checkpoint_and_import(repo: Path) -> None:
    from oxide_git.store import writes as store

    oxide(repo, "init")
    transcript = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p" / "t.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(claude_line(repo, 5, "first prompt"))
    (repo / "README.md").write_text("changed by me\n")
    payload = {"session_id": SID_NATIVE.format(5), "transcript_path": str(transcript),
               "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": "second prompt"}
    t0 = time.monotonic()
    r = run_hook(repo, ["claude", "prompt"], json.dumps(payload))
    elapsed = time.monotonic() - t0
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert elapsed < 5  # generous for CI; measured well under a second
    ctx = make_ctx(repo)
    sid = store.current_session(ctx)
    assert sid and ctx.index.query("SELECT native_id FROM sessions WHERE id=?", (sid,))[0][0] == SID_NATIVE.format(5)
    cps = ctx.index.checkpoint_rows(sid)
    assert [c["kind"] for c in cps] == ["prompt"] and cps[0]["message"] == "second prompt"
    with transcript.open("a") as f:
        f.write(claude_line(repo, 5, "an answer", role="assistant"))
    r = run_hook(repo, ["claude", "stop"], json.dumps({**payload, "hook_event_name": "Stop"}))
    assert r.returncode == 0 and r.stdout == ""
    ctx = make_ctx(repo)
    assert ctx.index.query("SELECT message_count FROM sessions WHERE id=?", (sid,))[0][0] == 2
    assert "failed" not in hook_log(repo)  # the hook swallows errors: none happened on the way


def test_hook_never_blocks_on_bad_input(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    r = run_hook(repo, ["claude", "stop"], "not json")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    logged = hook_log(repo)
    assert logged.count("failed") == 1 and "agent hook ['claude', 'stop'] failed" in logged
    assert "JSONDecodeError" in logged  # the error itself is in the log, with its traceback
    # a transcript that is not there is nothing to import: not an error, nothing logged
    r = run_hook(repo, ["claude", "stop"], json.dumps({"cwd": str(repo), "transcript_path": "/nope"}))
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert hook_log(repo) == logged
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    r = run_hook(outside, ["claude", "prompt"], json.dumps({"cwd": str(outside)}))
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert hook_log(repo) == logged and not (outside / ".git").exists()


def test_codex_notify_chains_and_restores(repo: Path) -> None:
    import tomllib

    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    original = 'model = "o3"\nnotify = ["notify-send", "codex"]\n\n[profiles.x]\nmodel = "o4"\n'
    config.write_text(original)
    oxide(repo, "init", "--agent-hooks", "codex")
    notify = tomllib.loads(config.read_text())["notify"]
    assert notify[:5] == ["git", "oxide", "agent-hook", "codex", "notify"]  # from PATH
    assert notify[-3:] == ["--", "notify-send", "codex"]
    assert tomllib.loads(config.read_text())["profiles"]["x"]["model"] == "o4"
    oxide(repo, "init", "--agent-hooks", "codex", "--remove")
    assert tomllib.loads(config.read_text()) == tomllib.loads(original)
    # the notify command itself: no Codex session yet, nothing to import, never fails
    r = run_hook(repo, ["codex", "notify", json.dumps({"type": "agent-turn-complete", "cwd": str(repo)})], "")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert hook_log(repo) == ""  # a failure on the way (swallowed) would be here
    assert make_ctx(repo).index.query("SELECT count(*) FROM sessions")[0][0] == 0
