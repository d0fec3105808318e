"""Claude Code: parse every fixture exactly, restart anywhere, discover, export round trip, fuzz."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, Problem
from oxide_git.agents.claude import agent as claude
from oxide_git.agents.claude.export import encode_cwd
from oxide_git.core.model import Message, Part, Session, session_id_for
from tests.agents.replay import damage, poke, replay

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "claude"
SUB_UUID = "30000000-0000-4000-8000-000000000003"
ALL = sorted(p.name for p in FIX.glob("*.jsonl"))
T0 = 1769940000000  # 2026-02-01T10:00:00Z


def U(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def run(path: Path, offset: int = 0, state: Any = None, msgs: list | None = None):
    """Parse like the importer: messages after the last Resumable are replaced on restart."""
    r = replay(claude.parse(path, offset=offset, state=state), offset, state, msgs)
    return r.msgs, r.last, r.sessions, r.problems


def parse_all(path: Path):
    msgs, _last, sessions, problems = run(path)
    return [m for _s, m in msgs], sessions, problems


def kinds(m: Message) -> list[str]:
    return [p.type for p in m.parts]


# --- parse, one fixture per edge case -------------------------------------------------------------


def test_split_response_is_one_message_with_last_usage():
    msgs, sessions, problems = parse_all(FIX / "split_response.jsonl")
    assert problems == []
    (s,) = sessions.values()
    assert s.native_id == "10000000-0000-4000-8000-000000000001"
    assert s.id == session_id_for("claude", s.native_id, T0 + 500)  # snapshot timestamp comes first
    assert (s.cwd, s.branch, s.model) == ("/work/project", "main", "claude-opus-4-6")
    assert s.created_at == T0 + 500 and s.updated_at == T0 + 10_000
    assert [m.role for m in msgs] == ["system", "user", "assistant", "system", "tool", "tool",
                                      "assistant", "system"]
    snap, prompt, answer, hook, r1, r2, final, duration = msgs
    assert kinds(snap) == ["other"] and snap.parts[0].get("kind") == "file-history-snapshot"
    assert prompt.parts == (Part.text("List the files and read README.md"),)
    assert prompt.native_id == U(1) and prompt.created_at == T0 + 1000
    assert prompt.extra["permissionMode"] == "default" and prompt.extra["parentUuid"] is None
    assert answer.parts == (
        Part.reasoning("I should run ls.", signature="sig-abc"),
        Part.text("Let me look."),
        Part.tool_call("toolu_1", "Bash", {"command": "ls"}),
        Part.tool_call("toolu_2", "Read", {"file_path": "/work/project/README.md"}),
    )
    assert answer.native_id == U(2)
    assert answer.extra["uuids"] == [U(2), U(3), U(4), U(7), U(8)]
    assert answer.extra["requestId"] == "req_msg_A"
    assert answer.usage == {"input_tokens": 3, "output_tokens": 125, "cache_read_input_tokens": 17000}
    assert answer.model == "claude-opus-4-6" and answer.cost is None
    assert hook.parts[0].get("kind") == "progress/hook_progress"
    assert r1.parts == (Part.tool_result("toolu_1", "README.md\nsrc", False, structured={
        "stdout": "README.md\nsrc", "stderr": "", "interrupted": False, "isImage": False}),)
    assert r1.extra["sourceToolAssistantUUID"] == U(4)
    assert r2.parts[0].get("output") == "hello"
    assert r2.parts[0].get("content") == [{"type": "text", "text": "hello"}]
    assert r2.parts[0].get("structured")["file"]["filePath"] == "/work/project/README.md"
    assert final.parts == (Part.text("README.md says hello."),)
    assert final.usage == {"input_tokens": 5, "output_tokens": 7}
    assert duration.parts[0].get("kind") == "system/turn_duration"
    assert duration.parts[0].get("raw")["durationMs"] == 9000


def test_compaction_boundary_and_summary_become_one_message():
    msgs, _s, _p = parse_all(FIX / "compaction.jsonl")
    assert [m.role for m in msgs] == ["user", "assistant", "system", "user", "assistant"]
    comp = msgs[2]
    assert comp.is_compaction() and kinds(comp) == ["compaction"]
    assert comp.parts[0].get("summary").startswith("This session is being continued")
    assert comp.parts[0].get("replaces") is None
    assert comp.native_id == U(3) and comp.extra["uuids"] == [U(3), U(4)]
    assert comp.extra["boundary"]["compactMetadata"] == {"trigger": "auto", "preTokens": 170251}
    assert comp.extra["boundary"]["logicalParentUuid"] == U(2)
    assert comp.extra["isCompactSummary"] is True


def test_subagent_is_a_child_session_linked_to_its_task_call():
    parent_msgs, parent_sessions, _ = parse_all(FIX / f"{SUB_UUID}.jsonl")
    (parent,) = parent_sessions.values()
    task = parent_msgs[1].parts[0]
    assert task.type == "tool_call" and task.get("name") == "Task"
    assert parent_msgs[3].parts[0].get("structured")["agentId"] == "a1b2c3d"
    msgs, sessions, _ = parse_all(FIX / SUB_UUID / "subagents" / "agent-a1b2c3d.jsonl")
    (child,) = sessions.values()
    assert child.native_id == f"{SUB_UUID}/agent-a1b2c3d"
    assert child.parent_id == parent.id
    assert child.extra["parent_call_id"] == "toolu_task"
    assert child.extra["agent_id"] == "a1b2c3d"
    assert child.model == "claude-opus-4-6"  # the last assistant line's model
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert msgs[1].model == "claude-sonnet-4-5"
    assert msgs[0].extra["isSidechain"] is True


def test_flat_legacy_agent_file_finds_its_parent(tmp_path):
    shutil.copy(FIX / f"{SUB_UUID}.jsonl", tmp_path / f"{SUB_UUID}.jsonl")
    shutil.copy(FIX / SUB_UUID / "subagents" / "agent-a1b2c3d.jsonl", tmp_path / "agent-a1b2c3d.jsonl")
    _m, parent_sessions, _ = parse_all(tmp_path / f"{SUB_UUID}.jsonl")
    _m, sessions, _ = parse_all(tmp_path / "agent-a1b2c3d.jsonl")
    (child,) = sessions.values()
    assert child.native_id == f"{SUB_UUID}/agent-a1b2c3d"
    assert child.parent_id == next(iter(parent_sessions))
    assert child.extra["parent_call_id"] == "toolu_task"


def test_interrupted_tool_call_keeps_the_call_without_result():
    msgs, _s, _p = parse_all(FIX / "interrupted.jsonl")
    assert [m.role for m in msgs] == ["user", "assistant", "user", "user"]
    assert msgs[1].parts == (Part.tool_call("toolu_1", "Bash", {"command": "pytest"}),)
    assert msgs[2].parts == (Part.text("[Request interrupted by user for tool use]"),)


def test_partial_last_line_is_not_consumed(tmp_path):
    path = FIX / "partial_last_line.jsonl"
    msgs, last, _s, problems = run(path)
    assert problems == []
    assert [m.parts[0].get("text") for _s2, m in msgs] == ["First", "First answer"]
    data = path.read_bytes()
    assert last[0] <= data.rindex(b"\n") + 1
    # complete the line: parsing from the last Resumable gives the whole session
    full = tmp_path / path.name
    full.write_bytes(data + b"".join(_rest_of_partial(data)))
    msgs2, _l, _s, problems = run(full, last[0], last[1], msgs[: last[2]])
    assert problems == []
    assert [m.parts[0].get("text") for _s2, m in msgs2] == ["First", "First answer", "Second answer"]


def _rest_of_partial(data: bytes) -> list[bytes]:
    head = data[data.rindex(b"\n") + 1:]
    line = {"parentUuid": U(2), "isSidechain": False, "userType": "external", "cwd": "/work/project",
            "sessionId": "50000000-0000-4000-8000-000000000005", "version": "2.1.39",
            "gitBranch": "main", "type": "assistant", "requestId": "req_msg_B",
            "message": {"model": "claude-opus-4-6", "id": "msg_B", "type": "message",
                        "role": "assistant", "content": [{"type": "text", "text": "Second answer"}],
                        "stop_reason": None, "stop_sequence": None,
                        "usage": {"input_tokens": 3, "output_tokens": 1}},
            "uuid": U(3), "timestamp": "2026-02-01T10:00:03.000Z"}
    full = json.dumps(line, separators=(",", ":")).encode()
    assert full.startswith(head)
    return [full[len(head):], b"\n"]


def test_non_json_line_is_reported_and_skipped():
    msgs, _s, problems = parse_all(FIX / "not_json.jsonl")
    assert problems == [Problem(2, "not JSON, skipped")]
    assert [m.text() for m in msgs] == ["Hello", "Hi!", "Bye"]


def test_images_documents_and_image_tool_results():
    msgs, _s, _p = parse_all(FIX / "images.jsonl")
    prompt = msgs[0]
    assert kinds(prompt) == ["text", "image", "image", "file", "file"]
    img, url, notes, pdf = prompt.parts[1:]
    assert img.get("mime") == "image/png" and img.get("data").startswith("iVBOR")
    assert url.get("url") == "https://example.com/cat.png"
    assert notes.get("path") == "notes.txt" and notes.get("text") == "notes"
    assert pdf.get("mime") == "application/pdf" and pdf.get("source")["data"] == "JVBERi0xLjQK"
    assert prompt.extra["imagePasteIds"] == [1]
    result = msgs[2].parts[0]
    assert msgs[2].role == "tool" and result.type == "tool_result"
    assert result.get("content")[0]["type"] == "image"
    assert result.get("structured")["type"] == "image"


def test_unknown_and_metadata_lines_are_kept():
    msgs, sessions, problems = parse_all(FIX / "unknown_type.jsonl")
    assert problems == []
    (s,) = sessions.values()
    assert s.title == "My session"  # custom-title wins over summary
    assert [m.role for m in msgs] == ["system", "user", "assistant", "system", "user"]
    assert msgs[0].parts[0] == Part.other("pr-link", json.loads(
        (FIX / "unknown_type.jsonl").read_bytes().splitlines()[0]))
    assert kinds(msgs[2]) == ["text", "other", "reasoning"]
    assert msgs[2].parts[1].get("raw") == {"type": "fancy_new_block", "payload": 42}
    assert msgs[2].parts[2].get("encrypted") == "ENCRYPTED" and msgs[2].parts[2].get("redacted")
    assert [p.get("kind") for p in msgs[3].parts] == [
        "custom-title", "queue-operation", "hologram", "summary", "system/api_error"]
    assert msgs[3].native_id == U(3)


def test_legacy_sidechain_lines_become_a_child_session():
    msgs, _last, sessions, _p = run(FIX / "legacy_sidechain.jsonl")
    main = next(s for s in sessions.values() if s.parent_id is None)
    child = next(s for s in sessions.values() if s.parent_id is not None)
    assert child.parent_id == main.id
    assert child.native_id == f"{main.native_id}/sidechain-{U(3)}"
    assert main.title == "Old predecessor title"
    in_main = [m for sid, m in msgs if sid == main.id]
    in_child = [m for sid, m in msgs if sid == child.id]
    assert [m.text() for m in in_child] == ["find TODOs", "Found 2 TODOs"]
    assert [m.role for m in in_main] == ["system", "user", "assistant", "tool", "assistant"]
    assert [m.cost for m in in_main if m.role == "assistant"] == [0.0123, 0.02]
    assert in_main[2].extra["durationMs"] == 900 and in_main[2].extra["version"] == "1.0.67"


def test_session_id_is_stable_and_native_id_falls_back_to_session_id(tmp_path):
    renamed = tmp_path / "renamed.jsonl"
    shutil.copy(FIX / "compaction.jsonl", renamed)
    _m, sessions, _p = parse_all(renamed)
    (s,) = sessions.values()
    assert s.native_id == "20000000-0000-4000-8000-000000000002"
    assert s.id == session_id_for("claude", s.native_id, T0 + 1000)


# --- incremental ----------------------------------------------------------------------------------


def _copy(name: str, dest: Path) -> Path:
    shutil.copytree(FIX, dest, dirs_exist_ok=True)
    return dest / name


def _cuts(data: bytes) -> list[int]:
    lines = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    return sorted({0, len(data), *lines, *range(0, len(data), 97)})


@pytest.mark.parametrize("name", [*ALL, f"{SUB_UUID}/subagents/agent-a1b2c3d.jsonl"])
def test_restart_from_any_point_gives_the_same_result(name, tmp_path):
    path = _copy(name, tmp_path / "store")
    data = path.read_bytes()
    whole, _l, whole_sessions, _p = run(path)
    for cut in _cuts(data):
        path.write_bytes(data[:cut])
        msgs, last, _s, _p = run(path)
        offset, state, n = last
        path.write_bytes(data)
        msgs, _l, sessions, _p = run(path, offset, json.loads(json.dumps(state)), msgs[:n])
        assert msgs == whole, f"cut at {cut}"
        assert {k: v for k, v in sessions.items() if k in whole_sessions} == {
            k: v for k, v in whole_sessions.items() if k in sessions}


def test_restart_in_three_steps(tmp_path):
    path = _copy("split_response.jsonl", tmp_path / "s")
    data = path.read_bytes()
    whole = run(path)[0]
    msgs: list = []
    offset, state = 0, None
    for cut in (len(data) // 3, 2 * len(data) // 3, len(data)):
        path.write_bytes(data[:cut])
        msgs, (offset, state, n), _s, _p = run(path, offset, state, msgs)
        msgs = msgs[:n] if cut < len(data) else msgs
    assert msgs == whole


# --- discover -------------------------------------------------------------------------------------


def _install(root: Path, folder: str, name: str, cwd: str, src: Path) -> Path:
    dest = root / "projects" / folder / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(src.read_bytes().replace(b'"cwd":"/work/project"', json.dumps(
        {"cwd": cwd}, separators=(",", ":"))[1:-1].encode()))
    return dest


def test_discover_matches_by_cwd_inside_lines(tmp_path, isolated_env):
    import os

    repo = tmp_path / "my repo"
    (repo / "sub").mkdir(parents=True)
    other = tmp_path / "my-repo"
    root = Path(os.environ["CLAUDE_CONFIG_DIR"])
    assert root.is_relative_to(isolated_env)
    enc = encode_cwd(str(repo))
    assert enc == encode_cwd(str(other))  # the folder name collides: only the lines can tell
    mine = _install(root, enc, f"{SUB_UUID}.jsonl", str(repo), FIX / f"{SUB_UUID}.jsonl")
    sub = _install(root, enc, f"{SUB_UUID}/subagents/agent-a1b2c3d.jsonl", str(repo),
                   FIX / SUB_UUID / "subagents" / "agent-a1b2c3d.jsonl")
    _install(root, enc, "20000000-0000-4000-8000-000000000002.jsonl", str(other),
             FIX / "compaction.jsonl")
    deep = _install(root, "somewhere-else", "10000000-0000-4000-8000-000000000001.jsonl",
                    str(repo / "sub"), FIX / "split_response.jsonl")
    second = tmp_path / "second-config"
    extra = _install(second, "x", "40000000-0000-4000-8000-000000000004.jsonl", str(repo),
                     FIX / "interrupted.jsonl")
    environ = {"CLAUDE_CONFIG_DIR": f"{root},{second}"}
    env = AgentEnv(home=isolated_env, environ=environ, worktrees=[repo])
    assert claude.discover(env) == [mine, sub, deep, extra]
    assert claude.discover(AgentEnv(home=isolated_env, environ={}, worktrees=[repo])) == [mine, sub, deep]
    assert claude.discover(AgentEnv(home=tmp_path / "empty", environ={}, worktrees=[repo])) == []
    assert claude.discover(AgentEnv(home=isolated_env, environ=environ, worktrees=[other])) == [
        root / "projects" / enc / "20000000-0000-4000-8000-000000000002.jsonl"]


# --- export ---------------------------------------------------------------------------------------


def _normal(m: Message) -> tuple:
    parts = []
    for p in m.parts:
        data = dict(p.data)
        if p.type == "other" and isinstance(data.get("raw"), dict):
            data["raw"] = {k: v for k, v in data["raw"].items() if k != "parentUuid"}
        parts.append((p.type, data))
    return (m.role, tuple(parts), m.native_id, m.model, m.usage, m.cost)


@pytest.mark.parametrize("name", ALL)
def test_export_round_trip(name, tmp_path):
    _msgs, sessions, _p = parse_all(FIX / name)
    main = next(s for s in sessions.values() if s.parent_id is None)
    mine = [m for sid, m in run(FIX / name)[0] if sid == main.id]
    env = AgentEnv(home=tmp_path, environ={"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")},
                   worktrees=[Path("/work/project")])
    ex = claude.export(main, mine, env)
    assert ex.native_id == main.native_id and ex.command == ["claude", "--resume", main.native_id]
    assert ex.cwd == "/work/project" and ex.lost == []
    ((path, body),) = ex.files.items()
    assert path == tmp_path / "cfg" / "projects" / "-work-project" / f"{main.native_id}.jsonl"
    lines = [json.loads(x) for x in body.splitlines()]
    assert all(x.get("sessionId", ex.native_id) == ex.native_id for x in lines)
    chained = [x for x in lines if "uuid" in x]
    assert len({x["uuid"] for x in chained}) == len(chained)
    written = {x["uuid"] for x in chained}
    for x in chained:  # every parent pointer goes to a line of the file (Claude's tree, as it was)
        assert x.get("parentUuid") is None or x["parentUuid"] in written
    path.parent.mkdir(parents=True)
    path.write_bytes(body)
    back, back_sessions, problems = parse_all(path)
    assert problems == []
    assert [_normal(m) for m in back] == [_normal(m) for m in mine]
    (again,) = (s for s in back_sessions.values() if s.parent_id is None)
    assert again.id == main.id


def test_export_of_another_agents_session_hands_its_tool_calls_over(tmp_path):
    """A shell call (with its result) becomes Claude's own Bash tool_use and tool_result; a tool
    Claude has no like of, or a call without its result, stays text; harness context is left out."""
    s = Session(id="019c0000000000000000000000000000", agent="codex", native_id="rollout-1",
                cwd="/work/project", created_at=T0, branch="main")
    msgs = [
        Message("system", (Part.text("You are Codex"),), created_at=T0),
        Message("user", (Part.text("<environment_context>sandbox</environment_context>"),),
                created_at=T0, extra={"harness": True}),
        Message("user", (Part.text("fix it"),), created_at=T0 + 1),
        Message("assistant", (Part.reasoning("thinking hard", encrypted="xyz"),
                              Part.tool_call("call_1", "shell", {"cmd": ["bash", "-lc", "ls"]}),
                              Part.tool_call("call_2", "web_search", {"q": "x"})), created_at=T0 + 2),
        Message("tool", (Part.tool_result("call_1", "a.py", False),
                         Part.tool_result("call_2", "found", False)), created_at=T0 + 3),
        Message("assistant", (Part.text("done"), Part.patch("--- a\n+++ b\n")), model="gpt-5"),
        Message("system", (Part.other("token_count", {"n": 1}),)),
    ]
    env = AgentEnv(home=tmp_path, environ={}, worktrees=[Path("/work/project")])
    ex = claude.export(s, msgs, env)
    assert ex.native_id == claude.export(s, msgs, env).native_id  # deterministic
    assert ex.native_id != s.native_id
    ((path, body),) = ex.files.items()
    assert path == tmp_path / ".claude" / "projects" / "-work-project" / f"{ex.native_id}.jsonl"
    assert "1 tool calls of codex were handed over as Claude's own tool calls" in ex.lost
    assert "1 tool results of codex were handed over as Claude's own tool calls" in ex.lost
    assert any("harness injected" in x and x.startswith("1 ") for x in ex.lost)
    assert any("reasoning" in x for x in ex.lost)
    assert "1 record of codex (token_count) has no place in a Claude transcript and was left out" in ex.lost
    assert "sandbox" not in body.decode()
    path.parent.mkdir(parents=True)
    path.write_bytes(body)
    back, _s, problems = parse_all(path)
    assert problems == []
    assert [m.role for m in back] == ["user", "user", "assistant", "user", "assistant"]  # result + text
    assert back[0].extra["isMeta"] is True
    call = next(p for p in back[2].parts if p.type == "tool_call")
    assert (call.get("call_id"), call.get("name"), call.get("input")) == ("call_1", "Bash", {"command": "ls"})
    assert "[tool call web_search (call_2)]" in back[2].text()
    results = [p for p in back[3].parts if p.type == "tool_result"]
    assert [(r.get("call_id"), r.get("output")) for r in results] == [("call_1", "a.py")]
    assert "[tool result (call_2)]\nfound" in back[3].text()
    assert back[4].text() == "done\n--- a\n+++ b\n"


def test_export_of_a_fork_never_reuses_the_original_native_id(tmp_path):
    msgs, sessions, _p = parse_all(FIX / "compaction.jsonl")
    (s,) = sessions.values()
    fork = Session(id="019d000000000000000000000000ffff", agent="claude", native_id=s.native_id,
                   cwd=s.cwd, created_at=s.created_at)
    ex = claude.export(fork, msgs, AgentEnv(home=tmp_path, environ={}))
    assert ex.native_id != s.native_id


def test_encode_cwd():
    assert encode_cwd("/Users/tom/tmp/tenant-library") == "-Users-tom-tmp-tenant-library"
    assert encode_cwd("/home/u/my_project") == "-home-u-my-project"
    assert encode_cwd("C:\\Users\\me\\proj") == "C--Users-me-proj"
    assert encode_cwd("/a/\U0001f600") == "-a---"
    long = "/" + "x" * 250
    enc = encode_cwd(long)
    assert enc.startswith("-" + "x" * 199 + "-") and len(enc) > 201
    h = 0
    for ch in long:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    h = abs(h - (1 << 32) if h >= 1 << 31 else h)
    assert int(enc[201:], 36) == h


# --- damage never loses what came before it -------------------------------------------------------


def _committed(path: Path, data: bytes) -> list:
    path.write_bytes(data)
    msgs, (_o, _s, n), _ss, _p = run(path)
    return msgs[:n]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(ALL),
    line=st.integers(0, 50),
    key=st.sampled_from(["message", "content", "type", "uuid", "id", "timestamp", "cwd",
                         "toolUseResult", "sessionId", "parentUuid", "data", "isSidechain"]),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=6,
    ),
)
def test_odd_values_never_raise(tmp_path, name, line, key, value):
    path = _copy(name, tmp_path / "o")
    lines = path.read_bytes().split(b"\n")
    i = line % len(lines)
    try:
        obj = json.loads(lines[i])
    except ValueError:
        return

    poke(obj, key, value)
    lines[i] = json.dumps(obj).encode()
    path.write_bytes(b"\n".join(lines))
    msgs, _last, sessions, _p = run(path)
    for _sid, m in msgs:
        assert isinstance(m, Message)
    main = [s for s in sessions.values() if s.parent_id is None]
    if main:
        claude.export(main[0], [m for _sid, m in msgs], AgentEnv(home=tmp_path, environ={}))
