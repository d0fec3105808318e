"""Compatibility suite over the real OpenCode export files (set OXIDE_REAL_FIXTURES)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from oxide_git.agents import AgentEnv, FoundMessage, FoundSession, Problem, Resumable
from oxide_git.agents.opencode import agent as opencode
from oxide_git.core.model import Message, PartType

pytestmark = pytest.mark.real

ROOT = os.environ.get("OXIDE_REAL_FIXTURES")
if not ROOT:
    pytest.skip("set OXIDE_REAL_FIXTURES=../shared/fixtures/real to run", allow_module_level=True)
FILES = sorted((Path(ROOT) / "opencode").glob("*.json"))


def test_real_fixtures_present() -> None:
    assert FILES, f"no OpenCode exports under {ROOT}/opencode"


@pytest.mark.parametrize("path", FILES, ids=[p.name[:40] for p in FILES])
def test_real_opencode_export(path: Path) -> None:
    raw = json.loads(path.read_text())
    raw_msgs = raw["messages"]
    raw_parts = [p for m in raw_msgs for p in m["parts"]]
    roles = Counter(m["info"]["role"] for m in raw_msgs)
    n_tool = sum(p["type"] == "tool" for p in raw_parts)
    n_results = sum(p["type"] == "tool" and ("output" in p["state"] or "error" in p["state"])
                    for p in raw_parts)
    n_errors = sum(p["type"] == "tool" and p["state"]["status"] == "error" for p in raw_parts)
    n_compaction = sum(p["type"] == "compaction" for p in raw_parts)
    n_text = sum(p["type"] == "text" for p in raw_parts)
    n_other = sum(p["type"] not in ("text", "reasoning", "tool", "file", "patch", "compaction")
                  for p in raw_parts)

    events = list(opencode.parse(path))
    assert not [e for e in events if isinstance(e, Problem)]
    assert isinstance(events[-1], Resumable)
    [session] = [e.session for e in events if isinstance(e, FoundSession)]
    msgs = [e.message for e in events if isinstance(e, FoundMessage)]
    parts = [p for m in msgs for p in m.parts]

    assert session.native_id == raw["info"]["id"]
    assert session.title == raw["info"]["title"]
    assert session.cwd == raw["info"]["directory"]
    assert Counter(m.role for m in msgs) == roles
    assert [m.native_id for m in msgs] == sorted(
        (m["info"]["id"] for m in raw_msgs),
        key=lambda i: next(m["info"]["time"]["created"] for m in raw_msgs if m["info"]["id"] == i),
    )
    types = Counter(p.type for p in parts)
    assert types[PartType.TOOL_CALL] == n_tool
    assert types[PartType.TOOL_RESULT] == n_results
    assert sum(bool(p.get("is_error")) for p in parts if p.type == PartType.TOOL_RESULT) == n_errors
    assert types[PartType.COMPACTION] == n_compaction
    assert types[PartType.TEXT] == n_text
    assert types[PartType.OTHER] == n_other
    assert len(parts) == len(raw_parts) + n_results

    # every summary message that answers a compaction request gives it its text
    summaries = {m["info"]["parentID"]: m for m in raw_msgs if m["info"].get("summary") is True
                 and m["info"]["role"] == "assistant"}
    for m in msgs:
        for p in m.parts:
            if p.type == PartType.COMPACTION and m.native_id in summaries:
                assert p.get("summary")
                assert p.get("summary_message_id") == summaries[m.native_id]["info"]["id"]
    if n_compaction and any(m.is_compaction() and m.native_id in summaries for m in msgs):
        first = next(i for i, m in enumerate(msgs) if m.is_compaction())
        assert all(m.compacted for m in msgs[:first])

    # parse twice: identical; export and parse back: identical messages
    assert list(opencode.parse(path)) == events
    env = AgentEnv(home=Path(os.environ["HOME"]), environ=dict(os.environ),
                   worktrees=[Path(raw["info"]["directory"])])
    exp = opencode.export(session, msgs, env)
    assert not exp.lost and exp.native_id == raw["info"]["id"]
    # OpenCode 1.18 loads sessions from opencode.db only: the export is rows in a fresh database
    assert not exp.files and len(exp.databases) == 1
    ((db, rows),) = exp.databases.items()
    assert opencode.write_database(Path(db), rows) == "written"
    assert opencode.write_database(Path(db), rows) != "written"  # the same rows again: nothing to do
    again = [e.message for e in opencode.parse(Path(db), env=env) if isinstance(e, FoundMessage)]

    def strip(v: object) -> object:  # a database row also records its times and key order (oxide_row)
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k != "oxide_row"}
        return [strip(x) for x in v] if isinstance(v, list | tuple) else v

    def plain(m: Message) -> object:
        return strip([m.role, [(p.type, p.data) for p in m.parts], m.native_id, m.created_at,
                      m.model, m.usage, m.cost, m.extra])
    assert [plain(m) for m in again] == [plain(m) for m in msgs]
