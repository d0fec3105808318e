"""pi: parse every fixture exactly (its tree as a session and its forks), restart anywhere,
discover, export round trip (pi's own lines back), another agent's session as pi's tools, fuzz."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv
from oxide_git.agents.pi import agent as pi
from oxide_git.agents.pi.export import file_name, pi_id
from oxide_git.core.model import Message, Part, Session, session_id_for
from tests.agents.replay import damage, poke, replay

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "pi"
ALL = sorted(p.name for p in FIX.glob("*.jsonl"))
CWD = "/home/dev/proj"
TREE_ID = "01a233a7-d85e-75d4-b658-68935167949d"


def run(path: Path, offset: int = 0, state: Any = None, msgs: list | None = None):
    """Parse like the importer: what follows the last Resumable is read again on restart."""
    return replay(pi.parse(path, offset=offset, state=state), offset, state, msgs)


def by_session(path: Path) -> tuple[dict[str, Session], dict[str, list[Message]]]:
    msgs, _l, sessions, problems, unknown = run(path)
    assert problems == [] and unknown == []
    out: dict[str, list[Message]] = {sid: [] for sid in sessions}
    for sid, m in msgs:
        out[sid].append(m)
    return sessions, out


def kinds(m: Message) -> list[str]:
    return [p.type for p in m.parts]


def env_for(tmp_path: Path, **environ: str) -> AgentEnv:
    return AgentEnv(home=tmp_path, environ=environ, worktrees=[Path(CWD)])


# --- parse ----------------------------------------------------------------------------------------


def test_the_standard_script_is_one_session_with_paired_tool_calls():
    sessions, msgs = by_session(FIX / "basic.jsonl")
    ((sid, s),) = sessions.items()
    native = "01a233a6-6db2-724c-a692-4d51544d164d"
    assert s.native_id == native and s.agent == "pi" and s.cwd == CWD and s.model == "fake-model"
    assert s.created_at == 1796162874803 and sid == session_id_for("pi", native, s.created_at)
    assert s.title is None and s.parent_id is None and "forked_from" not in s.extra
    assert s.extra["header"] == {"type": "session", "version": 3, "id": native,
                                 "timestamp": "2026-12-01T22:07:54.803Z", "cwd": CWD}
    ms = msgs[sid]
    assert [m.role for m in ms] == ["system", "system", "user", "assistant", "tool", "assistant", "tool",
                                    "assistant", "tool", "assistant", "user", "assistant"]
    assert [p.get("kind") for p in ms[0].parts + ms[1].parts] == ["model_change", "thinking_level_change"]
    assert ms[2].text().startswith("PI-PROMPT-1: make shell.txt") and ms[2].native_id == "2b0d2f77"
    calls = [p for m in ms for p in m.parts if p.type == "tool_call"]
    results = [p for m in ms for p in m.parts if p.type == "tool_result"]
    assert [c.get("name") for c in calls] == ["bash", "write", "edit"]
    assert [c.get("call_id") for c in calls] == [r.get("call_id") for r in results]
    assert calls[0].get("input") == {"command": "echo from-shell | tee shell.txt"}
    assert calls[2].get("input") == {"path": f"{CWD}/notes.txt",
                                     "edits": [{"oldText": "first line", "newText": "second line"}]}
    assert results[0].get("output") == "from-shell\n" and results[0].get("is_error") is False
    assert ms[3].model == "fake-model" and ms[3].usage["totalTokens"] == 120 and ms[3].cost == 0
    assert ms[3].created_at == 1796162875064
    assert ms[-2].text() == "PROMPT-2: now just say you are done." and ms[-1].text() == "Done with two."


def test_in_place_branches_are_forks_that_repeat_the_path_they_left():
    sessions, msgs = by_session(FIX / "tree.jsonl")
    main = sessions[session_id_for("pi", TREE_ID, 1796162967646)]
    b1 = next(s for s in sessions.values() if s.native_id == f"{TREE_ID}/b8ba5e22")
    b2 = next(s for s in sessions.values() if s.native_id == f"{TREE_ID}/9b6622bb")
    assert len(sessions) == 3
    assert main.title == "my pi session"  # session_info names the file
    for b in (b1, b2):
        assert b.extra["forked_from"] == TREE_ID and b.extra["branch_of"] == "c010e0f0"
        assert b.parent_id is None  # the import links it (saving._link_copied_history)
    assert (b1.title, b2.title) == ("PROMPT-3: a branch", "PROMPT-3: second branch with a summary")
    path = ["da719dcd", "a0cc53c9", "b8e256c5", "592c9c27", "73099cc8", "04cc95bc", "f7b2a6f6",
            "4b57765d", "57b8fbd2", "c010e0f0"]
    assert [m.native_id for m in msgs[main.id]] == [*path, "6d6d9a0c", "81529684"]
    assert [m.native_id for m in msgs[b2.id]] == [*path, "9b6622bb", "29ff8377", "aad7f67c"]
    own = [m.native_id for m in msgs[b1.id]][len(path):]
    assert own == ["b8ba5e22", "f03f2a7d", "7223f329", "b7d2b44d", "f94a3aa7", "dc06f799", "a1e7873c",
                   "9a8fb03d", "2cbe97f7", "c47270a9", "fb951a2b", "baf76338", "b429a358", "15525f6a",
                   "419d085a", "0b6a6380"]
    assert msgs[b1.id][: len(path)] == msgs[main.id][: len(path)]  # the same messages, read again
    assert b1.created_at == 1796162971634 and b2.created_at == 1796163241122
    by_id = {m.native_id: m for m in msgs[b1.id]}
    compaction = by_id["f94a3aa7"]
    assert compaction.role == "system" and kinds(compaction) == ["compaction"]
    assert compaction.parts[0].get("summary") == "Compat session"
    assert compaction.extra["pi"]["firstKeptEntryId"] == "da719dcd"
    assert by_id["dc06f799"].text() == "Ran `echo bang`\n```\nbang\n\n```"  # what pi's model saw
    assert by_id["419d085a"].is_harness() and by_id["419d085a"].text() == "INJECTED context from an extension"
    assert [p.get("kind") for p in by_id["baf76338"].parts + by_id["b429a358"].parts] == ["label", "custom"]
    summary = msgs[b2.id][len(path)]
    assert summary.role == "user" and summary.text().startswith(
        "The following is a summary of a branch") and summary.text().endswith("Compat session</summary>")


def test_a_fork_file_names_the_session_it_was_made_from():
    sessions, _msgs = by_session(FIX / "fork.jsonl")
    main = next(s for s in sessions.values() if "/" not in str(s.native_id))
    assert main.native_id == "01a233ac-287b-7592-8ea5-ed4b17aa5b8e"
    assert main.extra["forked_from"] == TREE_ID
    assert main.extra["header"]["parentSession"].endswith(f"_{TREE_ID}.jsonl")


def test_responses_api_thinking_and_call_ids_are_kept():
    _sessions, msgs = by_session(FIX / "responses.jsonl")
    (ms,) = msgs.values()
    first = next(m for m in ms if m.role == "assistant")
    assert kinds(first) == ["reasoning", "tool_call"]
    assert first.parts[0].get("text") == "I will run a shell command"
    assert json.loads(first.parts[0].get("thinkingSignature"))["type"] == "reasoning"
    assert "|fc_" in first.parts[1].get("call_id")


def test_unknown_entries_and_bad_lines_are_reported_and_kept(tmp_path):
    src = (FIX / "basic.jsonl").read_bytes().splitlines(keepends=True)
    odd = {"type": "future_thing", "id": "feedbeef", "parentId": "2b0d2f77", "timestamp": "2026-12-01T22:07:55Z"}
    role = {"type": "message", "id": "00c0ffee", "parentId": "feedbeef", "timestamp": "2026-12-01T22:07:56Z",
            "message": {"role": "newRole", "x": 1}}
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join([*src[:5], json.dumps(odd).encode() + b"\n", b"not json\n",
                               json.dumps(role).encode() + b"\n", *src[5:]]))
    msgs, _l, sessions, problems, unknown = run(path)
    assert [(u.kind, u.version) for u in unknown] == [("future_thing", "pi session v3"), ("message", "pi session v3")]
    assert [(p.line, p.text) for p in problems] == [(7, "not JSON, skipped")]
    kept = [m for _s, m in msgs if m.native_id in ("feedbeef", "00c0ffee")]
    assert [(m.role, m.parts[0].get("kind"), m.parts[0].get("raw")) for m in kept] == [
        ("system", "future_thing", odd), ("system", "message", role)]
    # the entry after them hangs on the tip they moved on: a branch, which repeats the known path
    assert len(sessions) == 2


def test_a_file_without_a_header_is_no_session(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"".join((FIX / "basic.jsonl").read_bytes().splitlines(keepends=True)[1:]))
    msgs, _l, sessions, problems, _u = run(path)
    assert msgs == [] and sessions == {} and [p.text for p in problems] == [
        "no pi session header (pi ignores such a file)"]


def test_partial_last_line_is_not_consumed(tmp_path):
    data = (FIX / "basic.jsonl").read_bytes()
    path = tmp_path / "p.jsonl"
    cut = data.rfind(b"\n", 0, len(data) - 1) + 20
    path.write_bytes(data[:cut])
    msgs, (offset, state, n), _s, _p, _u = run(path)
    assert offset == data.rfind(b"\n", 0, len(data) - 1) + 1 and n == len(msgs) == 11
    path.write_bytes(data)
    more, *_ = run(path, offset, state, msgs[:n])
    assert more == run(path)[0]


def _cuts(data: bytes) -> list[int]:
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    return sorted({*ends, *(e - 7 for e in ends if e > 7)})


@pytest.mark.parametrize("name", ALL)
def test_restart_from_any_point_gives_the_same_result(name, tmp_path):
    path = tmp_path / name
    data = (FIX / name).read_bytes()
    path.write_bytes(data)
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


def test_restart_in_three_steps_across_the_branches(tmp_path):
    path = tmp_path / "tree.jsonl"
    data = (FIX / "tree.jsonl").read_bytes()
    whole = run(FIX / "tree.jsonl")[0]
    msgs: list = []
    offset, state = 0, None
    for cut in (len(data) // 3, 2 * len(data) // 3, len(data)):
        path.write_bytes(data[:cut])
        msgs, (offset, state, n), _s, _p, _u = run(path, offset, state, msgs)
        msgs = msgs[:n] if cut < len(data) else msgs
    assert msgs == whole


# --- discover -------------------------------------------------------------------------------------


def _install(folder: Path, src: str, cwd: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = (FIX / src).read_bytes().replace(f'"cwd":"{CWD}"'.encode(), json.dumps({"cwd": cwd})[1:-1].replace(
        " ", "").encode())
    dest = folder / f"2026-12-01T22-07-54-803Z_{src}"
    dest.write_bytes(data)
    return dest


def test_discover_finds_the_worktrees_sessions_by_their_header(tmp_path):
    repo = tmp_path / "my-repo"
    root = tmp_path / ".pi" / "agent" / "sessions"
    here = _install(root / pi.encode_cwd(str(repo)), "basic.jsonl", str(repo))
    sub = _install(root / pi.encode_cwd(str(repo / "sub")), "tree.jsonl", str(repo / "sub"))
    _install(root / pi.encode_cwd(str(tmp_path / "my")), "fork.jsonl", str(tmp_path / "my"))
    # "my-repo-2" encodes like a folder of my-repo: its header says it is not one
    _install(root / pi.encode_cwd(str(tmp_path / "my-repo-2")), "responses.jsonl", str(tmp_path / "my-repo-2"))
    env = AgentEnv(home=tmp_path, environ={}, worktrees=[repo])
    assert pi.discover(env) == [here, sub]
    assert pi.watch_roots(env) == [root]


def test_discover_follows_pi_coding_agent_dir_and_a_flat_session_dir(tmp_path):
    repo = tmp_path / "r"
    agent_dir = tmp_path / "cfg"
    in_dir = _install(agent_dir / "sessions" / pi.encode_cwd(str(repo)), "basic.jsonl", str(repo))
    flat = tmp_path / "flat"
    mine = _install(flat, "tree.jsonl", str(repo))
    _install(flat, "fork.jsonl", str(tmp_path / "elsewhere"))
    env = AgentEnv(home=tmp_path, environ={"PI_CODING_AGENT_DIR": str(agent_dir),
                                           "PI_CODING_AGENT_SESSION_DIR": str(flat)}, worktrees=[repo])
    assert pi.discover(env) == [in_dir, mine]
    assert pi.session_dir(env, str(repo)) == flat
    assert pi.watch_roots(env) == [agent_dir / "sessions", flat]
    # pi's settings name a session folder the same way (the project's wins over the user's)
    (agent_dir / "settings.json").write_text(json.dumps({"sessionDir": "~/flat"}))
    env = AgentEnv(home=tmp_path, environ={"PI_CODING_AGENT_DIR": str(agent_dir)}, worktrees=[repo])
    assert pi.session_dir(env, str(repo)) == flat
    (repo / ".pi").mkdir(parents=True)
    (repo / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": str(tmp_path / "proj-flat")}))
    assert pi.session_dir(env, str(repo)) == tmp_path / "proj-flat"


def test_encode_cwd():
    assert pi.encode_cwd("/home/dev/proj") == "--home-dev-proj--"
    assert pi.encode_cwd("/a b/c:d") == "--a b-c-d--"
    assert pi.encode_cwd("C:\\Users\\me") == "--C--Users-me--"


# --- export ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_export_round_trip_writes_pis_own_lines(name, tmp_path):
    sessions, msgs = by_session(FIX / name)
    original = (FIX / name).read_bytes().splitlines()
    env = env_for(tmp_path)
    for sid, s in sessions.items():
        ex = pi.export(s, msgs[sid], env)
        ((path, body),) = ex.files.items()
        assert path.parent == tmp_path / ".pi" / "agent" / "sessions" / "--home-dev-proj--"
        assert ex.command == ["pi", "--session", ex.native_id] and ex.cwd == CWD and ex.lost == []
        lines = body.splitlines()
        if "/" not in str(s.native_id):  # the session itself: its header and id as pi wrote them
            assert ex.native_id == s.native_id and path.name == file_name(s.extra["header"])
            assert lines[0] == original[0]
        else:  # a branch becomes a pi session of its own
            assert ex.native_id == pi_id(s) != s.native_id and path.name.endswith(f"_{ex.native_id}.jsonl")
        assert all(line in original for line in lines[1:]), "an entry is not pi's own line"
        entries = [json.loads(x) for x in lines[1:]]
        assert [e["parentId"] for e in entries] == [None, *(e["id"] for e in entries[:-1])]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        back_sessions, back = by_session(path)
        (again,) = (x for x in back_sessions.values() if "/" not in str(x.native_id))
        assert back[again.id] == msgs[sid]
        if ex.native_id == s.native_id:
            assert again.id == s.id
    if len(sessions) == 1:  # a file without branches comes back byte for byte
        assert body == (FIX / name).read_bytes()


def test_export_of_another_agents_session_hands_its_tool_calls_over(tmp_path):
    T0 = 1769940000000
    s = Session(id="019c0000000000000000000000000000", agent="claude", native_id="c-1", cwd=CWD,
                created_at=T0, model="claude-sonnet-4-5")
    msgs = [
        Message("user", (Part.text("<system-reminder>x</system-reminder>"),), created_at=T0, extra={"harness": True}),
        Message("user", (Part.text("fix it"),), created_at=T0 + 1),
        Message("assistant", (Part.reasoning("thinking hard", signature="sig"),
                              Part.tool_call("toolu_1", "Bash", {"command": "ls"}),
                              Part.tool_call("toolu_2", "Edit", {"file_path": "a.py", "old_string": "a",
                                                                 "new_string": "b"}),
                              Part.tool_call("toolu_3", "WebSearch", {"q": "x"})), created_at=T0 + 2,
                model="claude-sonnet-4-5"),
        Message("tool", (Part.tool_result("toolu_1", "a.py", False), Part.tool_result("toolu_2", "ok", False),
                         Part.tool_result("toolu_3", "found", True)), created_at=T0 + 3),
        Message("system", (Part.compaction("what happened"),), created_at=T0 + 4),
        Message("assistant", (Part.text("done"),), created_at=T0 + 5),
        Message("system", (Part.other("file-history-snapshot", {"n": 1}),)),
    ]
    ex = pi.export(s, msgs, env_for(tmp_path))
    assert ex.native_id == pi.export(s, msgs, env_for(tmp_path)).native_id == pi_id(s)  # deterministic
    assert ex.native_id.startswith("019c1234") is False and ex.native_id[14] == "7"  # a UUIDv7
    ((path, body),) = ex.files.items()
    assert path.name == f"2026-02-01T10-00-00-000Z_{ex.native_id}.jsonl"
    assert "system-reminder" not in body.decode()
    assert ex.lost == [
        "1 tool call part(s) became plain text", "1 tool result part(s) became plain text",
        "1 record(s) of claude (file-history-snapshot) have no place in a pi session and were left out",
        "1 message(s) of context claude's harness injected (environment, permissions, instructions) were left out",
        "2 tool calls of claude were handed over as pi's own tool calls",
        "2 tool results of claude were handed over as pi's own tool calls"]
    path.parent.mkdir(parents=True)
    path.write_bytes(body)
    sessions, back = by_session(path)
    ((sid, again),) = sessions.items()
    assert again.native_id == ex.native_id and again.cwd == CWD
    ms = back[sid]
    assert [m.role for m in ms] == ["user", "assistant", "tool", "tool", "user", "system", "assistant"]
    assert kinds(ms[1]) == ["reasoning", "tool_call", "tool_call", "text"]
    calls = [(p.get("call_id"), p.get("name"), p.get("input")) for p in ms[1].parts if p.type == "tool_call"]
    assert calls == [("toolu_1", "bash", {"command": "ls"}),
                     ("toolu_2", "edit", {"path": f"{CWD}/a.py", "edits": [{"oldText": "a", "newText": "b"}]})]
    assert ms[1].parts[3].get("text").startswith("[tool call WebSearch (toolu_3)]")
    assert [(p.get("call_id"), p.get("output")) for m in ms[2:4] for p in m.parts] == [
        ("toolu_1", "a.py"), ("toolu_2", "ok")]
    assert ms[4].text() == "[tool result (toolu_3) (error)]\nfound"
    assert ms[5].parts[0].get("summary") == "what happened"
    assert ms[5].extra["pi"]["firstKeptEntryId"] == ms[5].native_id  # pi's context starts at it
    assert ms[6].extra["pi"]["message"]["provider"] == "claude"  # pi falls back to its own model


def test_a_session_pi_did_not_name_never_takes_a_pi_id(tmp_path):
    sessions, msgs = by_session(FIX / "basic.jsonl")
    ((sid, s),) = sessions.items()
    from dataclasses import replace

    fork = replace(s, id="019d000000000000000000000000ffff", native_id=None)
    ex = pi.export(fork, msgs[sid], env_for(tmp_path))
    assert ex.native_id != s.native_id and ex.native_id == pi_id(fork)


# --- damage never loses what came before it -------------------------------------------------------


def _committed(path: Path, data: bytes) -> list:
    path.write_bytes(data)
    msgs, (_o, _s, n), *_ = run(path)
    return msgs[:n]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(ALL),
    where=st.floats(0, 1),
    mode=st.sampled_from(["truncate", "overwrite", "insert"]),
    junk=st.binary(min_size=1, max_size=40),
)
def test_damage_never_raises_nor_loses_earlier_messages(tmp_path, name, where, mode, junk):
    path = tmp_path / "d.jsonl"
    data = (FIX / name).read_bytes()
    at = int(where * len(data))
    bad = damage(data, at, mode, junk)
    before = _committed(path, data[: data.rfind(b"\n", 0, at) + 1])
    path.write_bytes(bad)
    msgs = run(path)[0]
    assert msgs[: len(before)] == before


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(ALL),
    line=st.integers(0, 40),
    key=st.sampled_from(["message", "content", "type", "id", "parentId", "timestamp", "cwd", "role",
                         "arguments", "toolCallId", "summary", "usage", "text", "thinking", "version"]),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=6,
    ),
)
def test_odd_values_never_raise_and_still_export(tmp_path, name, line, key, value):
    lines = (FIX / name).read_bytes().split(b"\n")
    i = line % len(lines)
    try:
        obj = json.loads(lines[i])
    except ValueError:
        return

    poke(obj, key, value)
    lines[i] = json.dumps(obj).encode()
    path = tmp_path / "o.jsonl"
    path.write_bytes(b"\n".join(lines))
    msgs, _l, sessions, _p, _u = run(path)
    for sid, s in sessions.items():
        pi.export(s, [m for x, m in msgs if x == sid], env_for(tmp_path))


def test_fixtures_are_pis_own(tmp_path):
    """Every fixture line is JSON pi wrote; a copy of them keeps the JSON pi's stringify gives."""
    from oxide_git.agents.js_json import stringify

    for name in ALL:
        for line in (FIX / name).read_bytes().splitlines():
            assert stringify(json.loads(line)).encode() == line
    shutil.copy(FIX / "basic.jsonl", tmp_path / "b.jsonl")


def test_an_assistant_message_holding_its_results_is_split_after_each(tmp_path):
    """OpenCode keeps a call's result in the assistant message that made it: pi gets the call, then
    the toolResult, then what the assistant said after it."""
    s = Session(id="019c0000000000000000000000000001", agent="opencode", native_id="ses_1", cwd=CWD,
                created_at=1769940000000)
    msgs = [Message("user", (Part.text("go"),)),
            Message("assistant", (Part.text("running"), Part.tool_call("c1", "bash", {"command": "ls"}),
                                  Part.tool_result("c1", "a.py"), Part.text("ran it"),
                                  Part.other("step-finish", {"x": 1})))]
    ex = pi.export(s, msgs, env_for(tmp_path))
    ((_path, body),) = ex.files.items()
    entries = [json.loads(x) for x in body.splitlines()[1:]]
    assert [(e["message"]["role"], [b.get("type") for b in e["message"].get("content", [])]) for e in entries] == [
        ("user", ["text"]), ("assistant", ["text", "toolCall"]), ("toolResult", ["text"]),
        ("assistant", ["text"])]
    assert entries[1]["message"]["stopReason"] == "toolUse" and entries[3]["message"]["stopReason"] == "stop"
    assert "1 tool results of opencode were handed over as pi's own tool calls" in ex.lost
