"""Gemini CLI: parse the real files of 0.61 (and a 0.20 .json) exactly, restart anywhere, replay
rewinds and resumes as the CLI does, write every file back byte for byte, discover, hand over."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, FoundMessage, Resumable, Unknown
from oxide_git.agents.gemini import agent as gemini
from oxide_git.agents.gemini.log import record_id
from oxide_git.agents.gemini.records import ACK
from oxide_git.agents.gemini.store import project_hash
from oxide_git.core.model import Message, Part, Session, message_id_for, session_id_for
from tests.agents.replay import compacted_session, poke
from tests.agents.replay import replay as replay_parse

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "gemini"
MAIN = FIX / "project" / "chats" / "session-2026-12-01T22-08-29b5301f.jsonl"
STUB = FIX / "project" / "chats" / "session-2026-12-01T22-10-29b5301f.jsonl"
REWIND = FIX / "rewind" / "chats" / "session-2026-12-01T22-31-5b71e34a.jsonl"
PARENT = FIX / "subagent" / "chats" / "session-2026-12-01T22-26-dcf30305.jsonl"
SUB = FIX / "subagent" / "chats" / "dcf30305-1e8d-42c3-b064-42193509cbc9" / "78bbc48c-bd90-4b03-b11f-b53ece61dc52.jsonl"
LEGACY = FIX / "legacy" / "chats" / "session-2026-12-01T22-24-fe2e1a3b.json"
COMPRESS = FIX / "compress" / "chats" / "session-2026-12-02T01-47-670ae26d.jsonl"  # a real compression
# a compression that kept the last turn (under new ids), then a prompt
COMPRESS_TAIL = FIX / "compress-tail" / "chats" / "session-2026-12-02T01-57-09aa7cc1.jsonl"
JSONL = [MAIN, REWIND, PARENT, SUB, COMPRESS, COMPRESS_TAIL]
MAIN_ID = "29b5301f-f84d-4437-bfbd-3b5886c08b03"


def env_for(*worktrees: str, home: Path | None = None) -> AgentEnv:
    import os

    return AgentEnv(home=home or Path(os.environ["HOME"]), environ={},
                    worktrees=tuple(Path(w) for w in worktrees))


def run(path: Path, offset: int = 0, state: Any = None, env: AgentEnv | None = None):
    """Parse as the importer does: (session id, message) in order, the last restart point (and how
    many messages came before it), the sessions as last found, problems."""
    r = replay_parse(gemini.parse(path, offset=offset, state=state, env=env), offset, state)
    return r.msgs, r.last, r.sessions, r.problems


def by_session(path: Path, env: AgentEnv | None = None) -> tuple[dict[str, Session], dict[str, list[Message]]]:
    msgs, _l, sessions, _p = run(path, env=env)
    out: dict[str, list[Message]] = {sid: [] for sid in sessions}
    for sid, m in msgs:
        out[sid].append(m)
    return sessions, out


def replay(data: bytes) -> list[str]:
    """The message ids Gemini CLI 0.61 holds after loading ``data`` (loadConversationRecord)."""
    view: dict[str, Any] = {}
    for raw in data.splitlines():
        obj = json.loads(raw)
        if isinstance(obj.get("$rewindTo"), str):
            ids = list(view)
            cut = ids.index(obj["$rewindTo"]) if obj["$rewindTo"] in ids else 0
            for k in ids[cut:]:
                del view[k]
        elif isinstance(obj.get("id"), str):
            view[obj["id"]] = obj
        elif isinstance(obj.get("$set"), dict) and isinstance(obj["$set"].get("messages"), list):
            view = {m["id"]: m for m in obj["$set"]["messages"]}
    return list(view)


def shape(m: Message) -> tuple[str, list[str]]:
    return m.role, [p.type for p in m.parts]


# --- parse -----------------------------------------------------------------------------------------


def test_a_session_with_tools_and_two_resumes_parses_exactly() -> None:
    env = env_for("/tmp/gemini/x/project")
    sessions, msgs = by_session(MAIN, env)
    [s] = sessions.values()
    assert s.id == session_id_for("gemini", MAIN_ID, 1796162920303)  # 2026-12-01T22:08:40.303Z
    assert (s.agent, s.native_id, s.cwd, s.model) == ("gemini", MAIN_ID, "/tmp/gemini/x/project", "gemini-2.5-flash")
    got = msgs[s.id]
    assert [shape(m) for m in got] == [
        ("user", ["text"]), ("user", ["text"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["text"]), ("user", ["text"]), ("assistant", ["text"]),
        ("user", ["text"]), ("assistant", ["text"]),
    ]
    assert got[0].is_harness() and got[0].parts[0].get("text").startswith("<session_context>")
    # its id is the same in every session: qualified, so that no session looks like a copy of another
    assert got[0].native_id == f"{MAIN_ID}:d04923d38bb0f6017037e74183378ef4"
    assert not any(m.is_harness() for m in got[1:])
    calls = [p for m in got for p in m.parts if p.type == "tool_call"]
    results = [p for m in got for p in m.parts if p.type == "tool_result"]
    assert [c.get("name") for c in calls] == ["run_shell_command", "write_file", "replace"]
    assert [c.get("call_id") for c in calls] == [r.get("call_id") for r in results]
    assert calls[0].get("input") == {"command": "echo from-shell | tee shell.txt",
                                     "description": "Run the scripted command"}
    assert "Output: from-shell" in results[0].get("output")
    assert calls[0].get("result") == "next"  # toolCalls[].result is the next record's: not kept twice
    assert [m.text() for m in got if m.role == "user" and not m.is_harness() and m.text()] == [
        "GEMINI-PROMPT-1: make shell.txt with a shell command, then write notes.txt and edit it.",
        "PROMPT-2: now just say you are done.", "PROMPT-3: again"]
    # the resume's $set.messages inserted copies of tool results (<id>_response): no messages
    assert not any(str(m.native_id).endswith("_response") for m in got)
    assert got[2].usage == {"input": 100, "output": 20, "cached": 0, "thoughts": 0, "tool": 0, "total": 120}
    assert all("raw" not in m.extra["gemini"] for m in got)  # every record rebuilt from its parts


def test_a_compression_is_a_compaction_and_its_answer_harness() -> None:
    """0.61's automatic compression on a resume (model.compressionThreshold low, the compat run):
    ``$set.messages`` with the session context, the summary and the CLI's "Got it": the summary
    is a compaction (system), the answer harness, the messages it replaced are kept."""
    from oxide_git.core.model import mark_compacted

    sessions, msgs = by_session(COMPRESS)
    [s] = sessions.values()
    got = msgs[s.id]
    assert [shape(m) for m in got] == [
        ("user", ["text"]), ("user", ["text"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["tool_call"]), ("user", ["tool_result"]),
        ("assistant", ["text"]), ("system", ["compaction"]), ("assistant", ["text"]),
        ("user", ["text"]), ("assistant", ["text"]),
    ]
    summary = got[9]
    assert summary.is_compaction() and not summary.is_harness()
    assert summary.parts[0].get("summary") == (
        "<state_snapshot>\n<overall_goal>COMPAT-SNAPSHOT: the conversation so far, summarised"
        "</overall_goal>\n</state_snapshot>")
    assert summary.parts[0].get("replaces") is None  # everything before it
    assert got[10].is_harness() and got[10].text() == "Got it. Thanks for the additional context!"
    assert not got[11].is_harness() and got[11].text() == "PROMPT-2: now just say you are done."
    assert [m.compacted for m in mark_compacted(got)] == [True] * 9 + [False] * 4
    assert all("raw" not in m.extra["gemini"] for m in got)  # the summary's record rebuilt from its part


def test_a_compression_that_keeps_a_turn_gives_the_context_the_cli_holds() -> None:
    """Two turns, then a compression at the third prompt: 0.61 summarises the first turn and keeps
    the second under new ids (copies). From the compaction on, the messages are the history the
    CLI holds after loading the file, in its order."""
    from oxide_git.core.model import mark_compacted

    sessions, msgs = by_session(COMPRESS_TAIL)
    [s] = sessions.values()
    got = mark_compacted(msgs[s.id])
    at = next(i for i, m in enumerate(got) if m.is_compaction())
    assert [m.text() for m in got[at + 1:]] == [
        "Got it. Thanks for the additional context!", "PROMPT-2: now just say you are done.",
        "Done with two.", "PROMPT-3: three", "Done with three.", "PROMPT-4: four", "Done with four."]
    assert [record_id(m) for m in got[at:]] == replay(COMPRESS_TAIL.read_bytes())[1:]
    assert all(m.compacted for m in got[:at]) and not any(m.compacted for m in got[at:])
    assert "PROMPT-2: now just say you are done." in [m.text() for m in got[:at]]  # the original too


def test_the_file_a_resume_leaves_behind_is_no_session() -> None:
    assert run(STUB) == ([], (0, None, 0), {}, [])


def test_a_rewind_in_the_cli_forks_and_keeps_every_message() -> None:
    sessions, msgs = by_session(REWIND, env_for("/tmp/gemini/gen/rewind/project"))
    first, fork = sessions.values()
    before, after = msgs[first.id], msgs[fork.id]
    assert first.native_id == "5b71e34a-e694-4623-8b6d-a0afa66cdeb4"
    assert fork.native_id == "5b71e34a-e694-4623-8b6d-a0afa66cdeb4/rewind-1"
    assert [m.text() for m in before if m.role == "user"][1:] == ["SAY-1: hello", "", "PROMPT-2: two"]
    assert "PROMPT-2: two" in [m.text() for m in before]  # what the rewind dropped stays
    assert fork.parent_id == first.id
    kept = before[:5]
    assert [m.native_id for m in after[:5]] == [m.native_id for m in kept]  # the history it kept
    assert after[:5] == kept
    assert fork.fork_message_id == message_id_for(first.id, 4, kept[4].created_at)
    assert [m.text() for m in after[5:]] == ["PROMPT-3: three", "Done with three."]
    assert "PROMPT-2: two" not in [m.text() for m in after]


def test_a_sub_agent_hangs_on_the_call_that_ran_it() -> None:
    env = env_for("/tmp/gemini/gen/sub/project")
    parents, pmsgs = by_session(PARENT, env)
    [parent] = parents.values()
    subs, smsgs = by_session(SUB, env)
    [sub] = subs.values()
    assert sub.parent_id == parent.id and sub.native_id == "78bbc48c-bd90-4b03-b11f-b53ece61dc52"
    call = next(p for m in pmsgs[parent.id] for p in m.parts if p.type == "tool_call")
    assert call.get("name") == "invoke_agent"
    assert sub.extra["parent_call_id"] == call.get("call_id")
    assert sub.extra["gemini_kind"] == "subagent"
    last = smsgs[sub.id][-1]  # complete_task: no record after it holds its result
    assert shape(last) == ("assistant", ["tool_call", "tool_result"])
    assert last.parts[1].get("derived") is True


def test_a_json_session_of_an_older_release_parses() -> None:
    sessions, msgs = by_session(LEGACY, env_for("/tmp/gemini/old-x/project"))
    [s] = sessions.values()
    assert s.native_id == "fe2e1a3b-bfb4-497d-bde7-86eb3f086020"
    assert s.cwd == "/tmp/gemini/old-x/project"  # the sha256 folder names it
    got = msgs[s.id]
    pair = ["tool_call", "tool_result"]
    assert [shape(m) for m in got] == [("user", ["text"]), ("assistant", pair * 3), ("assistant", ["text"])]
    calls = [p for p in got[1].parts if p.type == "tool_call"]
    assert [c.get("name") for c in calls] == ["run_shell_command", "write_file", "replace"]
    result = got[1].parts[1]  # no record after it holds the results: they are the call's own
    assert result.get("derived") is True and result.get("call_id") == calls[0].get("call_id")
    assert result.get("is_error") is True and "could not be parsed safely" in result.get("output")
    assert got[0].text().startswith("GEMINI-PROMPT-1")  # a plain string content


def test_restart_from_every_resumable_gives_the_same_events() -> None:
    for path in JSONL:
        full, _l, _s, _p = run(path)
        points = []
        for ev in gemini.parse(path):
            if isinstance(ev, Resumable):
                points.append((ev.offset, json.loads(json.dumps(dict(ev.state)))))
        assert len(points) > 3, path
        for offset, state in points:
            n = next(i for i, (o, _s) in enumerate(points) if o == offset)
            again, _l, _s, _p = run(path, offset, state)
            done = run_prefix_count(path, n)
            assert again == full[done:], (path.name, offset)


def run_prefix_count(path: Path, n: int) -> int:
    """How many messages the full parse emitted before its n-th Resumable."""
    count, seen = 0, 0
    for ev in gemini.parse(path):
        if isinstance(ev, Resumable):
            if seen == n:
                return count
            seen += 1
        elif isinstance(ev, FoundMessage):
            count += 1
    raise AssertionError


def test_a_growing_file_imports_the_same_as_the_whole(tmp_path: Path) -> None:
    for src in JSONL:
        lines = src.read_bytes().splitlines(keepends=True)
        path = tmp_path / src.name
        path.write_bytes(b"")
        got: list[tuple[str, Message]] = []
        offset, state, kept = 0, None, 0
        for i in range(len(lines)):
            path.write_bytes(b"".join(lines[:i + 1]) + b'{"id":"half')  # a partial line too
            msgs, (offset2, state2, n), _s, _p = run(path, offset, state)
            got = got[:kept] + msgs
            offset, state, kept = offset2, state2, kept + n
        assert got == run(src)[0], src.name


# --- written back ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [MAIN, PARENT, REWIND, LEGACY, COMPRESS, COMPRESS_TAIL],
                         ids=lambda p: p.parent.parent.name)
def test_a_session_goes_back_byte_for_byte(path: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions, msgs = by_session(path)
    first = next(iter(sessions.values()))
    env = env_for(first.cwd or "/nowhere", home=home)
    exp = gemini.export(first, msgs[first.id], env)
    [(where, data)] = [(p, d) for p, d in exp.files.items() if p.name == path.name]
    if path is REWIND:  # the session before the rewind: the file up to it
        assert data == path.read_bytes()[:path.read_bytes().index(b'{"$rewindTo"')]
    else:
        assert data == path.read_bytes()
    assert exp.native_id == first.native_id
    assert exp.command == ["gemini", "--resume", first.native_id]
    assert where.parent.name == "chats"


def test_the_rewound_session_goes_back_as_the_cli_holds_it(tmp_path: Path) -> None:
    sessions, msgs = by_session(REWIND)
    fork = list(sessions.values())[1]
    exp = gemini.export(fork, msgs[fork.id], env_for(fork.cwd or "", home=tmp_path))
    [(path, data)] = [(p, d) for p, d in exp.files.items() if p.suffix == ".jsonl"]
    assert exp.native_id != fork.native_id and path.name.endswith(f"-{exp.native_id[:8]}.jsonl")
    assert replay(data) == replay(REWIND.read_bytes())  # what the CLI resumes: the same history
    head = json.loads(data.splitlines()[0])
    assert head["sessionId"] == exp.native_id
    assert b'"$rewindTo"' not in data
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    again, amsgs = by_session(path)
    [s] = again.values()
    assert s.native_id == exp.native_id
    assert [record_id(m) for m in amsgs[s.id]] == [record_id(m) for m in msgs[fork.id]]
    assert amsgs[s.id][0].native_id == f"{exp.native_id}:d04923d38bb0f6017037e74183378ef4"
    assert [m.parts for m in amsgs[s.id]] == [m.parts for m in msgs[fork.id]]


def test_a_new_project_folder_gets_its_marker(tmp_path: Path) -> None:
    sessions, msgs = by_session(MAIN)
    s = next(iter(sessions.values()))
    exp = gemini.export(s, msgs[s.id], env_for("/tmp/gemini/x/project", home=tmp_path))
    marker = tmp_path / ".gemini" / "tmp" / "project" / ".project_root"
    assert exp.files[marker] == b"/tmp/gemini/x/project"
    (tmp_path / ".gemini" / "tmp" / "project").mkdir(parents=True)
    marker.write_text("/somewhere/else/project")  # taken by another folder: the next free slug
    exp = gemini.export(s, msgs[s.id], env_for("/tmp/gemini/x/project", home=tmp_path))
    assert {p.parent.parent.name for p in exp.files if p.suffix == ".jsonl"} == {"project-1"}


def test_another_agents_session_becomes_geminis_own_tools(tmp_path: Path) -> None:
    s = Session(id="01a2000000001234567890abcdef0123", agent="claude", native_id="c1", cwd="/w",
                created_at=1796162920303)
    msgs = [
        Message("user", (Part.text("<system-reminder>x</system-reminder>"),), extra={"harness": True}),
        Message("user", (Part.text("do it"),), created_at=1796162920400),
        Message("assistant", (Part.reasoning("hmm", signature="s"), Part.text("ok"),
                              Part.tool_call("t1", "Bash", {"command": "ls"}),
                              Part.tool_call("t2", "Write", {"file_path": "a.txt", "content": "x\n"}),
                              Part.tool_call("t3", "Task", {"prompt": "p"})), created_at=1796162920500),
        Message("user", (Part.tool_result("t1", "a.txt"), Part.tool_result("t2", "written"),
                         Part.tool_result("t3", "done")), created_at=1796162920600),
        Message("assistant", (Part.text("done"),), model="claude-x", created_at=1796162920700),
    ]
    exp = gemini.export(s, msgs, env_for("/w", home=tmp_path))
    [(path, data)] = [(p, d) for p, d in exp.files.items() if p.suffix == ".jsonl"]
    recs = [json.loads(x) for x in data.splitlines()]
    assert recs[0]["sessionId"] == exp.native_id and recs[0]["projectHash"] == project_hash("/w")
    assert [(r["type"], r["content"] if isinstance(r["content"], str) else [list(p) for p in r["content"]])
            for r in recs[1:]] == [
        ("user", [["text"]]),
        ("gemini", [["text"], ["functionCall"], ["functionCall"], ["text"]]),
        ("user", [["functionResponse"], ["functionResponse"], ["text"]]),
        ("gemini", "done")]
    calls = [p["functionCall"] for p in recs[2]["content"] if "functionCall" in p]
    assert calls == [{"id": "t1", "name": "run_shell_command", "args": {"command": "ls"}},
                     {"id": "t2", "name": "write_file", "args": {"file_path": "/w/a.txt", "content": "x\n"}}]
    assert recs[3]["content"][0] == {"functionResponse": {"id": "t1", "name": "run_shell_command",
                                                          "response": {"output": "a.txt"}}}
    assert "[tool call Task (t3)]" in recs[2]["content"][3]["text"]
    assert any("harness" in x for x in exp.lost) and any("reasoning" in x for x in exp.lost)
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    again, amsgs = by_session(path)
    [a] = again.values()
    assert a.native_id == exp.native_id
    got = amsgs[a.id]
    assert [shape(m) for m in got] == [("user", ["text"]), ("assistant", ["text", "tool_call", "tool_call", "text"]),
                                       ("user", ["tool_result", "tool_result", "text"]), ("assistant", ["text"])]


# --- where the files are ---------------------------------------------------------------------------


def _install(home: Path, fixture: str, slug: str, registry: dict[str, str] | None = None) -> Path:
    dest = home / ".gemini" / "tmp" / slug
    shutil.copytree(FIX / fixture, dest)
    if registry is not None:
        (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": registry}))
    return dest


def test_discover_finds_this_projects_sessions_the_cli_would_list(tmp_path: Path) -> None:
    home = tmp_path / "home"
    main = _install(home, "project", "project", {"/tmp/gemini/x/project": "project"})
    sub = _install(home, "subagent", "other-slug")
    legacy = home / ".gemini" / "tmp" / project_hash("/tmp/gemini/old-x/project")
    shutil.copytree(FIX / "legacy", legacy)
    _install(home, "rewind", "not-ours")
    found = gemini.discover(env_for("/tmp/gemini/x/project", "/tmp/gemini/gen/sub/project",
                                    "/tmp/gemini/old-x/project", home=home))
    assert found == [main / "chats" / MAIN.name, sub / "chats" / PARENT.name,
                     sub / "chats" / SUB.parent.name / SUB.name, legacy / "chats" / LEGACY.name]
    assert gemini.watch_roots(env_for(home=home)) == [home / ".gemini" / "tmp"]
    custom = AgentEnv(home=home, environ={"GEMINI_CLI_HOME": str(tmp_path / "g")}, worktrees=())
    assert gemini.watch_roots(custom) == [tmp_path / "g" / ".gemini" / "tmp"]


def test_a_json_the_cli_went_on_with_as_jsonl_is_read_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = _install(home, "legacy", "old-x", {"/tmp/gemini/old-x/project": "old-x"})
    (folder / ".project_root").write_text("/tmp/gemini/old-x/project")
    (folder / "chats" / (LEGACY.name + "l")).write_bytes(MAIN.read_bytes())
    assert gemini.discover(env_for("/tmp/gemini/old-x/project", home=home)) == [
        folder / "chats" / (LEGACY.name + "l")]


# --- damage ----------------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(JSONL), where=st.floats(0, 1),
       mode=st.sampled_from(["truncate", "overwrite", "insert"]), junk=st.binary(min_size=1, max_size=40))
def test_damage_never_raises_nor_loses_what_came_before(tmp_path: Path, which: Path, where: float,
                                                       mode: str, junk: bytes) -> None:
    data = which.read_bytes()
    at = int(where * len(data))
    bad = {"truncate": data[:at], "overwrite": data[:at] + junk + data[at + len(junk):],
           "insert": data[:at] + junk + data[at:]}[mode]
    path = tmp_path / which.name
    path.write_bytes(data[: data.rfind(b"\n", 0, at) + 1])
    msgs, (_o, _s, n), _ss, _p = run(path)
    before = msgs[:n]
    path.write_bytes(bad)
    after = run(path)[0]
    assert after[:len(before)] == before


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(JSONL), line=st.integers(0, 60), value=_VALUES,
       key=st.sampled_from(["id", "type", "content", "toolCalls", "thoughts", "tokens", "model", "$set",
                            "messages", "$rewindTo", "sessionId", "startTime", "functionCall",
                            "functionResponse", "args", "result", "response", "text", "thought"]))
def test_odd_values_never_raise_and_export_gives_them_back(tmp_path: Path, which: Path, line: int,
                                                           key: str, value: Any) -> None:
    lines = which.read_bytes().split(b"\n")
    i = line % (len(lines) - 1)
    obj = json.loads(lines[i])

    poke(obj, key, value)
    lines[i] = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    path = tmp_path / which.name
    path.write_bytes(b"\n".join(lines))
    sessions, msgs = by_session(path)
    for s in sessions.values():  # every message still comes back as it was read
        exp = gemini.export(s, msgs[s.id], env_for(s.cwd or "/w", home=tmp_path / "h"))
        [data] = [d for p, d in exp.files.items() if p.suffix == ".jsonl"]
        (tmp_path / "again.jsonl").write_bytes(data)
        again = [m for _s, m in run(tmp_path / "again.jsonl")[0]]
        assert [m.parts for m in again] == [m.parts for m in msgs[s.id]]


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                     lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=4), c, max_size=2),
                     max_leaves=4)
_PART = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=5)}, optional={"thought": st.booleans(),
                                                                  "thoughtSignature": st.text(max_size=3)}),
    st.fixed_dictionaries({"functionCall": st.fixed_dictionaries(
        {"name": st.text(max_size=4)}, optional={"id": st.text(max_size=4), "args": _JSON})},
        optional={"thoughtSignature": st.text(max_size=3)}),
    st.fixed_dictionaries({"functionResponse": st.fixed_dictionaries(
        {"name": st.text(max_size=4)}, optional={"id": st.text(max_size=4), "response": _JSON,
                                                 "willContinue": st.booleans()})}),
    st.fixed_dictionaries({"inlineData": st.fixed_dictionaries({"mimeType": st.sampled_from(["image/png", "x/y"]),
                                                                "data": st.text(max_size=4)})}),
    st.dictionaries(st.sampled_from(["text", "thought", "functionCall", "fileData", "x"]), _JSON, max_size=3),
)


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(_PART, max_size=4).map(lambda ps: [dict(reversed(list(p.items()))) if i % 2 else p
                                                         for i, p in enumerate(ps)]))
def test_gemini_parts_come_back_exactly(parts: list[dict[str, Any]]) -> None:
    from oxide_git.agents.gemini.parts import from_parts, same, to_parts

    got = to_parts(parts)
    assert same(from_parts(got), parts)  # key order included
    for p, g in zip(parts, got, strict=True):
        if "functionCall" in p and isinstance(p["functionCall"], dict) and g.type != "other":
            assert g.type == "tool_call" and g.get("name") == p["functionCall"]["name"]


def test_importing_every_fixture_links_only_the_fork_and_the_sub_agent(repo: Path) -> None:
    """Every session starts with the CLI's <session_context>, whose id is the same in all of them:
    none may look like a copy of another."""
    from tests.conftest import oxide

    oxide(repo, "init")
    out = json.loads(oxide(repo, "import", "--agent", "gemini", str(FIX), "--json").stdout)
    assert not [f for f in out["files"] if f.get("problems")], out
    rows = json.loads(oxide(repo, "list", "--all", "--json").stdout)
    assert len(rows) == 8
    linked = {r["native_id"]: r["parent_id"] for r in rows if r["parent_id"]}
    ids = {r["native_id"]: r["id"] for r in rows}
    assert linked == {"5b71e34a-e694-4623-8b6d-a0afa66cdeb4/rewind-1": ids["5b71e34a-e694-4623-8b6d-a0afa66cdeb4"],
                      "78bbc48c-bd90-4b03-b11f-b53ece61dc52": ids["dcf30305-1e8d-42c3-b064-42193509cbc9"]}
    titles = {r["native_id"]: r["title"] or r["first_prompt"] for r in rows}
    assert titles[MAIN_ID].startswith("GEMINI-PROMPT-1")  # not the CLI's context


def test_a_json_that_is_no_session_is_said_and_skipped(tmp_path: Path) -> None:
    cases = {"not.json": b"{nope", "list.json": b"[]", "bare.json": b'{"messages": []}',
             "noid.json": json.dumps({"sessionId": "s", "messages": [{"type": "user", "content": "x"}]}).encode(),
             "empty.json": json.dumps({"sessionId": "s", "messages": [{"id": "a", "type": "info", "content": "x"}]}).encode()}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        msgs, _l, sessions, problems = run(path)
        assert not msgs and not sessions, name
        assert [p.text for p in problems] == {
            "not.json": ["not JSON, skipped"], "list.json": [
                "not a Gemini CLI session (no sessionId and messages), skipped"],
            "bare.json": ["not a Gemini CLI session (no sessionId and messages), skipped"],
            "noid.json": ["1 message(s) without an id, skipped"], "empty.json": []}[name], name
    odd = json.loads(LEGACY.read_bytes())
    odd["messages"].append({"id": "z", "timestamp": "2026-12-01T22:24:09.000Z", "type": "hologram", "content": "?"})
    path = tmp_path / LEGACY.name
    path.write_text(json.dumps(odd))
    events = list(gemini.parse(path))
    assert [e.kind for e in events if isinstance(e, Unknown)] == ["message/hologram"]
    assert [e.message.role for e in events if isinstance(e, FoundMessage)][-1] == "system"


def test_another_agents_compaction_is_geminis_own_compression(tmp_path: Path) -> None:
    """After a compaction, the CLI's history is the summary and its answer (a ``$set.messages``,
    as its own compression writes); the earlier turns stay in the file, out of the history."""
    s, msgs = compacted_session()
    exp = gemini.export(s, msgs, env_for("/w", home=tmp_path))
    [(path, data)] = [(p, d) for p, d in exp.files.items() if p.suffix == ".jsonl"]
    recs = {r["id"]: r for r in (json.loads(x) for x in data.splitlines()) if "id" in r}
    sets = [json.loads(x)["$set"]["messages"] for x in data.splitlines() if b'"messages"' in x]
    [held] = sets
    recs.update({r["id"]: r for r in held})
    view = [recs[i] for i in replay(data)]
    assert [(r["type"], r["content"] if isinstance(r["content"], str) else r["content"][0]["text"])
            for r in view] == [("user", "SUMMARY of the old turn"), ("gemini", ACK), ("user", "NEW prompt"),
                               ("gemini", "NEW answer")]
    assert b"OLD prompt" in data  # kept in the file, as the CLI keeps what it compressed
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    _again, amsgs = by_session(path)
    [got] = amsgs.values()
    assert [(m.text(), m.is_compaction(), m.is_harness()) for m in got] == [
        ("OLD prompt", False, False), ("OLD answer", False, False), ("SUMMARY of the old turn", True, False),
        (ACK, False, True), ("NEW prompt", False, False), ("NEW answer", False, False)]
