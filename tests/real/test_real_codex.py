"""Codex parser over the real rollouts (OXIDE_REAL_FIXTURES=../shared/fixtures/real)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from oxide_git.agents import FoundMessage, FoundSession, Problem, Resumable
from oxide_git.agents.codex import agent as codex

pytestmark = pytest.mark.real

ROOT = os.environ.get("OXIDE_REAL_FIXTURES")
FILES = sorted((Path(ROOT) / "codex").glob("*.json*")) if ROOT else []


def raw_counts(path: Path) -> Counter:
    """Counted straight from the JSON lines, independently of the parser."""
    c: Counter = Counter()
    for line in path.read_bytes().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            c["bad"] += 1
            continue
        p = obj.get("payload") or {}
        if obj.get("type") == "event_msg" and p.get("type") == "user_message":
            c["user_message"] += 1
        elif obj.get("type") == "response_item" and p.get("type") in (
                "function_call", "custom_tool_call", "local_shell_call"):
            c["call"] += 1
        elif obj.get("type") == "response_item" and p.get("type") in (
                "function_call_output", "custom_tool_call_output"):
            c["output"] += 1
        elif obj.get("type") == "compacted":
            c["compacted"] += 1
        elif obj.get("type") == "response_item" and p.get("type") == "message" and p.get(
                "role") == "assistant":
            c["assistant_text"] += 1
    return c


@pytest.mark.skipif(not ROOT, reason="set OXIDE_REAL_FIXTURES=../shared/fixtures/real to run")
@pytest.mark.parametrize("path", FILES, ids=[p.name[:40] for p in FILES])
def test_real_codex_counts(path: Path) -> None:
    events = list(codex.parse(path))
    ms = [e.message for e in events if isinstance(e, FoundMessage)]
    parts = Counter(p.type for m in ms for p in m.parts)
    want = raw_counts(path)
    assert sum(1 for m in ms if m.role == "user") == want["user_message"]
    assert parts["tool_call"] == want["call"]
    assert parts["tool_result"] == want["output"]
    assert parts["compaction"] == want["compacted"]
    texts = sum(1 for m in ms if m.role == "assistant" for p in m.parts if p.type == "text")
    assert texts == want["assistant_text"]  # agent_message events do not add text parts
    assert len([e for e in events if isinstance(e, Problem)]) == want["bad"]
    assert isinstance(events[-1], Resumable) and events[-1].offset == path.stat().st_size
    sessions = {e.session.id for e in events if isinstance(e, FoundSession)}
    assert len(sessions) == 1
    calls = {p.get("call_id") for m in ms for p in m.parts if p.type == "tool_call"}
    results = {p.get("call_id") for m in ms for p in m.parts if p.type == "tool_result"}
    assert results <= calls
