"""Compatibility suite, end to end: every real file through `git oxide import` and `show --json`.

Counts are computed here from the raw files, independently of the parsers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ..conftest import oxide_process as oxide  # the compatibility suite: real processes

REAL = os.environ.get("OXIDE_REAL_FIXTURES")
pytestmark = [
    pytest.mark.real,
    pytest.mark.skipif(not REAL, reason="set OXIDE_REAL_FIXTURES=../shared/fixtures/real to run"),
]


def _json_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _raw_counts(agent: str, path: Path) -> dict[str, int]:
    calls: set[str] = set()
    prompts = 0
    if agent == "claude":
        for obj in _json_lines(path):
            content = (obj.get("message") or {}).get("content")
            if isinstance(content, list):
                calls |= {b["id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_use"}
    elif agent == "codex":
        for obj in _json_lines(path):
            p = obj.get("payload") or {}
            if obj.get("type") == "response_item" and p.get("type") in (
                    "function_call", "custom_tool_call", "local_shell_call"):
                calls.add(p.get("call_id") or json.dumps(p))
            if obj.get("type") == "event_msg" and p.get("type") == "user_message":
                prompts += 1
    elif agent == "opencode":
        data = json.loads(path.read_text())
        for m in data["messages"]:
            calls |= {p["callID"] for p in m.get("parts", []) if p.get("type") == "tool"}
    return {"tool_calls": len(calls), "prompts": prompts}


def _files() -> list[tuple[str, Path]]:
    root = Path(REAL or ".")
    out = [("claude", p) for p in sorted((root / "claude").rglob("*.jsonl")) if "subagents" not in p.parts]
    out += [("codex", p) for p in sorted((root / "codex").glob("*.jsonl"))]
    out += [("opencode", p) for p in sorted((root / "opencode").glob("*.json"))]
    out += [("aider", p) for p in sorted((root / "aider").rglob(".aider.chat.history.md"))]
    return out


@pytest.mark.parametrize(("agent", "path"), _files(), ids=lambda v: str(v)[-40:] if isinstance(v, Path) else v)
def test_import_and_show_match_the_raw_file(repo: Path, agent: str, path: Path) -> None:
    r = oxide(repo, "import", "--agent", agent, str(path), "--json", "-q")
    report = json.loads(r.stdout)
    assert report["sessions"], r.stderr
    sessions = [json.loads(oxide(repo, "show", sid, "--json").stdout) for sid in
                {s for f in report["files"] for s in f["sessions"]}]
    parts = [p for s in sessions for m in s["messages"] for p in m["parts"]]
    raw = _raw_counts(agent, path)
    if agent in ("claude", "codex", "opencode"):
        call_ids = {p["call_id"] for p in parts if p["type"] == "tool_call"}
        assert len(call_ids) >= raw["tool_calls"]
    if agent == "codex":
        users = [m for s in sessions for m in s["messages"] if m["role"] == "user"]
        assert len(users) >= raw["prompts"]
    if agent == "aider":
        headers = path.read_text(errors="replace").count("# aider chat started at")
        assert len(sessions) >= headers
    # importing again changes nothing
    again = json.loads(oxide(repo, "import", "--agent", agent, str(path), "--json", "-q").stdout)
    assert again["messages"] == 0
