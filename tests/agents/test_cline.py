"""Cline: parse every fixture exactly, restart from the Resumable, discover, byte-identical export,
foreign sessions as Cline's own tools, and damaged files."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, FoundMessage, FoundSession, Problem, Resumable, Unknown, js_json, tools
from oxide_git.agents.cline import agent as cline
from oxide_git.agents.cline.export import configured_model, new_id
from oxide_git.core.model import Message, Part, Session, mark_compacted, session_id_for

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "cline"
BASIC, SUB, FAILED, EDGE = "1796162970748_d4qjp", "1796163110409_qaeaw", "1796163150312_tjxd5", "1796170000000_edgea"
COMPACT = "1796176846032_h5zab"  # compacted by Cline itself (a context window of 8,000 tokens)
ALL = [BASIC, SUB, FAILED, EDGE, COMPACT]
HOME = Path("/home/user")  # the fixtures' manifests name their messages files under it
PROJECT = Path("/work/project")


def events(path: Path, offset: int = 0, state: Any = None) -> list[Any]:
    out = list(cline.parse(path, offset=offset, state=state))
    for ev in out:
        if isinstance(ev, Resumable):
            json.dumps(ev.state)  # the importer keeps it as JSON
    return out


def parsed(path: Path) -> tuple[Session, list[Message], list[Any]]:
    evs = events(path)
    [session] = {e.session.id: e.session for e in evs if isinstance(e, FoundSession)}.values()
    msgs = [e.message for e in evs if isinstance(e, FoundMessage)]
    assert all(e.session_id == session.id for e in evs if isinstance(e, FoundMessage))
    return session, msgs, [e for e in evs if isinstance(e, Problem | Unknown)]


def messages_file(sid: str, name: str | None = None) -> Path:
    return FIX / sid / f"{name or sid}.messages.json"


def _home(tmp: Path) -> Path:
    """The fixtures as a Cline store under ``tmp`` (``~/.cline/data/sessions``)."""
    shutil.copytree(FIX, tmp / ".cline" / "data" / "sessions")
    return tmp


# --- parse ----------------------------------------------------------------------------------------


def test_a_run_and_two_acp_turns_exactly() -> None:
    s, msgs, other = parsed(messages_file(BASIC))
    assert other == []
    assert (s.native_id, s.created_at) == (BASIC, 1796162970748)  # the time is the id's
    assert s.id == session_id_for("cline", BASIC, 1796162970748)
    assert s.title == "CLINE-PROMPT-1: make shell.txt with a shell command, then write notes.txt and edit it."
    assert (s.cwd, s.branch, s.model) == ("/work/project", "master", "gpt-4o")  # ACP turns ran gpt-4o
    assert s.updated_at == 1796163081770  # the file's updated_at
    # ACP left it "idle"; a later run found its pid gone and marked it "failed" (Cline's reconciler)
    assert s.extra["manifest"]["status"] == "failed" and s.extra["file"]["agent"] == "lead"
    assert s.extra["file"]["messages"] is None  # the header keeps its place, not a copy
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "assistant", "tool", "assistant",
                                      "tool", "assistant", "user", "assistant", "user", "assistant"]
    prompt, call, result = msgs[:3]
    assert prompt.parts == (Part.text(s.title, user_input="act"),)
    assert (prompt.native_id, prompt.created_at) == ("c6fc719a-b4bc-41ff-a940-712242172b9e", 1796162971300)
    assert call.parts == (Part.tool_call("call_3a687edb408542ca90ef4783", "run_commands",
                                         {"commands": ["echo from-shell | tee shell.txt"]}),)
    assert call.model == "fake-model" and call.usage == {
        "inputTokens": 100, "outputTokens": 20, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    assert call.extra == {"modelInfo": {"id": "fake-model", "provider": "openai-compatible"}}
    assert result.parts == (Part.tool_result(
        "call_3a687edb408542ca90ef4783",
        [{"query": "echo from-shell | tee shell.txt", "result": "from-shell\n", "success": True}],
        False, name="run_commands"),)
    assert msgs[3].parts[0].get("input") == {"path": "/work/project/notes.txt", "new_text": "first line\n"}
    assert msgs[8].text() == "PROMPT-2: now just say you are done."
    assert msgs[11].model == "gpt-4o"


def test_a_sub_agent_hangs_on_the_call_that_spawned_it() -> None:
    parent, pmsgs, _ = parsed(messages_file(SUB))
    sub, msgs, other = parsed(messages_file(SUB, "agent_1796163111348_bj6555"))
    assert other == []
    assert sub.native_id == f"{SUB}__agent_1796163111348_bj6555"
    assert sub.created_at == 1796163111348 and sub.parent_id == parent.id
    [spawn] = [p for m in pmsgs for p in m.parts if p.get("name") == "spawn_agent" and p.type == "tool_call"]
    assert sub.extra["parent_call_id"] == spawn.get("call_id") and sub.extra["parent_native_id"] == SUB
    assert sub.cwd == "/work/project"  # the folder's manifest, its parent's
    assert sub.title is None and "manifest" not in sub.extra
    assert msgs[0].parts == (Part.text("SUBTASK-1 list files"),)  # a task, not a wrapped prompt
    assert sub.extra["file"]["taskType"] == "subagent_task"


def test_failed_edits_and_odd_records() -> None:
    _s, msgs, other = parsed(messages_file(FAILED))
    assert other == []
    fails = [p for m in msgs for p in m.parts if p.type == "tool_result" and '"success":false' in str(p.get("output"))]
    assert len(fails) == 2 and not any(p.get("is_error") for p in fails)  # Cline says so in its content only

    s, msgs, other = parsed(messages_file(EDGE))
    assert sorted((e.kind, e.version) for e in other) == [("block/future_block", "cline 3.0.65"),
                                                         ("file/futureKey", "cline 3.0.65")]
    assert (s.title, s.branch) == ("Edge cases", "main")
    first = msgs[0]
    assert first.parts == (Part.text("Plan: look at the image", user_input="plan"),
                           Part.image("image/png", data="iVBORw0KGgo="),
                           Part.file("/work/project/src/app.py", text="print('hi')\n"))
    thought, redacted, text, future = msgs[1].parts
    assert thought == Part.reasoning("Let me think.", signature="sig-1")
    assert redacted == Part.reasoning("", encrypted="ZW5j", redacted=True)
    assert text == Part.text("It is a PNG.")
    assert future == Part.other("future_block", {"type": "future_block", "payload": {"x": 1}})
    assert msgs[1].cost == 0.00012
    assert msgs[2].parts == (Part.text("a plain string prompt"),) and msgs[2].extra["content_string"]
    assert msgs[4].role == "tool" and msgs[4].parts[0].get("is_error") is True
    assert msgs[5].is_harness()  # an error notice only Cline's screen shows
    assert msgs[6].extra["keys"] == ["role", "ts", "id", "content"]


def test_a_real_compaction_is_a_message_after_what_it_summarised() -> None:
    """Cline's ``<id>.compaction.json``: a summary message and the messages it kept, sent instead of
    the messages file's first ``source_message_count``; the messages file stays whole."""
    _s, msgs, odd = parsed(messages_file(COMPACT))
    assert odd == []
    doc = json.loads((FIX / COMPACT / f"{COMPACT}.compaction.json").read_text())
    canonical = json.loads(messages_file(COMPACT).read_text())["messages"]
    n = doc["source_message_count"]
    assert len(msgs) == len(canonical) + 1 and n == 3
    c = msgs[n]
    assert c.role == "system" and c.is_compaction() and [p.type for p in c.parts] == ["compaction"]
    part = c.parts[0]
    assert part.get("summary") == doc["messages"][0]["content"][0]["text"]
    assert part.get("summary").startswith("Context summary:\n\nCOMPAT-SUMMARY: ")
    assert part.get("kept") == [canonical[1]["id"], canonical[2]["id"]]  # the call and its result
    assert part.get("entries")[1:] == [{"ref": canonical[1]["id"]}, {"ref": canonical[2]["id"]}]
    assert part.get("file")["source_prefix_hash"].startswith("sha256:")
    assert c.created_at == doc["messages"][0]["metadata"]["generatedAt"]
    assert [m.native_id for m in msgs[:n] + msgs[n + 1:]] == [m["id"] for m in canonical]
    assert mark_compacted(msgs)[n - 1].compacted and not mark_compacted(msgs)[n + 1].compacted


def test_a_compaction_file_that_changes_alone_is_a_change(tmp_path: Path) -> None:
    folder = tmp_path / COMPACT
    shutil.copytree(FIX / COMPACT, folder)
    path = folder / f"{COMPACT}.messages.json"
    comp = folder / f"{COMPACT}.compaction.json"
    r = next(e for e in events(path) if isinstance(e, Resumable))
    assert [type(e) for e in events(path, offset=r.offset, state=r.state)] == [FoundSession, Resumable]
    good = comp.read_bytes()
    comp.write_bytes(good[:100])  # damaged: the session without a compaction, nothing raised
    again = events(path, offset=r.offset, state=r.state)
    msgs = [e.message for e in again if isinstance(e, FoundMessage)]
    assert msgs and not any(m.is_compaction() for m in msgs)
    comp.unlink()
    assert not any(e.message.is_compaction() for e in events(path) if isinstance(e, FoundMessage))
    doc = json.loads(good)
    doc["later"] = 1  # a key this release does not write: kept, and reported
    comp.write_text(json.dumps(doc, indent=2) + "\n")
    _s, msgs, odd = parsed(path)
    assert [u.kind for u in odd if isinstance(u, Unknown)] == ["compaction/later"]
    assert next(m for m in msgs if m.is_compaction()).parts[0].get("file")["later"] == 1


def test_a_manifest_alone_is_the_session_without_messages() -> None:
    evs = events(FIX / BASIC / f"{BASIC}.json")
    [found] = [e for e in evs if isinstance(e, FoundSession)]
    assert found.session.id == parsed(messages_file(BASIC))[0].id
    assert not [e for e in evs if isinstance(e, FoundMessage)]


# --- restart: the file is rewritten whole --------------------------------------------------------


def test_restart_from_the_resumable(tmp_path: Path) -> None:
    path = tmp_path / f"{BASIC}.messages.json"
    shutil.copy(messages_file(BASIC), path)
    evs = events(path)
    assert isinstance(evs[0], FoundSession) and isinstance(evs[1], Resumable)
    assert [type(e) for e in evs].count(Resumable) == 1  # right after the session: seqs start at 0
    r = evs[1]
    assert r.offset == path.stat().st_size

    same = events(path, offset=r.offset, state=r.state)  # the same bytes: nothing new
    assert [type(e) for e in same] == [FoundSession, Resumable] and same[1] == r

    doc = json.loads(path.read_text())  # Cline appends a turn and rewrites the file
    doc["messages"].append({"id": "msg_new", "role": "assistant", "content": [
        {"type": "text", "text": "one more"}], "ts": 1796163099999})
    path.write_text(json.dumps(doc, indent=2) + "\n")
    grown = events(path, offset=r.offset, state=r.state)
    first = [e.message for e in evs if isinstance(e, FoundMessage)]
    again = [e.message for e in grown if isinstance(e, FoundMessage)]
    assert again[:-1] == first and again[-1].text() == "one more"  # every message, same order


def test_unknown_records_are_reported_again_when_nothing_changed() -> None:
    path = messages_file(EDGE)
    r = next(e for e in events(path) if isinstance(e, Resumable))
    again = events(path, offset=r.offset, state=r.state)
    assert sorted(e.kind for e in again if isinstance(e, Unknown)) == ["block/future_block", "file/futureKey"]


# --- damage --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "problem"), [
    (b"", "empty, skipped"), (b"{not json", "not a JSON object, skipped"),
    (b"[1, 2]", "not a JSON object, skipped"),
    (b'{"version": 1, "messages": {}}', "no messages list: not a Cline messages file, skipped"),
])
def test_bad_files_are_problems(tmp_path: Path, data: bytes, problem: str) -> None:
    path = tmp_path / "x.messages.json"
    path.write_bytes(data)
    assert [(type(e), getattr(e, "text", None)) for e in events(path)] == [(Problem, problem)]


def test_a_message_that_is_not_an_object_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s_1.messages.json"
    path.write_text(json.dumps({"sessionId": "1796170000001_abcde", "messages": [
        3, {"role": "user", "content": [{"type": "text", "text": "hi"}]}]}))
    _s, msgs, other = parsed(path)
    assert [m.text() for m in msgs] == ["hi"]
    assert [e.text for e in other if isinstance(e, Problem)] == ["messages[0] is not an object, skipped"]


def test_missing_file(tmp_path: Path) -> None:
    [p] = events(tmp_path / "gone.messages.json")
    assert isinstance(p, Problem) and "cannot read" in p.text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(ALL), where=st.floats(0, 1),
       mode=st.sampled_from(["truncate", "overwrite", "insert"]), junk=st.binary(min_size=1, max_size=40))
def test_damage_never_raises(tmp_path: Path, name: str, where: float, mode: str, junk: bytes) -> None:
    data = messages_file(name).read_bytes()
    at = int(where * len(data))
    bad = {"truncate": data[:at], "overwrite": data[:at] + junk + data[at + len(junk):],
           "insert": data[:at] + junk + data[at:]}[mode]
    path = tmp_path / name / f"{name}.messages.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(bad)
    evs = events(path)
    if not any(isinstance(e, FoundSession) for e in evs):
        assert [type(e) for e in evs] == [Problem]


JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                       lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                       max_leaves=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(ALL), index=st.integers(0, 20), key=st.sampled_from(
    ["id", "role", "content", "ts", "metrics", "modelInfo", "metadata", "type", "text", "input",
     "tool_use_id", "is_error", "sessionId", "origin", "thinking", "data", "clash", "keys", "harness",
     "user_input", "call_id", "output", "redacted"]), value=JSONISH)
def test_odd_values_never_raise_and_export_back(tmp_path: Path, name: str, index: int, key: str, value: Any) -> None:
    doc = json.loads(messages_file(name).read_text())
    msgs = doc["messages"]
    target = msgs[index % len(msgs)]
    blocks = target.get("content") if isinstance(target.get("content"), list) else []
    in_block = ("type", "text", "input", "tool_use_id", "is_error", "thinking", "data", "call_id", "output",
                "redacted", "user_input", "clash", "keys")
    where = blocks[index % 2 % len(blocks)] if key in in_block and blocks and index % 3 else (
        doc if key in ("sessionId", "origin") else target)
    where[key] = value
    path = tmp_path / name / f"{name}.messages.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc))
    s, out, _ = parsed(path)
    env = AgentEnv(home=tmp_path, environ={})
    exp = cline.export(s, out, env)
    back = json.loads(exp.files[next(p for p in exp.files if str(p).endswith(".messages.json"))])
    if s.id == session_id_for("cline", str(s.native_id), s.created_at) and isinstance(doc.get("sessionId"), str):
        # as JavaScript would write them back (a float that is a whole number loses its ".0")
        want = json.loads(js_json.dumps([m for m in doc["messages"] if isinstance(m, dict)]))
        assert back["messages"] == want


# --- discover ------------------------------------------------------------------------------------


def test_discover_by_the_manifests_cwd(tmp_path: Path) -> None:
    home = _home(tmp_path)
    env = AgentEnv(home=home, environ={}, worktrees=(PROJECT,))
    root = home / ".cline" / "data" / "sessions"
    assert cline.discover(env) == [
        root / BASIC / f"{BASIC}.messages.json", root / SUB / f"{SUB}.messages.json",
        root / SUB / "agent_1796163111348_bj6555.messages.json", root / FAILED / f"{FAILED}.messages.json",
        root / EDGE / f"{EDGE}.messages.json", root / COMPACT / f"{COMPACT}.messages.json"]
    # (the compaction file is no session of its own)
    assert cline.discover(AgentEnv(home=home, environ={}, worktrees=(Path("/elsewhere"),))) == []
    assert cline.discover(AgentEnv(home=tmp_path / "nobody", environ={}, worktrees=(PROJECT,))) == []
    assert cline.watch_roots(env) == [root]


@pytest.mark.parametrize(("var", "under"), [("CLINE_SESSION_DATA_DIR", ""), ("CLINE_DATA_DIR", "sessions"),
                                            ("CLINE_DIR", "data/sessions")])
def test_the_store_moves_with_clines_variables(tmp_path: Path, var: str, under: str) -> None:
    env = AgentEnv(home=Path("/nowhere"), environ={var: str(tmp_path / "c")}, worktrees=(PROJECT,))
    root = tmp_path / "c" / under if under else tmp_path / "c"
    assert cline.sessions_dir(env) == root
    shutil.copytree(FIX / BASIC, root / BASIC)
    assert cline.discover(env) == [root / BASIC / f"{BASIC}.messages.json"]


# --- export --------------------------------------------------------------------------------------


@pytest.mark.parametrize("sid", ALL)
def test_export_gives_back_clines_own_bytes(sid: str) -> None:
    s, msgs, _ = parsed(messages_file(sid))
    exp = cline.export(s, msgs, AgentEnv(home=HOME, environ={}))
    folder = HOME / ".cline" / "data" / "sessions" / sid
    assert exp.native_id == sid and exp.command == ["cline", "--id", sid] and exp.lost == []
    want = {folder / p.name: p.read_bytes() for p in (FIX / sid).glob(f"{sid}.*")}
    assert len(want) == (3 if sid == COMPACT else 2) and dict(exp.files) == want
    again = parsed(FIX / sid / f"{sid}.messages.json")
    assert again[0] == s  # parse(export(s)) is s


def test_a_sub_agent_exports_as_a_session_of_its_own() -> None:
    s, msgs, _ = parsed(messages_file(SUB, "agent_1796163111348_bj6555"))
    exp = cline.export(s, msgs, AgentEnv(home=HOME, environ={}))
    folder = HOME / ".cline" / "data" / "sessions" / s.native_id  # type: ignore[operator]
    body = exp.files[folder / f"{s.native_id}.messages.json"]
    assert body == messages_file(SUB, "agent_1796163111348_bj6555").read_bytes()
    manifest = json.loads(exp.files[folder / f"{s.native_id}.json"])
    assert manifest["session_id"] == s.native_id and manifest["messages_path"] == str(
        folder / f"{s.native_id}.messages.json")


def _claude_session() -> tuple[Session, list[Message]]:
    s = Session(id="0190000000000aaaaaaaaaaaaaaaaaaaa", agent="claude", native_id="c-1",
                created_at=1796160000000, cwd="/work/project", title="Fix it", branch="main")
    msgs = [
        Message("user", (Part.text("<env>harness</env>"),), created_at=1796160000001, extra={"harness": True}),
        Message("user", (Part.text("PROMPT one"),), created_at=1796160000002),
        Message("assistant", (Part.reasoning("hmm"), Part.text("On it."),
                              Part.tool_call("toolu_1", "Bash", {"command": "echo hi"}),
                              Part.tool_call("toolu_2", "Write", {"file_path": "/work/project/a.txt", "content": "a\n"}),
                              Part.tool_call("toolu_3", "Edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
                              Part.tool_call("toolu_4", "Read", {"file_path": "/work/project/a.txt"}),
                              Part.tool_call("toolu_5", "WebSearch", {"query": "x"}),
                              Part.tool_call("toolu_6", "Bash", {"command": "never answered"})),
                created_at=1796160000003, model="claude-x"),
        Message("tool", (Part.tool_result("toolu_1", "hi\n"), Part.tool_result("toolu_2", "ok"),
                         Part.tool_result("toolu_3", "ok"), Part.tool_result("toolu_4", [{"type": "text", "text": "b"}]),
                         Part.tool_result("toolu_5", "found", is_error=True)), created_at=1796160000004),
        Message("assistant", (Part.text("Done."),), created_at=1796160000005),
    ]
    return s, msgs


def test_another_agents_session_with_clines_own_tools(tmp_path: Path) -> None:
    s, msgs = _claude_session()
    home = _home(tmp_path)  # providers.json: none, so Cline's default provider is named
    exp = cline.export(s, msgs, AgentEnv(home=home, environ={}))
    nid = exp.native_id
    assert nid == new_id(s, msgs) and nid.startswith("1796160000000_") and len(nid) == 19
    folder = home / ".cline" / "data" / "sessions" / nid
    manifest = json.loads(exp.files[folder / f"{nid}.json"])
    assert (manifest["provider"], manifest["model"], manifest["cwd"]) == ("cline", "claude-x", "/work/project")
    assert manifest["messages_path"] == str(folder / f"{nid}.messages.json")
    assert manifest["metadata"]["title"] == "Fix it" and manifest["prompt"] == "PROMPT one"
    doc = json.loads(exp.files[folder / f"{nid}.messages.json"])
    assert doc["sessionId"] == nid and doc["origin"]["sessionId"] == nid
    user, assistant, results, done = doc["messages"]
    assert user["content"] == [{"type": "text", "text": '<user_input mode="act">PROMPT one</user_input>'}]
    uses = [(b["name"], b["input"]) for b in assistant["content"] if b["type"] == "tool_use"]
    assert uses == [("run_commands", {"commands": ["echo hi"]}),
                    ("editor", {"path": "/work/project/a.txt", "new_text": "a\n"}),
                    ("editor", {"path": "/work/project/a.txt", "old_text": "a", "new_text": "b"}),
                    ("read_files", {"files": [{"path": "/work/project/a.txt"}]})]
    texts = [b["text"] for b in assistant["content"] if b["type"] == "text"]
    assert texts[0] == "On it." and texts[1].startswith("[tool call WebSearch (toolu_5)]")
    assert texts[2].startswith("[tool call Bash (toolu_6)]")
    assert [(b["type"], b.get("name"), b.get("content")) for b in results["content"]][:4] == [
        ("tool_result", "run_commands", "hi\n"), ("tool_result", "editor", "ok"),
        ("tool_result", "editor", "ok"), ("tool_result", "read_files", "b")]
    assert results["content"][4]["type"] == "text" and "(error)" in results["content"][4]["text"]
    assert done["content"] == [{"type": "text", "text": "Done."}]
    assert exp.lost == [
        "Cline has no model configured yet: the manifest records model claude-x; Cline resumes with "
        "the provider and model it is configured with when it starts",
        "1 reasoning parts (assistant) were left out", "2 tool call parts became plain text",
        "1 tool result parts became plain text",
        "1 message(s) of context claude's harness injected (environment, permissions, instructions) were left out",
        "4 tool calls of claude were handed over as Cline's own tool calls",
        "4 tool results of claude were handed over as Cline's own tool calls"]
    (folder).mkdir(parents=True)  # what Cline reads back is that session, with the same ids
    for path, data in exp.files.items():
        path.write_bytes(data)
    back, back_msgs, _ = parsed(folder / f"{nid}.messages.json")
    assert back.native_id == nid and back.id == session_id_for("cline", nid, 1796160000000)
    assert back.cwd == "/work/project" and back_msgs[0].parts == (Part.text("PROMPT one", user_input="act"),)
    assert [m.role for m in back_msgs] == ["user", "assistant", "user", "assistant"]


def test_the_configured_provider_and_model_go_into_the_manifest(tmp_path: Path) -> None:
    settings_dir = tmp_path / ".cline" / "data" / "settings"
    settings_dir.mkdir(parents=True)
    (settings_dir / "providers.json").write_text(json.dumps({"version": 1, "lastUsedProvider": "openai-compatible",
        "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible", "model": "m-1"}}}}))
    env = AgentEnv(home=tmp_path, environ={})
    assert configured_model(env) == ("openai-compatible", "m-1")
    assert configured_model(AgentEnv(home=tmp_path / "none", environ={})) == ("cline", "")
    s, msgs = _claude_session()
    exp = cline.export(s, msgs, env)
    [manifest] = [json.loads(v) for k, v in exp.files.items() if not str(k).endswith(".messages.json")]
    assert (manifest["provider"], manifest["model"]) == ("openai-compatible", "m-1")


# Cline 3.0.65's manifest schema (``W9`` in its bundle): these are ``z.string().min(1)``; a
# manifest that fails it is no session to Cline (``session/load``: "Resource not found").
_REQUIRED_STRINGS = ("session_id", "source", "started_at", "provider", "model", "cwd", "workspace_root")


@pytest.mark.parametrize("providers", [None, {"version": 1, "lastUsedProvider": "anthropic", "providers": {
    "anthropic": {"settings": {"provider": "anthropic", "apiKey": "k"}}}}], ids=["first-run", "no-model"])
def test_a_manifest_written_before_cline_has_a_model_is_still_a_session(tmp_path: Path,
                                                                        providers: Any) -> None:
    """Issue 37: into a HOME where Cline never ran (or was set up without a model) the manifest
    named ``"model": ""``, which Cline's schema rejects, so Cline never found the session."""
    if providers is not None:
        settings_dir = tmp_path / ".cline" / "data" / "settings"
        settings_dir.mkdir(parents=True)
        (settings_dir / "providers.json").write_text(json.dumps(providers))
    s, msgs = _claude_session()
    exp = cline.export(s, msgs, AgentEnv(home=tmp_path, environ={}))
    [manifest] = [json.loads(v) for k, v in exp.files.items() if not str(k).endswith(".messages.json")]
    assert all(isinstance(manifest[k], str) and manifest[k] for k in _REQUIRED_STRINGS), manifest
    assert manifest["provider"] == ("cline" if providers is None else "anthropic")
    assert manifest["model"] == "claude-x"
    assert any("Cline has no model configured yet" in line for line in exp.lost)
    no_model = replace(s, model=None)
    exp = cline.export(no_model, [replace(m, model=None) for m in msgs], AgentEnv(home=tmp_path, environ={}))
    [manifest] = [json.loads(v) for k, v in exp.files.items() if not str(k).endswith(".messages.json")]
    assert manifest["model"] == "unknown"


@pytest.mark.parametrize(("name", "args", "kind", "path", "rest"), [
    ("editor", {"path": "/p/a", "new_text": "x"}, "write", "/p/a", "x"),
    ("editor", {"path": "/p/a", "old_text": "x", "new_text": "y"}, "edit", "/p/a", (("x", "y"),)),
    ("editor", {"path": "/p/a", "new_text": "y", "insert_line": 3}, None, None, None),
    ("read_files", {"files": [{"path": "/p/a"}]}, "read", "/p/a", None),
    ("read_files", {"files": [{"path": "/p/a", "start_line": 2}]}, None, None, None),
    ("read_files", {"files": [{"path": "/p/a"}, {"path": "/p/b"}]}, None, None, None),
    ("run_commands", {"commands": ["ls", "pwd"]}, "shell", None, "ls && pwd"),
])
def test_clines_tools_as_other_agents_see_them(name: str, args: Any, kind: str | None, path: str | None,
                                               rest: Any) -> None:
    c = tools.classify(name, json.dumps(args))
    if kind is None:
        assert c is None
        return
    assert c is not None and (c.kind, c.path) == (kind, path)
    assert rest == {"write": c.content, "edit": c.edits, "read": None, "shell": c.command}[kind]
