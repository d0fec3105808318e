"""Qwen Code's hooks: settings merged and taken out, and the hook command on a real 0.24.4 file
(the payload's fields as the CLI sent them in a real run)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.conftest import make_ctx, oxide
from tests.hooks.test_agent_hooks_gemini import run_hook

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "qwen" / "projects" / "-tmp-gemini-q1-project" / "chats"
NATIVE = "c753d781-2223-4830-999a-641b7cd106a4"


def test_qwen_settings_merge_and_remove(repo: Path) -> None:
    settings = repo / ".qwen" / "settings.json"
    settings.parent.mkdir()
    mine = {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "echo mine"}]}]}}
    settings.write_text(json.dumps(mine))
    oxide(repo, "init", "--agent-hooks", "qwen")
    oxide(repo, "init", "--agent-hooks", "qwen")  # idempotent
    got = json.loads(settings.read_text())
    assert got["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]
    for event, action in (("UserPromptSubmit", "prompt"), ("Stop", "stop")):
        ours = [h for e in got["hooks"][event] for h in e["hooks"] if "agent-hook" in h["command"]]
        assert [(h["command"], h["timeout"]) for h in ours] == [(f"git oxide agent-hook qwen {action}", 10)]
    oxide(repo, "init", "--agent-hooks", "qwen", "--remove")
    assert json.loads(settings.read_text()) == mine


def test_the_hook_imports_and_checkpoints(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    chats = Path(os.environ["HOME"]) / ".qwen" / "projects" / "p" / "chats"
    chats.mkdir(parents=True)
    lines = (FIX / f"{NATIVE}.jsonl").read_text().replace("/tmp/gemini/q1/project", str(repo)).splitlines(True)
    transcript = chats / f"{NATIVE}.jsonl"
    transcript.write_text(lines[0])  # at UserPromptSubmit the prompt's record is written already
    payload = {"session_id": NATIVE, "transcript_path": str(transcript), "cwd": str(repo),
               "hook_event_name": "UserPromptSubmit", "permission_mode": "yolo", "prompt": "QWEN-PROMPT-1"}
    r = run_hook(repo, ["qwen", "prompt"], payload)
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    [(sid, count)] = [tuple(x) for x in ctx.index.query("SELECT id, message_count FROM sessions")]
    assert count == 1 and [c["kind"] for c in ctx.index.checkpoint_rows(sid)] == ["prompt"]
    transcript.write_text("".join(lines[:6]))  # the call and its result: sent back, the hook again
    r = run_hook(repo, ["qwen", "prompt"], {**payload, "prompt": ""})
    assert r.returncode == 0 and [c["kind"] for c in make_ctx(repo).index.checkpoint_rows(sid)] == ["prompt"]
    transcript.write_text("".join(lines))
    r = run_hook(repo, ["qwen", "stop"], {**payload, "hook_event_name": "Stop"})
    assert r.returncode == 0 and r.stdout == ""
    assert [tuple(x) for x in make_ctx(repo).index.query("SELECT id, message_count FROM sessions")] == [(sid, 10)]
    shutil.rmtree(chats)
