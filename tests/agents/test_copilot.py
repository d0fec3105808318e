"""GitHub Copilot CLI: parse the real sessions exactly, restart anywhere, discover, export round trip
(line for line) and other agents' sessions with their tools handed over, damage."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, FoundMessage, Resumable
from oxide_git.agents.copilot import agent as copilot
from oxide_git.core.model import (
    Message,
    Part,
    Session,
    from_iso,
    mark_compacted,
    message_id_for,
    session_id_for,
)
from tests.agents.replay import damage, poke, replay

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "copilot"
PLAIN = "01fbf44d-0f39-4b67-aab1-efc7e7ef9294"  # two prompts (the second through --resume), 3 tools
SUB = "ffaff6d1-9cc2-48fc-8143-f42a14a75dbd"  # a sub-agent run by the task tool
THINK = "81c03215-76d1-48c4-bea3-4d764f350eaa"  # Responses API: reasoning on the answers
COMPACT = "2de21d16-5cff-4cb8-b8d9-1a23cce0ca32"  # a compaction that began in a turn, ended later
REWIND = "4ed06c1f-a06c-46d6-99ed-06ddf87c13ad"  # /rewind in the terminal UI, then two more prompts
REAL = [f"{PLAIN}/events.jsonl", f"{SUB}/events.jsonl", f"{THINK}/events.jsonl", f"{COMPACT}/events.jsonl",
        f"{REWIND}/events.jsonl"]
ALL = [*REAL, "edge_cases.jsonl"]


def run(path: Path, offset: int = 0, state: Any = None, msgs: list | None = None):
    """Parse like the importer: messages after the last Resumable are replaced on restart."""
    return replay(copilot.parse(path, offset=offset, state=state), offset, state, msgs)


def parse_all(name: str):
    msgs, _last, sessions, problems, unknown = run(FIX / name)
    return msgs, sessions, problems, unknown


def kinds(m: Message) -> list[str]:
    return [str(p.get("kind")) if p.type == "other" else p.type for p in m.parts]


def own(msgs: list, sid: str) -> list[Message]:
    return [m for s, m in msgs if s == sid]


# --- parse ----------------------------------------------------------------------------------------


def test_a_real_session_groups_its_events_into_turns():
    msgs, sessions, problems, unknown = parse_all(REAL[0])
    assert problems == [] and unknown == []
    (s,) = sessions.values()
    assert s.native_id == PLAIN and s.agent == "copilot"
    assert s.id == session_id_for("copilot", PLAIN, from_iso("2026-12-01T22:07:31.775Z"))
    assert (s.cwd, s.branch, s.model) == ("/tmp/copilot/proj", "master", "fake-model")
    assert s.extra == {"copilotVersion": "1.0.102", "producer": "copilot-agent", "gitRoot": "/tmp/copilot/proj",
                       "headCommit": "be97c8ce1f279ddcd21ff8e6711e96e6ff73b740"}
    assert s.updated_at == from_iso("2026-12-01T22:07:46.578Z")
    ms = own(msgs, s.id)
    assert [m.role for m in ms] == ["system", "user", "system", "assistant", "tool", "assistant", "tool",
                                    "assistant", "tool", "assistant", "system", "user", "assistant"]
    start, prompt, sysprompt, a1, t1, _a2, _t2, _a3, _t3, done, resumed, prompt2, done2 = ms
    assert kinds(start) == ["session.start", "session.permissions_changed"]
    assert prompt.parts[0].type == "text" and prompt.parts[0].get("text") == (
        "COPILOT-PROMPT-1: make shell.txt with a shell command, then write notes.txt and edit it.")
    assert prompt.native_id == "b01d4558-b0d8-4f39-9e64-d540c2d5f98d"
    assert prompt.created_at == from_iso("2026-12-01T22:07:31.977Z")
    assert sysprompt.is_harness() and sysprompt.text().startswith("You are the GitHub Copilot CLI")
    assert not prompt.is_harness()
    assert kinds(a1) == ["assistant.turn_start", "session.usage_record", "tool_call"]
    call = a1.parts[2]
    assert (call.get("call_id"), call.get("name"), call.get("input")) == (
        "call_b92a68b6cddc487aaf1041f0", "bash",
        {"command": "echo from-shell | tee shell.txt", "description": "Run the scripted command"})
    assert a1.model == "fake-model" and a1.usage == {"inputTokens": 100, "outputTokens": 20,
                                                     "cacheReadTokens": 0, "cacheWriteTokens": 0}
    assert a1.cost == 0.0
    assert kinds(t1) == ["tool.execution_start", "tool_result", "assistant.turn_end"]
    res = t1.parts[1]
    assert (res.get("call_id"), res.get("is_error")) == ("call_b92a68b6cddc487aaf1041f0", False)
    assert res.get("output") == "from-shell\n<shellId: 0 completed with exit code 0>"
    assert done.text() == "Done with one." and kinds(done)[-2:] == ["assistant.turn_end", "session.shutdown"]
    assert kinds(resumed) == ["session.resume"]  # Copilot's resume: the new process's first event
    assert prompt2.text() == "PROMPT-2: now just say you are done." and done2.text() == "Done with two."
    calls = [p for m in ms for p in m.parts if p.type == "tool_call"]
    results = [p for m in ms for p in m.parts if p.type == "tool_result"]
    assert [c.get("name") for c in calls] == ["bash", "create", "edit"]
    assert [c.get("call_id") for c in calls] == [r.get("call_id") for r in results]


def test_a_sub_agent_is_a_child_session_hanging_on_its_task_call():
    msgs, sessions, problems, _u = parse_all(REAL[1])
    assert problems == []
    main = next(s for s in sessions.values() if s.parent_id is None)
    (sub,) = [s for s in sessions.values() if s.parent_id == main.id]
    agent = "7d808882-fb2e-4999-bf60-a7a15f40fc4f"
    assert sub.native_id == f"{SUB}/agent-{agent}"
    assert sub.extra == {"agent_id": agent, "parent_native_id": SUB,
                         "parent_call_id": "call_b916c015189241b3be4e6d35", "agent_name": "general-purpose",
                         "agent_display_name": "sub"}
    subs = own(msgs, sub.id)
    assert [m.role for m in subs] == ["system", "user", "system", "assistant", "tool", "assistant"]
    assert subs[1].text() == "SUBTASK-1: run echo from-sub"
    assert kinds(subs[0]) == ["subagent.started", "session.model_change", "subagent.configured"]
    assert kinds(subs[-1])[-1] == "subagent.completed"
    mains = own(msgs, main.id)
    assert not any("SUBTASK-1" in m.text() for m in mains if m.role == "user")
    task = next(p for m in mains for p in m.parts if p.type == "tool_call")
    assert task.get("name") == "task" and task.get("call_id") == sub.extra["parent_call_id"]
    result = next(p for m in mains for p in m.parts if p.type == "tool_result")
    assert result.get("output") == "Sub done."
    # every line of the file is in one of the two sessions, once
    n_lines = len((FIX / REAL[1]).read_bytes().splitlines())
    assert sum(1 for _s, m in msgs for p in m.parts if p.get("ev")) == n_lines


def test_reasoning_of_the_responses_api_is_a_reasoning_part():
    msgs, _s, _p, _u = parse_all(REAL[2])
    answers = [m for _s, m in msgs if m.role == "assistant"]
    thoughts = [p.get("text") for m in answers for p in m.parts if p.type == "reasoning"]
    assert thoughts == ["Thinking about the shell.", "Done thinking."]
    ev = next(p for p in answers[0].parts if p.type == "reasoning").get("ev")
    assert ev["data"]["encryptedContent"].startswith("gAAAA")  # kept on the line, written back


def test_edge_cases_errors_unknown_types_compaction_and_parallel_calls():
    msgs, _sessions, problems, unknown = parse_all("edge_cases.jsonl")
    assert [(p.line, p.text) for p in problems] == [(9, "not a JSON object, skipped")]
    assert [u.kind for u in unknown] == ["assistant.intent", "session.future_thing"]
    assert all(u.version == "copilot 1.0.102" for u in unknown)
    ms = [m for _s, m in msgs]
    assert [m.role for m in ms] == ["system", "user", "system", "assistant", "tool", "system", "user",
                                    "assistant"]
    answer, tool, compact = ms[3], ms[4], ms[5]
    assert [p.type for p in answer.parts][2:] == ["reasoning", "text", "tool_call", "tool_call"]
    assert answer.cost == 1e21 and answer.usage == {"inputTokens": 10, "outputTokens": 5}
    failed = next(p for p in tool.parts if p.type == "tool_result")
    assert (failed.get("call_id"), failed.get("output"), failed.get("is_error")) == ("c1", "exit 1", True)
    assert kinds(tool)[2:] == ["assistant.intent", "session.future_thing", "abort",
                               "assistant.turn_end"]  # kept whole, in place
    # the compaction's start is the boundary; its summary comes from the complete line, which
    # keeps it too (the line is written back from its own data)
    assert kinds(compact) == ["session.compaction_start", "compaction", "session.compaction_complete"]
    assert compact.is_compaction() and compact.parts[1].get("summary") == "We tried to fix a bug; bash failed."
    assert compact.parts[2].get("raw")["summaryContent"] == compact.parts[1].get("summary")
    assert ms[6].text() == "again"
    assert ms[1].text() == "Fix the bug — über"
    # the usage line's float is written by Copilot as serde writes it (1e21): kept as its text
    usage_ev = answer.parts[1].get("ev")
    assert usage_ev["raw_line"].count('"cost":1e21') == 1
    odd = ms[7].parts[-1].get("ev")
    assert odd["keys"] == ["id", "type", "data", "timestamp", "parentId"]


def test_a_real_compaction_is_a_boundary_at_its_start_with_the_summary_of_its_end():
    """Copilot 1.0.102 compacts in the background: ``session.compaction_start`` at the start of a
    turn, the turn goes on, ``session.compaction_complete`` (the summary) lands in a later turn; its
    resume sends the summary then everything after the start. So the start's line opens the
    compaction message, which takes the summary from the complete line."""
    msgs, sessions, problems, unknown = parse_all(REAL[3])
    assert not problems and not unknown and len(sessions) == 1
    ms = [m for _s, m in msgs]
    [i] = [i for i, m in enumerate(ms) if m.is_compaction()]
    c = ms[i]
    assert (c.role, kinds(c)) == ("system", ["session.compaction_start", "compaction"])
    summary = "COMPAT-SUMMARY: the user had shell.txt made and notes.txt written and edited."
    assert c.parts[1].data == {"summary": summary, "replaces": None, "messagesRemoved": 0,
                               "tokensRemoved": 11006, "checkpointNumber": 1}
    assert c.parts[0].get("raw")["trigger"] == "threshold"
    # the big tool output is before the boundary, the turn the compaction began in after it
    assert any("seq 1 4000" in str(p.get("input")) for m in ms[:i] for p in m.parts)
    assert [m.role for m in ms[i + 1:i + 3]] == ["assistant", "tool"]
    assert ms[i + 1].usage and [p.get("input") for p in ms[i + 1].parts if p.type == "tool_call"] == [
        {"command": "echo one", "description": "Run the scripted command"}]
    done = next(p for m in ms[i + 1:] for p in m.parts if p.get("kind") == "session.compaction_complete")
    assert done.get("raw")["summaryContent"] == summary and done.get("raw")["success"] is True
    assert mark_compacted(ms)[i - 1].compacted and not mark_compacted(ms)[i].compacted


def test_a_compaction_still_under_way_holds_no_restart_point_and_no_summary(tmp_path):
    data = (FIX / REAL[3]).read_bytes()
    cut = data.index(b'"type":"session.compaction_complete"')
    cut = data.rindex(b"\n", 0, cut) + 1
    path = tmp_path / "events.jsonl"
    path.write_bytes(data[:cut])
    events = list(copilot.parse(path))
    start = data.index(b'{"type":"session.compaction_start"')
    assert max(ev.offset for ev in events if isinstance(ev, Resumable)) == start
    ms = [ev.message for ev in events if isinstance(ev, FoundMessage)]
    assert not any(m.is_compaction() for m in ms)
    assert [kinds(m) for m in ms][6:8] == [["session.compaction_start"], ["session.usage_record",
                                                                          "tool_call"]]


def test_a_rewind_copilot_made_in_place_is_a_fork_of_the_kept_messages():
    """``/rewind`` ("Conversation only") rewrote the file: the kept events, a ``session.info`` of
    ``infoType: "rewind"``, then the next prompts (one of them through ``--resume``). The session
    is what was kept; the fork ``<id>/rewind-<info id>`` holds copies of it, the info and what
    followed, and hangs on the last kept message."""
    msgs, sessions, problems, unknown = parse_all(REAL[4])
    assert not problems and not unknown
    main = next(s for s in sessions.values() if s.parent_id is None)
    [fork] = [s for s in sessions.values() if s.parent_id == main.id]
    info = next(json.loads(ln) for ln in (FIX / REAL[4]).read_text().splitlines() if '"session.info"' in ln)
    assert fork.native_id == f"{REWIND}/rewind-{info['id'][:8]}"
    kept, theirs = own(msgs, main.id), own(msgs, fork.id)
    assert theirs[:len(kept)] == kept
    assert (theirs[len(kept)].role, kinds(theirs[len(kept)])) == ("system", ["session.info"])
    prompts = [m.text() for m in theirs if m.role == "user"]
    assert prompts == ["SAY-1: one", "PROMPT-2: after the rewind", "PROMPT-4: four"]
    assert [m.text() for m in kept if m.role == "user"] == ["SAY-1: one"]
    assert fork.fork_message_id == message_id_for(main.id, len(kept) - 1, kept[-1].created_at)
    assert "Said one." in kept[-1].text()


def test_a_partial_last_line_is_not_consumed(tmp_path):
    data = (FIX / REAL[0]).read_bytes()
    path = tmp_path / "s" / "events.jsonl"
    path.parent.mkdir()
    cut = data.rfind(b"\n", 0, len(data) - 1) + 20  # into the last line
    path.write_bytes(data[:cut])
    msgs, (offset, state, n), _s, problems, _u = run(path)
    assert problems == [] and offset < cut
    path.write_bytes(data)
    whole = run(path)[0]
    again, *_ = run(path, offset, state, msgs[:n])
    assert again == whole


def test_the_session_id_falls_back_to_the_folder_name(tmp_path):
    lines = (FIX / REAL[0]).read_bytes().splitlines(keepends=True)
    path = tmp_path / "a1b2c3d4-0000-4000-8000-000000000000" / "events.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(lines[1:]))  # no session.start
    _m, sessions, _p, _u = parse_all(str(path))
    (s,) = sessions.values()
    assert s.native_id == "a1b2c3d4-0000-4000-8000-000000000000" and s.cwd is None


def test_the_name_the_user_gave_is_the_title(tmp_path):
    path = tmp_path / PLAIN / "events.jsonl"
    path.parent.mkdir()
    path.write_bytes((FIX / REAL[0]).read_bytes())
    yaml = path.parent / "workspace.yaml"
    yaml.write_text(f"id: {PLAIN}\nname: 'COPILOT-PROMPT-1: the first prompt'\nuser_named: false\n")
    assert {s.title for s in parse_all(str(path))[1].values()} == {None}  # Copilot's own name: ours is better
    yaml.write_text(f"id: {PLAIN}\nname: 'It''s my feature'\nuser_named: true\nsummary_count: 0\n")
    msgs, (offset, state, n), sessions, _p, _u = run(path)
    assert [s.title for s in sessions.values()] == ["It's my feature"]
    yaml.write_text("name: \"Renamed \\u00e9\"\nuser_named: true\n")
    _m, _l, again, _p, _u = run(path, offset, state, msgs[:n])
    assert [s.title for s in again.values()] == ["Renamed é"]


# --- incremental ----------------------------------------------------------------------------------


def _copy(name: str, dest: Path) -> Path:
    shutil.copytree(FIX, dest, dirs_exist_ok=True)
    return dest / name


def _cuts(data: bytes) -> list[int]:
    lines = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    return sorted({0, len(data), *lines, *range(0, len(data), 4999)})


@pytest.mark.parametrize("name", ALL)
def test_restart_from_any_point_gives_the_same_result(name, tmp_path):
    path = _copy(name, tmp_path / "store")
    data = path.read_bytes()
    whole, _l, whole_sessions, _p, _u = run(path)
    for cut in _cuts(data):
        path.write_bytes(data[:cut])
        msgs, last, _s, _p, _u = run(path)
        offset, state, n = last
        path.write_bytes(data)
        msgs, _l, sessions, _p, _u = run(path, offset, json.loads(json.dumps(state)), msgs[:n])
        assert msgs == whole, f"cut at {cut}"
        assert {k: v for k, v in sessions.items() if k in whole_sessions} == {
            k: v for k, v in whole_sessions.items() if k in sessions}


def test_restart_points_are_never_inside_a_sub_agent_run():
    data = (FIX / REAL[1]).read_bytes()
    offsets = [ev.offset for ev in copilot.parse(FIX / REAL[1]) if isinstance(ev, Resumable)]
    for off in offsets:
        before = data[:off].splitlines()
        started = sum(1 for ln in before if b'"type":"subagent.started"' in ln)
        ended = sum(1 for ln in before if b'"type":"subagent.completed"' in ln)
        assert started == ended, off


# --- discover -------------------------------------------------------------------------------------


def _install(root: Path, sid: str, cwd: str) -> Path:
    dest = root / "session-state" / sid / "events.jsonl"
    dest.parent.mkdir(parents=True)
    dest.write_bytes((FIX / REAL[0]).read_bytes().replace(b'"cwd":"/tmp/copilot/proj"', json.dumps(
        {"cwd": cwd}, separators=(",", ":"))[1:-1].encode()))
    return dest


def test_discover_takes_the_sessions_started_in_a_worktree(tmp_path):
    repo, other = tmp_path / "repo", tmp_path / "repo-2"
    default = tmp_path / "home" / ".copilot"
    mine = _install(default, "a", str(repo / "sub"))
    _install(default, "b", str(other))
    env = AgentEnv(home=tmp_path / "home", environ={}, worktrees=(repo,))
    assert copilot.discover(env) == [mine]
    moved = tmp_path / "elsewhere"
    theirs = _install(moved, "c", str(repo))
    env = AgentEnv(home=tmp_path / "home", environ={"COPILOT_HOME": str(moved)}, worktrees=(repo,))
    assert copilot.discover(env) == [theirs]
    assert copilot.watch_roots(env) == [moved / "session-state"]
    assert copilot.discover(AgentEnv(home=tmp_path / "nobody", environ={}, worktrees=(repo,))) == []


# --- export ---------------------------------------------------------------------------------------


def _main(name: str) -> tuple[Session, list[Message]]:
    msgs, sessions, _p, _u = parse_all(name)
    s = next(x for x in sessions.values() if x.parent_id is None)
    return s, own(msgs, s.id)


@pytest.mark.parametrize("name", [n for n in ALL if REWIND not in n])  # a rewind: two sessions
def test_export_writes_every_line_back_byte_for_byte(name, tmp_path):
    s, ms = _main(name)
    exp = copilot.export(s, ms, AgentEnv(home=tmp_path, environ={}))
    assert exp.native_id == s.native_id and exp.lost == []
    assert exp.command == ["copilot", "--resume", s.native_id]
    ((path, body),) = exp.files.items()
    assert path == tmp_path / ".copilot" / "session-state" / s.native_id / "events.jsonl"
    data = (FIX / name).read_bytes()
    want = b"".join(ln + b"\n" for ln in data.splitlines()
                    if ln.startswith(b"{") and b'"agentId"' not in ln)  # sub-agents: their own session
    assert body == want
    path.parent.mkdir(parents=True)
    path.write_bytes(body)
    again, sessions, _p, _u = parse_all(str(path))
    assert [m for _s, m in again] == ms  # the same native ids, parts and all
    assert s.id in sessions


def test_a_changed_message_touches_only_its_line(tmp_path):
    s, ms = _main(REAL[0])
    i = next(i for i, m in enumerate(ms) if m.role == "user")
    p = ms[i].parts[0]
    ms[i] = Message(ms[i].role, (Part(p.type, {**p.data, "text": "[REDACTED]"}),), created_at=ms[i].created_at,
                    native_id=ms[i].native_id)
    body = next(iter(copilot.export(s, ms, AgentEnv(home=tmp_path, environ={})).files.values()))
    old, new = (FIX / REAL[0]).read_bytes().splitlines(), body.splitlines()
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    assert len(changed) == 1
    assert json.loads(changed[0][1])["data"]["content"] == "[REDACTED]"


def _foreign() -> tuple[Session, list[Message]]:
    s = Session(id="0" * 32, agent="claude", native_id="n", cwd="/work/project", branch="dev", created_at=1000)
    ms = [
        Message("system", (Part.text("<env>harness</env>"),), extra={"harness": True}),
        Message("user", (Part.text("do it"),), created_at=2000),
        Message("assistant", (Part.reasoning("hmm"), Part.text("ok"),
                              Part.tool_call("t1", "Bash", {"command": "ls"}),
                              Part.tool_call("t2", "Write", {"file_path": "a.txt", "content": "x\n"}),
                              Part.tool_call("t3", "Edit", {"file_path": "/work/project/a.txt",
                                                            "old_string": "x", "new_string": "y"}),
                              Part.tool_call("t4", "WebSearch", {"query": "q"}),
                              Part.tool_call("t5", "Bash", {"command": "never answered"})), created_at=3000),
        Message("user", (Part.tool_result("t1", "a.txt"), Part.tool_result("t2", "written"),
                         Part.tool_result("t3", [{"type": "text", "text": "edited"}], True),
                         Part.tool_result("t4", "found"), Part.other("attachment", {"x": 1})), created_at=4000),
        Message("assistant", (Part.text("done"),), created_at=5000),
    ]
    return s, ms


def test_another_agents_session_becomes_copilot_events_with_its_tools(tmp_path):
    s, ms = _foreign()
    exp = copilot.export(s, ms, AgentEnv(home=tmp_path, environ={}))
    assert exp.native_id == str(uuid.uuid5(uuid.NAMESPACE_URL, f"oxide:{s.id}"))
    ((path, body),) = exp.files.items()
    events = [json.loads(ln) for ln in body.splitlines()]
    assert [e["type"] for e in events] == [
        "session.start", "user.message", "assistant.message", "tool.execution_start",
        "tool.execution_complete", "tool.execution_start", "tool.execution_complete",
        "tool.execution_start", "tool.execution_complete", "assistant.message", "assistant.message"]
    assert all(e["parentId"] == (events[i - 1]["id"] if i else None) for i, e in enumerate(events))
    start = events[0]["data"]
    assert start["sessionId"] == exp.native_id and start["context"] == {"cwd": "/work/project", "branch": "dev"}
    answer = events[2]["data"]
    assert answer["toolRequests"] == [
        {"toolCallId": "t1", "name": "bash", "arguments": {"command": "ls", "description": "Run a shell command"},
         "type": "function"},
        {"toolCallId": "t2", "name": "create", "arguments": {"path": "/work/project/a.txt", "file_text": "x\n"},
         "type": "function"},
        {"toolCallId": "t3", "name": "edit", "arguments": {"path": "/work/project/a.txt", "old_str": "x",
                                                           "new_str": "y"}, "type": "function"}]
    assert answer["content"].startswith("ok\n\n[tool call WebSearch (t4)]")
    assert "[tool call Bash (t5)]" in answer["content"]
    edited = events[8]["data"]
    assert edited == {"toolCallId": "t3", "success": False, "result": {"content": "edited"}}
    assert events[9]["data"]["content"].startswith("[tool result (t4)]\nfound")
    assert events[10]["data"]["content"] == "done"
    assert "<env>" not in body.decode()
    assert sorted(exp.lost) == sorted([
        "1 message(s) of context claude's harness injected (system prompt, environment, instructions) were "
        "left out",
        "1 reasoning parts (assistant) were left out",
        "1 record of claude (attachment) has no place in a Copilot session and was left out",
        "1 tool result parts became plain text",
        "2 tool call parts became plain text",
        "3 tool calls of claude were handed over as Copilot's own tool calls"])
    # what oxide wrote parses back into the same messages, ids and all, every time
    path.parent.mkdir(parents=True)
    path.write_bytes(body)
    first = [m.native_id for _s, m in run(path)[0]]
    assert first == [m.native_id for _s, m in run(path)[0]] and len(set(first)) == len(first)
    assert copilot.export(s, ms, AgentEnv(home=tmp_path, environ={})).files[path] == body


def test_a_fork_of_a_copilot_session_gets_a_new_id_and_keeps_its_tools(tmp_path):
    s, ms = _main(REAL[0])
    fork = Session(id="f" * 32, agent="copilot", native_id=s.native_id, cwd=s.cwd, created_at=s.created_at)
    exp = copilot.export(fork, ms, AgentEnv(home=tmp_path, environ={}))
    assert exp.native_id != s.native_id
    events = [json.loads(ln) for ln in next(iter(exp.files.values())).splitlines()]
    calls = [r["name"] for e in events if e["type"] == "assistant.message" for r in e["data"]["toolRequests"]]
    assert calls == ["bash", "create", "edit"]
    assert not any(e["type"] == "system.message" for e in events)  # Copilot writes its own again


# --- damage ---------------------------------------------------------------------------------------


def _committed(path: Path, data: bytes) -> list:
    path.write_bytes(data)
    msgs, (_o, _s, n), *_ = run(path)
    return msgs[:n]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(ALL),
    where=st.floats(0, 1),
    mode=st.sampled_from(["truncate", "overwrite", "insert"]),
    junk=st.binary(min_size=1, max_size=40),
)
def test_damage_never_raises_nor_loses_earlier_messages(tmp_path, name, where, mode, junk):
    path = _copy(name, tmp_path / "d")
    data = path.read_bytes()
    at = int(where * len(data))
    bad = damage(data, at, mode, junk)
    before = _committed(path, data[: data.rfind(b"\n", 0, at) + 1])
    path.write_bytes(bad)
    msgs = run(path)[0]
    assert msgs[: len(before)] == before


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(ALL),
    line=st.integers(0, 60),
    key=st.sampled_from(["type", "data", "id", "timestamp", "parentId", "agentId", "content", "toolRequests",
                         "toolCallId", "name", "arguments", "result", "success", "context", "sessionId",
                         "usage", "reasoningText", "summaryContent", "startTime", "model"]),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=6,
    ),
)
def test_odd_values_never_raise_and_still_round_trip(tmp_path, name, line, key, value):
    path = _copy(name, tmp_path / "o")
    lines = path.read_bytes().split(b"\n")
    i = line % len(lines)
    try:
        obj = json.loads(lines[i])
    except ValueError:
        return

    poke(obj, key, value)
    lines[i] = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    path.write_bytes(b"\n".join(lines))
    msgs, _last, sessions, _p, _u = run(path)
    for _sid, m in msgs:
        assert isinstance(m, Message)
    for s in sessions.values():
        copilot.export(s, [m for sid, m in msgs if sid == s.id], AgentEnv(home=tmp_path, environ={}))
