"""Qwen Code: parse a real 0.24.4 file exactly, restart anywhere, write it back byte for byte,
follow a branch of the parentUuid chain as a fork, discover, hand another agent's session over."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, Resumable
from oxide_git.agents.gemini.records import ACK
from oxide_git.agents.qwen import agent as qwen
from oxide_git.core.model import Message, Part, Session, message_id_for, session_id_for
from tests.agents.replay import compacted_session, poke, replay

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "qwen"
SID = "c753d781-2223-4830-999a-641b7cd106a4"
MAIN = FIX / "projects" / "-tmp-gemini-q1-project" / "chats" / f"{SID}.jsonl"
REWIND_ID = "e4770198-ad93-4e27-a794-a0080133d009"
REWIND = FIX / "rewind" / "projects" / "-tmp-cb-rw-project" / "chats" / f"{REWIND_ID}.jsonl"  # a real rewind
COMPRESS = (FIX / "compress" / "projects" / "-tmp-pt-compact-b-test-qwen-compress0-project" / "chats"
            / "a3660604-a2e7-4eb7-9f0e-a6c72592f087.jsonl")  # a real /compress, then a prompt


def env_for(*worktrees: str, home: Path | None = None, environ: dict[str, str] | None = None) -> AgentEnv:
    import os

    return AgentEnv(home=home or Path(os.environ["HOME"]), environ=environ or {},
                    worktrees=tuple(Path(w) for w in worktrees))


def run(path: Path, offset: int = 0, state: Any = None):
    r = replay(qwen.parse(path, offset=offset, state=state), offset, state)
    return r.msgs, r.last, r.sessions, r.problems


def by_session(path: Path) -> tuple[dict[str, Session], dict[str, list[Message]]]:
    msgs, _l, sessions, _p = run(path)
    out: dict[str, list[Message]] = {sid: [] for sid in sessions}
    for sid, m in msgs:
        out[sid].append(m)
    return sessions, out


def shape(m: Message) -> tuple[str, list[str]]:
    return m.role, [p.type for p in m.parts]


def chain(data: bytes) -> list[str]:
    """The uuids Qwen Code 0.24 rebuilds a conversation from: the last record up the parentUuid
    chain (``prepareTranscriptRecords``), in order."""
    recs = [json.loads(x) for x in data.splitlines()]
    by = {r["uuid"]: r for r in recs}
    out, u = [], recs[-1]["uuid"]
    while u in by:
        out.append(u)
        u = by[u]["parentUuid"]
    return out[::-1]


def test_a_real_session_parses_exactly() -> None:
    sessions, msgs = by_session(MAIN)
    [s] = sessions.values()
    assert s.id == session_id_for("qwen", SID, 1796164915766)  # its first record's time
    assert (s.native_id, s.cwd, s.model) == (SID, "/tmp/gemini/q1/project", "fake-model")
    got = msgs[s.id]
    assert [shape(m) for m in got] == [
        ("user", ["text"]), ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]), ("assistant", ["tool_call"]),
        ("user", ["tool_result"]), ("assistant", ["text"]), ("user", ["text"]), ("assistant", ["text"])]
    calls = [p for m in got for p in m.parts if p.type == "tool_call"]
    results = [p for m in got for p in m.parts if p.type == "tool_result"]
    assert [c.get("name") for c in calls] == ["run_shell_command", "write_file", "edit"]
    assert [c.get("call_id") for c in calls] == [r.get("call_id") for r in results]
    assert "Output: from-shell" in results[0].get("output")
    assert got[1].usage == {"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 0,
                            "totalTokenCount": 120, "cachedContentTokenCount": 0}
    assert [m.native_id for m in got][:2] == ["dbf9e047-e177-4668-9221-b27fe3cbf96b",
                                              "320b0dba-9a4c-429e-a880-ff7acc681a9b"]
    # the system records (attribution_snapshot, ui_telemetry) are kept with the message before them
    kept = [x.get("subtype") for m in got for x in m.extra["qwen"]["lines"] if x is not None]
    assert set(kept) == {"attribution_snapshot", "ui_telemetry"} and len(kept) == 15
    assert all("raw" not in m.extra["qwen"] for m in got)
    assert not any(m.is_harness() for m in got)


@pytest.mark.parametrize("path", [MAIN, COMPRESS, REWIND], ids=["main", "compress", "rewind"])
def test_restart_from_every_resumable_gives_the_same_events(path: Path) -> None:
    full = run(path)[0]
    points = [(ev.offset, json.loads(json.dumps(dict(ev.state)))) for ev in qwen.parse(path)
              if isinstance(ev, Resumable)]
    assert len(points) >= 5
    done = 0
    for offset, state in points:
        again = run(path, offset, state)[0]
        done = len(full) - len(again)
        assert again == full[done:], offset


@pytest.mark.parametrize("path", [MAIN, COMPRESS, REWIND], ids=["main", "compress", "rewind"])
def test_a_growing_file_imports_the_same_as_the_whole(path: Path, tmp_path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    grown = tmp_path / path.name
    got: list[tuple[str, Message]] = []
    offset, state, kept = 0, None, 0
    for i in range(len(lines)):
        grown.write_bytes(b"".join(lines[:i + 1]) + b'{"uuid":"hal')
        msgs, (offset2, state2, n), _s, _p = run(grown, offset, state)
        got = got[:kept] + msgs
        offset, state, kept = offset2, state2, kept + n
    assert got == run(path)[0]


def test_a_session_goes_back_byte_for_byte(tmp_path: Path) -> None:
    sessions, msgs = by_session(MAIN)
    [s] = sessions.values()
    exp = qwen.export(s, msgs[s.id], env_for(home=tmp_path))
    assert exp.files == {tmp_path / ".qwen" / "projects" / "-tmp-gemini-q1-project" / "chats" / MAIN.name:
                         MAIN.read_bytes()}
    assert (exp.native_id, exp.command, exp.cwd) == (SID, ["qwen", "--resume", SID], "/tmp/gemini/q1/project")


def test_a_compression_is_a_compaction_that_goes_back_byte_for_byte(tmp_path: Path) -> None:
    """0.24.4's /compress (the compat run): its ``system/chat_compression`` record is a message of
    its own, a compaction whose summary is the first turn of ``compressedHistory``; what came
    before stays (compacted), and the file goes back byte for byte."""
    from oxide_git.core.model import mark_compacted

    sessions, msgs = by_session(COMPRESS)
    [s] = sessions.values()
    got = msgs[s.id]
    assert [shape(m) for m in got] == [
        ("user", ["text"]), ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]), ("assistant", ["tool_call"]),
        ("user", ["tool_result"]), ("assistant", ["text"]), ("system", ["compaction"]),
        ("user", ["text"]), ("assistant", ["text"])]
    comp = got[8].parts[0]
    assert comp.get("summary").startswith(
        "<state_snapshot>\n<overall_goal>COMPAT-SNAPSHOT: the conversation so far, summarised")
    assert (comp.get("replaces"), comp.get("trigger")) == (None, "manual")
    assert [m.compacted for m in mark_compacted(got)] == [True] * 8 + [False] * 3
    assert got[9].text() == "PROMPT-2: now just say you are done."
    exp = qwen.export(s, got, env_for(home=tmp_path))
    assert list(exp.files.values()) == [COMPRESS.read_bytes()]


def test_a_rewind_in_the_cli_is_a_fork_that_keeps_both(tmp_path: Path) -> None:
    """0.24.4's own rewind (the compat run, driven in its interactive UI): two prompts, a rewind to
    before the second one, a third prompt. The ``system/rewind`` record hangs on the first answer:
    what follows is a fork that keeps the first turn; the session keeps the dropped turn."""
    sessions, msgs = by_session(REWIND)
    first, fork = sessions.values()
    assert fork.native_id == f"{REWIND_ID}/branch-1" and fork.parent_id == first.id
    before, after = msgs[first.id], msgs[fork.id]
    assert [m.text() for m in before] == ["PROMPT-1: one", "Done with one.",
                                          "PROMPT-2: two", "Done with two."]
    assert after[:2] == before[:2]
    assert fork.fork_message_id == message_id_for(first.id, 1, before[1].created_at)
    assert [m.text() for m in after[2:]] == ["PROMPT-3: three", "Done with three."]
    exp = qwen.export(first, before, env_for(home=tmp_path / "s"))  # the session: its lines back
    assert list(exp.files.values()) == [REWIND.read_bytes()[:REWIND.read_bytes().index(b'"subtype":"rewind"')]
                                        .rsplit(b"\n", 1)[0] + b"\n"]
    exp = qwen.export(fork, after, env_for(home=tmp_path / "h"))
    [(where, data)] = exp.files.items()
    assert exp.native_id != REWIND_ID and where.name == f"{exp.native_id}.jsonl"
    recs = [json.loads(x) for x in data.splitlines()]
    assert {r["sessionId"] for r in recs} == {exp.native_id}  # one session, as the CLI requires
    mine = chain(data)
    assert [r["uuid"] for r in recs if r["uuid"] in mine and r["type"] != "system"] == [
        m.native_id for m in after]  # what the CLI resumes: the kept turns and the new one


def test_another_agents_session_becomes_qwens_own_tools(tmp_path: Path) -> None:
    s = Session(id="01a2000000001234567890abcdef0123", agent="claude", native_id="c1", cwd="/w",
                created_at=1796162920303, branch="main")
    msgs = [
        Message("user", (Part.text("do it"),), created_at=1796162920400),
        Message("assistant", (Part.text("ok"), Part.tool_call("t1", "Bash", {"command": "ls"}),
                              Part.tool_call("t2", "Edit", {"file_path": "a.txt", "old_string": "a",
                                                            "new_string": "b"})), model="m"),
        Message("user", (Part.tool_result("t1", "a.txt"), Part.tool_result("t2", "edited"), Part.text("next"))),
        Message("assistant", (Part.text("done"),)),
    ]
    exp = qwen.export(s, msgs, env_for("/w", home=tmp_path))
    [(path, data)] = exp.files.items()
    assert path == tmp_path / ".qwen" / "projects" / "-w" / "chats" / f"{exp.native_id}.jsonl"
    recs = [json.loads(x) for x in data.splitlines()]
    assert [r["type"] for r in recs] == ["user", "assistant", "tool_result", "user", "assistant"]
    assert recs[0]["cwd"] == "/w" and recs[0]["parentUuid"] is None and recs[0]["gitBranch"] == "main"
    assert [r["parentUuid"] for r in recs[1:]] == [r["uuid"] for r in recs[:-1]]
    calls = [p["functionCall"] for p in recs[1]["message"]["parts"] if "functionCall" in p]
    assert calls == [{"id": "t1", "name": "run_shell_command", "args": {"command": "ls"}},
                     {"id": "t2", "name": "edit", "args": {"file_path": "/w/a.txt", "old_string": "a",
                                                          "new_string": "b"}}]
    assert chain(data) == [r["uuid"] for r in recs]
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    again, amsgs = by_session(path)
    [a] = again.values()
    assert [shape(m) for m in amsgs[a.id]] == [("user", ["text"]), ("assistant", ["text", "tool_call", "tool_call"]),
                                               ("user", ["tool_result", "tool_result"]), ("user", ["text"]),
                                               ("assistant", ["text"])]


def test_discover_by_the_first_records_cwd(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dest = home / ".qwen" / "projects"
    shutil.copytree(FIX / "projects", dest)
    (dest / "-tmp-gemini-q1-project" / "chats" / "notes.jsonl").write_text("{}\n")  # not a session file
    assert qwen.discover(env_for("/tmp/gemini/q1/project", home=home)) == [
        dest / "-tmp-gemini-q1-project" / "chats" / MAIN.name]
    assert qwen.discover(env_for("/elsewhere", home=home)) == []
    custom = env_for("/tmp/gemini/q1/project", home=tmp_path, environ={"QWEN_HOME": str(home / ".qwen")})
    assert qwen.discover(custom) == [dest / "-tmp-gemini-q1-project" / "chats" / MAIN.name]
    assert qwen.watch_roots(custom) == [home / ".qwen" / "projects"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1), mode=st.sampled_from(["truncate", "overwrite", "insert"]),
       junk=st.binary(min_size=1, max_size=40))
def test_damage_never_raises_nor_loses_what_came_before(tmp_path: Path, where: float, mode: str,
                                                       junk: bytes) -> None:
    data = MAIN.read_bytes()
    at = int(where * len(data))
    bad = {"truncate": data[:at], "overwrite": data[:at] + junk + data[at + len(junk):],
           "insert": data[:at] + junk + data[at:]}[mode]
    path = tmp_path / MAIN.name
    path.write_bytes(data[: data.rfind(b"\n", 0, at) + 1])
    msgs, (_o, _s, n), _ss, _p = run(path)
    before = msgs[:n]
    path.write_bytes(bad)
    assert run(path)[0][:len(before)] == before


_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                       lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                       max_leaves=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 30), value=_VALUES,
       key=st.sampled_from(["uuid", "parentUuid", "type", "subtype", "message", "parts", "role", "text",
                            "functionCall", "functionResponse", "usageMetadata", "model", "sessionId", "cwd",
                            "timestamp", "systemPayload"]))
def test_odd_values_never_raise_and_export_gives_them_back(tmp_path: Path, line: int, key: str, value: Any) -> None:
    lines = MAIN.read_bytes().split(b"\n")
    i = line % (len(lines) - 1)
    obj = json.loads(lines[i])

    poke(obj, key, value)
    lines[i] = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    path = tmp_path / MAIN.name
    path.write_bytes(b"\n".join(lines))
    sessions, msgs = by_session(path)
    for s in sessions.values():
        exp = qwen.export(s, msgs[s.id], env_for(home=tmp_path / "h"))
        [data] = exp.files.values()
        again = tmp_path / "again.jsonl"
        again.write_bytes(data)
        assert [m.parts for _s, m in run(again)[0]] == [m.parts for m in msgs[s.id]]


SUB_PARENT = FIX / "projects" / "-tmp-gemini-q4-project" / "chats" / "4e3c6dc1-09bd-4668-b8e5-738a23334208.jsonl"
SUB = (FIX / "projects" / "-tmp-gemini-q4-project" / "subagents" / "4e3c6dc1-09bd-4668-b8e5-738a23334208"
       / "agent-general-purpose-call_9d6bc1da12a64fae9579c681.jsonl")


def test_a_sub_agent_hangs_on_the_call_that_ran_it(tmp_path: Path) -> None:
    parents, pmsgs = by_session(SUB_PARENT)
    [parent] = parents.values()
    subs, smsgs = by_session(SUB)
    [sub] = subs.values()
    assert sub.native_id == f"{parent.native_id}/agent-general-purpose-call_9d6bc1da12a64fae9579c681"
    assert sub.parent_id == parent.id
    call = next(p for m in pmsgs[parent.id] for p in m.parts if p.type == "tool_call")
    assert call.get("name") == "agent" and sub.extra["parent_call_id"] == call.get("call_id")
    assert [m.text() for m in smsgs[sub.id] if m.role == "user" and m.text()] == ["SUBTASK-1 list files"]
    home = tmp_path / "home"
    shutil.copytree(FIX / "projects", home / ".qwen" / "projects")
    found = qwen.discover(env_for("/tmp/gemini/q4/project", home=home))
    assert [p.name for p in found] == [SUB_PARENT.name, SUB.name]  # the sub-agent after its parent


def test_another_agents_compaction_is_qwens_own_chat_compression(tmp_path: Path) -> None:
    """The last compaction becomes a ``system/chat_compression`` record on the chain, whose
    compressedHistory (the summary and the CLI's answer) is what Qwen resumes from, then what
    came after; the earlier records stay in the file."""
    s, msgs = compacted_session()
    exp = qwen.export(s, msgs, env_for("/w", home=tmp_path))
    [(path, data)] = exp.files.items()
    recs = [json.loads(x) for x in data.splitlines()]
    assert [(r["type"], r.get("subtype")) for r in recs] == [
        ("user", None), ("assistant", None), ("system", "chat_compression"), ("user", None), ("assistant", None)]
    assert chain(data) == [r["uuid"] for r in recs]
    history = recs[2]["systemPayload"]["compressedHistory"]
    assert history == [{"role": "user", "parts": [{"text": "SUMMARY of the old turn"}]},
                       {"role": "model", "parts": [{"text": ACK}]}]
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    _again, amsgs = by_session(path)
    [got] = amsgs.values()
    assert [(m.text(), m.is_compaction()) for m in got] == [
        ("OLD prompt", False), ("OLD answer", False), ("SUMMARY of the old turn", True),
        ("NEW prompt", False), ("NEW answer", False)]
