"""Compatibility suite over real Claude Code transcripts (set OXIDE_REAL_FIXTURES).

Every expected count is computed here from the raw JSON lines, never through the parser.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from oxide_git.agents import AgentEnv, FoundMessage, FoundSession, Problem, Resumable
from oxide_git.agents.claude import agent as claude
from oxide_git.core.model import PartType, from_iso

pytestmark = pytest.mark.real

ROOT = os.environ.get("OXIDE_REAL_FIXTURES")
if not ROOT:
    pytest.skip("set OXIDE_REAL_FIXTURES=../shared/fixtures/real to run", allow_module_level=True)
BASE = Path(ROOT) / "claude"
FILES = sorted(BASE.rglob("*.jsonl"))


def _raw(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _blocks(obj: dict[str, Any]) -> list[Any]:
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    return content if isinstance(content, list) else []


def _parse(path: Path, offset: int = 0, state: Any = None, msgs: list | None = None):
    msgs = [] if msgs is None else msgs
    last = (offset, state, len(msgs))
    sessions = {}
    problems = []
    for ev in claude.parse(path, offset=offset, state=state):
        if isinstance(ev, FoundMessage):
            msgs.append((ev.session_id, ev.message))
        elif isinstance(ev, FoundSession):
            sessions[ev.session.id] = ev.session
        elif isinstance(ev, Resumable):
            last = (ev.offset, ev.state, len(msgs))
        elif isinstance(ev, Problem):
            problems.append(ev)
    return msgs, last, sessions, problems


def test_real_fixtures_present() -> None:
    assert FILES, f"no Claude transcripts under {BASE}"


@pytest.mark.parametrize("path", FILES, ids=[p.name[:40] for p in FILES])
def test_real_claude_counts(path: Path) -> None:
    raw = _raw(path)
    users = [o for o in raw if o.get("type") == "user" and isinstance(o.get("message"), dict)]
    assistants = [o for o in raw if o.get("type") == "assistant" and isinstance(o.get("message"), dict)]
    only_results = [o for o in users if _blocks(o) and all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in _blocks(o))]
    summaries = [o for o in users if o.get("isCompactSummary")]
    n_prompts = len(users) - len(only_results) - len(summaries)
    tool_use_ids = {b["id"] for o in assistants for b in _blocks(o) if b.get("type") == "tool_use"}
    n_results = sum(isinstance(b, dict) and b.get("type") == "tool_result"
                    for o in users for b in _blocks(o))
    n_errors = sum(isinstance(b, dict) and b.get("type") == "tool_result" and bool(b.get("is_error"))
                   for o in users for b in _blocks(o))
    n_thinking = sum(b.get("type") in ("thinking", "redacted_thinking")
                     for o in assistants for b in _blocks(o))
    n_boundaries = sum(o.get("type") == "system" and o.get("subtype") == "compact_boundary" for o in raw)
    n_meta = len(raw) - len(users) - len(assistants) - n_boundaries
    response_ids = {o["message"].get("id") for o in assistants}
    first_ts = next(o.get("timestamp") or o.get("snapshot", {}).get("timestamp") for o in raw
                    if o.get("timestamp") or isinstance(o.get("snapshot"), dict))

    msgs, _last, sessions, problems = _parse(path)
    assert problems == []
    messages = [m for _sid, m in msgs]
    parts = Counter(p.type for m in messages for p in m.parts)
    roles = Counter(m.role for m in messages)
    assert roles["user"] == n_prompts
    assert roles["tool"] == len(only_results)
    assert roles["assistant"] == len(response_ids)
    assert parts[PartType.TOOL_CALL] == len(tool_use_ids)
    assert parts[PartType.TOOL_RESULT] == n_results
    assert sum(p.get("is_error") for m in messages for p in m.parts
               if p.type == PartType.TOOL_RESULT) == n_errors
    assert parts[PartType.REASONING] == n_thinking
    assert parts[PartType.COMPACTION] == max(n_boundaries, len(summaries))
    assert parts[PartType.OTHER] == n_meta  # nothing dropped
    assert sum(len(m.extra.get("uuids", [m.native_id])) for m in messages
               if m.role != "system" or m.is_compaction()) == len(users) + len(assistants) + n_boundaries
    (session,) = sessions.values()
    first_sid = next(o["sessionId"] for o in raw if isinstance(o.get("sessionId"), str))
    if "subagents" in path.parts:
        assert session.native_id == f"{path.parent.parent.name}/{path.stem}"
        assert session.parent_id is not None
        if not path.stem.startswith("agent-acompact"):
            agent_id = path.stem.removeprefix("agent-")
            calls = [b["tool_use_id"] for o in _raw(path.parent.parent.with_suffix(".jsonl"))
                     if isinstance(o.get("toolUseResult"), dict)
                     and o["toolUseResult"].get("agentId") == agent_id
                     for b in _blocks(o) if b.get("type") == "tool_result"]
            assert session.extra["parent_call_id"] == calls[0]
    else:
        assert session.native_id in (path.stem, first_sid)
        assert session.parent_id is None
    assert session.created_at == from_iso(first_ts)


@pytest.mark.parametrize("path", FILES, ids=[p.name[:40] for p in FILES])
def test_real_claude_restart_in_the_middle(path: Path, tmp_path: Path) -> None:
    dest = tmp_path / path.relative_to(BASE)
    dest.parent.mkdir(parents=True)
    data = path.read_bytes()
    dest.write_bytes(data)
    whole = _parse(dest)[0]
    for frac in (0.13, 0.5, 0.77):
        cut = int(len(data) * frac)
        dest.write_bytes(data[:cut])
        msgs, (offset, state, n), _s, _p = _parse(dest)
        dest.write_bytes(data)
        assert _parse(dest, offset, json.loads(json.dumps(state)), msgs[:n])[0] == whole


@pytest.mark.parametrize("path", [p for p in FILES if "subagents" not in p.parts],
                         ids=lambda p: p.name[:40])
def test_real_claude_export_round_trip(path: Path, tmp_path: Path) -> None:
    msgs, _last, sessions, _p = _parse(path)
    (session,) = sessions.values()
    messages = [m for _sid, m in msgs]
    ex = claude.export(session, messages, AgentEnv(home=tmp_path, environ={}))
    assert ex.native_id == session.native_id and ex.lost == []
    ((out, body),) = ex.files.items()
    if session.parent_id is None:  # a main session comes back as Claude wrote it, line for line
        from tests.compat.checks import line_identity

        same, total = line_identity(path.read_bytes(), body)
        assert same == total, f"{same} of {total} lines identical"
    out.parent.mkdir(parents=True)
    out.write_bytes(body)
    back = [m for _sid, m in _parse(out)[0]]

    def norm(m: Any) -> Any:
        parts = [(p.type, {k: v for k, v in p.data.items() if k != "raw"}) for p in m.parts]
        return m.role, parts, m.native_id, m.model, m.usage
    assert [norm(m) for m in back] == [norm(m) for m in messages]
