"""The Codex rollout reader and writer, over the hand-written rollouts in fixtures/codex."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, FoundMessage, FoundSession, Problem, Resumable, Unknown
from oxide_git.agents.codex import agent as codex
from oxide_git.core.model import Message, Session, session_id_for
from tests.agents.replay import damage

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "codex"
ALL = sorted(FIX.iterdir())


def run(path: Path, offset: int = 0, state=None) -> list:
    return list(codex.parse(path, offset=offset, state=state))


def msgs(events: list) -> list[Message]:
    return [e.message for e in events if isinstance(e, FoundMessage)]


def last_session(events: list) -> Session:
    return [e.session for e in events if isinstance(e, FoundSession)][-1]


def shape(m: Message) -> tuple:
    return (m.role, tuple((p.type, p.get("kind") or p.get("name")) for p in m.parts))


EVENTS = ("user_message", "agent_message", "agent_reasoning")


def without_file(s: Session) -> Session:
    return replace(s, extra={k: v for k, v in s.extra.items() if k != "file"})


def env_for(home: Path, *worktrees: Path) -> AgentEnv:
    return AgentEnv(home=home, environ=dict(os.environ), worktrees=tuple(worktrees))


def test_turns_grouping_and_fields() -> None:
    ev = run(FIX / "turns.jsonl")
    ms = msgs(ev)
    # every line of the envelope era is kept in place (events, token counts, repeated contexts)
    tc, um, am = ("other", "token_count"), ("other", "user_message"), ("other", "agent_message")
    assert [shape(m) for m in ms] == [
        ("system", (("text", None),)),
        ("system", (("text", None),)),
        ("user", (("other", "task_started"), ("text", None), um, ("other", "turn_context"), tc)),
        ("assistant", (("other", "agent_reasoning"), ("reasoning", None), am, ("text", None),
                       ("tool_call", "shell_command"), tc)),
        ("tool", (("tool_result", None), ("other", "turn_context"), tc)),
        ("assistant", (("tool_call", "apply_patch"), tc)),
        ("tool", (("tool_result", None),)),
        ("assistant", (am, ("text", None), tc, ("other", "task_complete"))),
        ("user", (("other", "task_started"), ("text", None), um, ("other", "ghost_snapshot"),
                  ("other", "turn_context"))),
        ("assistant", (("tool_call", "local_shell"),)),
        ("tool", (("tool_result", None),)),
        ("assistant", (("other", "web_search_call"), ("tool_call", "update_plan"))),
        ("tool", (("tool_result", None),)),
        ("assistant", (am, ("text", None), tc, ("other", "task_complete"))),
    ]
    assert all(m.is_harness() for m in ms[:2]) and not any(m.is_harness() for m in ms[2:])
    assert ms[0].extra["codex_role"] == "developer" and ms[1].extra["codex_role"] == "user"
    assert ms[2].text() == "Fix the failing test in src/app.py"
    r = ms[3].parts[1]
    assert r.get("text") == "**Looking at the test**" and r.get("encrypted") == "gAAAAenc1"
    assert "events" not in ms[3].parts[3].data  # the agent_message event is its own part
    call = ms[3].parts[4]
    assert call.get("call_id") == "call_1" and call.get("input") == {"command": "pytest -q",
                                                                     "workdir": "."}
    assert ms[3].model == "gpt-5-codex" and ms[3].usage["total_tokens"] == 120
    assert ms[3].usage["total"]["total_tokens"] == 120
    assert ms[4].parts[0].get("is_error") is True
    assert ms[5].parts[0].get("input").startswith("*** Begin Patch")
    assert ms[5].usage["total"]["total_tokens"] == 300  # cumulative total kept, never summed
    assert ms[6].parts[0].get("is_error") is False
    assert ms[9].model == "gpt-5.1-codex"
    bad = ms[11].parts[1]
    assert bad.get("input") == "not json {" and bad.get("arguments") == "not json {"
    assert ms[12].parts[0].get("output") == [{"type": "input_text", "text": "Plan updated"}]
    texts = [p.get("text") for m in ms if m.role == "assistant" for p in m.parts if p.type == "text"]
    assert texts == ["Let me run the tests.", "Fixed: the test passes now.", "README.md and src/."]
    s = last_session(ev)
    native = "019c0000-0000-7000-8000-000000000001"
    assert s.id == session_id_for("codex", native, s.created_at) and s.native_id == native
    assert (s.cwd, s.branch, s.model) == ("/work/proj", "main", "gpt-5.1-codex")
    assert s.title == "Fix the failing test in src/app.py"
    assert s.created_at == 1772359200000 and s.updated_at == 1772359213002
    assert isinstance(ev[-1], Resumable) and ev[-1].offset == (FIX / "turns.jsonl").stat().st_size


def test_compacted() -> None:
    ms = msgs(run(FIX / "compacted.jsonl"))
    comp = [m for m in ms if m.is_compaction()]
    assert len(comp) == 2 and all(m.role == "system" for m in comp)
    remote = comp[0].parts[0]
    assert remote.get("summary") == "" and remote.get("replacement_history")[1]["type"] == "compaction"
    assert [p.get("kind") for p in comp[0].parts[1:]] == ["context_compacted", "turn_context"]
    assert comp[1].text() == "Local summary: the user asked for a summary."
    assert ms[-1].parts[-1].get("kind") == "thread_rolled_back"


def test_fork_records_parent_and_keeps_one_session() -> None:
    ev = run(FIX / "fork.jsonl")
    sessions = {e.session.id for e in ev if isinstance(e, FoundSession)}
    assert len(sessions) == 1
    s = last_session(ev)
    assert s.native_id == "019c0000-0000-7000-8000-00000000000c"
    assert s.extra["forked_from"] == "019c0000-0000-7000-8000-000000000002"
    ms = msgs(ev)
    assert [m.extra.get("copied", False) for m in ms] == [True, True, False, False]
    assert ms[0].parts[0].get("kind") == "session_meta"  # the parent's meta line is kept


def test_interrupted_call_without_output() -> None:
    ms = msgs(run(FIX / "interrupted.jsonl"))
    assert [shape(m) for m in ms] == [
        ("user", (("text", None), ("other", "user_message"))),
        ("assistant", (("tool_call", "exec_command"), ("other", "turn_aborted"))),
        ("system", (("text", None),)),
    ]


def test_partial_last_line_not_consumed() -> None:
    path = FIX / "partial.jsonl"
    ev = run(path)
    data = path.read_bytes()
    assert ev[-1].offset == data.rindex(b"\n") + 1 < len(data)
    assert not [e for e in ev if isinstance(e, Problem)]
    assert [m.text() for m in msgs(ev)] == ["Hello", "Hi."]


def test_non_json_line_is_a_problem() -> None:
    ev = run(FIX / "nonjson.jsonl")
    assert [(e.line, e.text) for e in ev if isinstance(e, Problem)] == [(4, "not JSON, skipped")]
    assert [m.text() for m in msgs(ev)] == ["Hello", "Hi."]


def test_unknown_types_are_kept() -> None:
    ms = msgs(run(FIX / "unknown.jsonl"))
    kinds = [p.get("kind") for m in ms for p in m.parts if p.type == "other"]
    assert kinds == ["user_message", "world_state", "hologram_call", "mood_changed"]
    ev = run(FIX / "unknown.jsonl")
    assert [(e.kind, e.version) for e in ev if isinstance(e, Unknown)] == [
        ("response_item/hologram_call", "0.104.0"), ("event_msg/mood_changed", "0.104.0")]


def test_bare_and_typescript_eras() -> None:
    bare = run(next(FIX.glob("rollout-2025-08-01*.jsonl")))
    assert [m.role for m in msgs(bare)] == ["system", "user", "assistant", "tool", "assistant"]
    s = last_session(bare)
    assert (s.native_id, s.cwd, s.branch) == ("5973b6c0-94b8-487b-a530-2aeb6098ae0e", "/work/proj",
                                              "dev")
    ts = run(next(FIX.glob("*.json")))
    assert [m.role for m in msgs(ts)] == ["system", "user", "assistant", "tool", "assistant"]
    assert last_session(ts).title == "What does app.py do?"
    assert run(next(FIX.glob("*.json")), offset=ts[-1].offset, state=ts[-1].state)[-1:] == ts[-1:]


def test_restart_from_every_resumable_matches_a_single_parse() -> None:
    for path in ALL:
        if path.suffix != ".jsonl":
            continue
        full = run(path)
        for i, e in enumerate(full):
            if isinstance(e, Resumable):
                assert run(path, offset=e.offset, state=e.state) == full[i + 1:], (path, i)


def test_incremental_after_appending(tmp_path: Path) -> None:
    data = (FIX / "turns.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "rollout.jsonl"
    cut = sum(len(x) for x in lines[:24])  # after task_complete of the first turn
    path.write_bytes(data[:cut] + lines[24][:30])  # and half a line
    first = run(path)
    assert first[-1].offset == cut
    path.write_bytes(data)
    again = run(path, offset=first[-1].offset, state=first[-1].state)
    assert msgs(first) + msgs(again) == msgs(run(FIX / "turns.jsonl"))
    assert last_session(again) == last_session(run(FIX / "turns.jsonl"))
    # restarting at the Resumable before the last message re-emits it, grown, with the same start
    mid = sum(len(x) for x in lines[:12])
    path.write_bytes(data[:mid])
    part = run(path)
    back = [e for e in part if isinstance(e, Resumable)][-2]
    path.write_bytes(data)
    assert msgs(part)[:-1] + msgs(run(path, offset=back.offset, state=back.state)) == msgs(run(path))


def test_discover(tmp_path: Path) -> None:
    home = Path(os.environ["CODEX_HOME"])
    proj = tmp_path / "work" / "proj"
    day = home / "sessions" / "2026" / "03" / "01"
    day.mkdir(parents=True)
    (home / "archived_sessions").mkdir()
    text = (FIX / "turns.jsonl").read_text().replace("/work/proj", str(proj))
    (day / "rollout-2026-03-01T10-00-00-a.jsonl").write_text(text)
    (home / "archived_sessions" / "rollout-2026-03-01T10-00-00-a.jsonl").write_text(text)
    (home / "archived_sessions" / "rollout-2026-03-01T11-00-00-b.jsonl").write_text(text)
    (day / "rollout-2026-03-01T12-00-00-c.jsonl").write_text(text.replace(str(proj), "/elsewhere"))
    old = next(FIX.glob("*.json")).read_text().replace("/work/proj", str(proj / "sub"))
    (home / "sessions" / "rollout-2025-05-01-x.json").write_text(old)
    found = codex.discover(env_for(tmp_path / "nohome", proj))
    rel = sorted(str(p.relative_to(home)) for p in found)
    assert rel == ["archived_sessions/rollout-2026-03-01T11-00-00-b.jsonl",
                   "sessions/2026/03/01/rollout-2026-03-01T10-00-00-a.jsonl",
                   "sessions/rollout-2025-05-01-x.json"]


def test_export_round_trip(tmp_path: Path) -> None:
    env = env_for(tmp_path, Path("/work/proj"))
    for path in ALL:
        ev = run(path)
        s, ms = last_session(ev), msgs(ev)
        out = codex.export(s, ms, env)
        assert out.command == ["codex", "resume", s.native_id] and out.native_id == s.native_id
        (target, content), = out.files.items()
        assert target.name.endswith(f"-{s.native_id}.jsonl")
        assert target.is_relative_to(Path(os.environ["CODEX_HOME"]) / "sessions")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        first = json.loads(content.splitlines()[0])
        assert first["type"] == "session_meta" and first["payload"]["id"] == s.native_id
        back = run(target)
        if "2025-08-01" in path.name or path.suffix == ".json":  # older eras: written as envelopes,
            def keep(m: Message) -> tuple:  # record_type lines are left out (and said so),
                return (m.role, [p.type for p in m.parts  # the events Codex wants are written
                                 if p.get("line") != "bare" and p.get("kind") not in EVENTS])
            assert [keep(m) for m in msgs(back)] == [keep(m) for m in ms]
            assert not any(p.get("line") == "bare" for m in ms for p in m.parts) or out.lost
            continue
        assert msgs(back) == ms, path
        # the fixture's own name is no rollout name: the written file, named by the exporter, is
        assert without_file(last_session(back)) == without_file(s)


def test_export_foreign_session(tmp_path: Path) -> None:
    from oxide_git.core.model import Part

    s = Session(id="0190aaaabbbbccccddddeeeeffff0000", agent="claude", native_id="abc",
                created_at=1772359200000, cwd="/work/proj", title="t")
    ms = [Message("user", (Part.text("<system-reminder>ctx</system-reminder>"),), extra={"harness": True}),
          Message("user", (Part.text("hello"),)),
          Message("assistant", (Part.reasoning("think"), Part.text("hi"),
                                Part.tool_call("tu_1", "Bash", {"command": "ls"}),
                                Part.tool_call("tu_2", "Write", {"file_path": "/work/proj/a.txt",
                                                                 "content": "one\ntwo\n"}),
                                Part.tool_call("tu_3", "Edit", {"file_path": "/work/proj/a.txt",
                                                                "old_string": "one", "new_string": "1"}),
                                Part.tool_call("tu_4", "WebFetch", {"url": "https://x"}))),
          Message("tool", (Part.tool_result("tu_1", "a\nb"), Part.tool_result("tu_2", "ok"),
                           Part.tool_result("tu_3", [{"type": "text", "text": "edited"}]),
                           Part.tool_result("tu_4", "page", True))),
          Message("assistant", (Part.text("done"),))]
    out = codex.export(s, ms, env_for(tmp_path))
    assert out.native_id == codex.export(s, ms, env_for(tmp_path)).native_id  # deterministic
    assert out.native_id[14] == "7" and out.native_id != "abc"
    assert sorted(out.lost) == [
        "Bash tool calls were handed over as Codex exec_command calls",
        "Codex names no model_provider in its config.toml yet: the rollout names none, so Codex resumes "
        "it under the provider it is configured with when it starts",
        "Edit tool calls were handed over as Codex apply_patch calls",
        "Write tool calls were handed over as Codex apply_patch calls",
        "claude harness messages (context its harness injected, no user's turn) were left out",
        "reasoning is shown in the history but not sent back to the model",
        "tool calls were turned into text (Codex cannot replay WebFetch-style calls)",
        "tool results were turned into text"]
    (target, content), = out.files.items()
    lines = [json.loads(x) for x in content.splitlines()]
    assert "model_provider" not in lines[0]["payload"]  # no config.toml: left to Codex (issue 37)
    items = [x["payload"] for x in lines if x["type"] == "response_item"]
    assert "ctx" not in content.decode()
    assert {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "ls"}',
            "call_id": "tu_1"} in items
    assert {"type": "function_call_output", "call_id": "tu_1", "output": "a\nb"} in items
    patches = {x["call_id"]: x["input"] for x in items if x["type"] == "custom_tool_call"}
    assert patches == {
        "tu_2": "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** End Patch\n",
        "tu_3": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n"}
    assert {"type": "custom_tool_call_output", "call_id": "tu_3", "output": "edited"} in items
    target.parent.mkdir(parents=True)
    target.write_bytes(content)
    back = msgs(run(target))
    assert back[0].role == "user" and back[0].text() == "hello"
    assert "WebFetch" in "".join(m.text() for m in back) and "done" in back[-1].text()


def test_export_foreign_names_the_configured_provider(tmp_path: Path) -> None:
    from oxide_git.core.model import Part

    home = Path(os.environ["CODEX_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    s = Session(id="0190aaaabbbbccccddddeeeeffff0001", agent="opencode", native_id="ses_1",
                created_at=1772359200000, cwd="/work/proj")
    ms = [Message("user", (Part.text("hello"),))]
    (home / "config.toml").write_text('model_provider = "corp"\n[model_providers.corp]\nname = "c"\n')
    meta = json.loads(next(iter(codex.export(s, ms, env_for(tmp_path)).files.values())).splitlines()[0])
    assert meta["payload"]["model_provider"] == "corp"
    (home / "config.toml").write_text('model_provider = "corp"\nprofile = "p"\n'
                                      '[profiles.p]\nmodel_provider = "azure"\n')
    meta = json.loads(next(iter(codex.export(s, ms, env_for(tmp_path)).files.values())).splitlines()[0])
    assert meta["payload"]["model_provider"] == "azure"  # the active profile's wins
    (home / "config.toml").write_text("model_provider = [broken")
    meta = json.loads(next(iter(codex.export(s, ms, env_for(tmp_path)).files.values())).splitlines()[0])
    assert "model_provider" not in meta["payload"]


def test_export_foreign_into_codexs_first_run_names_no_provider(tmp_path: Path) -> None:
    """Issue 37: with no config.toml (Codex never ran here) the rollout named ``openai``, and once
    the user configured their provider Codex refused it ("Cannot change this thread's model
    provider from `openai` to ..."). It names none now: Codex resumes it under its own."""
    from oxide_git.core.model import Part

    s = Session(id="0190aaaabbbbccccddddeeeeffff0001", agent="opencode", native_id="ses_1",
                created_at=1772359200000, cwd="/work/proj")
    exp = codex.export(s, [Message("user", (Part.text("hello"),))], env_for(tmp_path))
    meta = json.loads(next(iter(exp.files.values())).splitlines()[0])
    assert "model_provider" not in meta["payload"] and meta["payload"]["originator"] == "git_oxide"
    assert any("names no model_provider" in line for line in exp.lost)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damage_never_raises_nor_loses_what_came_before(tmp_path: Path, data: st.DataObject) -> None:
    src = data.draw(st.sampled_from([p for p in ALL if p.suffix == ".jsonl"]))
    raw = src.read_bytes()
    pos = data.draw(st.integers(0, len(raw)))
    junk = data.draw(st.binary(max_size=20))
    mode = data.draw(st.sampled_from(["truncate", "insert", "overwrite"]))
    damaged = damage(raw, pos, mode, junk)
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(damaged)
    got = run(path)  # never raises
    assert isinstance(got[-1], Resumable)
    clean_prefix = tmp_path / "prefix.jsonl"
    start = raw.rfind(b"\n", 0, pos) + 1  # the damaged line and what follows may change
    clean_prefix.write_bytes(raw[:start])
    before = msgs(run(clean_prefix))[:-1]  # the last one may still grow
    assert msgs(got)[: len(before)] == before



def test_tool_output_nested_deeper_than_json_can_read(tmp_path: Path) -> None:
    """An output that looks like JSON metadata but nests past the parser's recursion limit is text
    (not an error flag, not a crash)."""
    deep = '{"exit_code": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    lines = [
        {"timestamp": "2026-02-23T12:33:31.000Z", "type": "session_meta",
         "payload": {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0f", "timestamp": "2026-02-23T12:33:31.000Z",
                     "cwd": "/w"}},
        {"timestamp": "2026-02-23T12:33:32.924Z", "type": "response_item",
         "payload": {"type": "custom_tool_call_output", "call_id": "c", "output": deep}},
    ]
    path = tmp_path / "rollout-2026-02-23T12-33-31-5973b6c0-94b8-487b-a530-2aeb6098ae0f.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (result,) = [p for m in msgs(run(path)) for p in m.parts if p.type == "tool_result"]
    assert result.data["output"] == deep and result.data["is_error"] is False


# -- Codex 0.171 (paginated rollouts), over a rollout the real CLI wrote -----------------------------

REAL = FIX / "rollout-2026-12-01T20-03-01-01a23334-175b-7030-bb12-84938bd24286.jsonl"
PROMPT1 = "CODEX-PROMPT-1: make shell.txt with a shell command, then write notes.txt and edit it."


def test_0171_prompts_are_user_messages_and_injected_context_is_harness() -> None:
    ev = run(REAL)
    ms, s = msgs(ev), last_session(ev)
    assert [m.text() for m in ms if m.role == "user"] == [PROMPT1, "PROMPT-2: now just say you are done."]
    assert s.title is not None and PROMPT1.startswith(s.title.rstrip("…"))
    harness = [m for m in ms if m.is_harness()]
    assert [m.role for m in harness] == ["system", "system"]
    assert [m.extra["codex_role"] for m in harness] == ["developer", "user"]
    assert "<permissions instructions>" in harness[0].text()
    assert harness[1].text().startswith("# AGENTS.md instructions for ")  # the repository's AGENTS.md
    assert "AGENTS-MD-MARKER" in harness[1].text() and "<environment_context>" in harness[1].text()
    assert not any(m.is_harness() for m in ms if m.role == "user")
    calls = [p for m in ms for p in m.parts if p.type == "tool_call"]
    results = [p for m in ms for p in m.parts if p.type == "tool_result"]
    assert [c.get("name") for c in calls] == ["exec_command", "apply_patch", "apply_patch"]
    assert [c.get("call_id") for c in calls] == [r.get("call_id") for r in results]
    thoughts = [p for m in ms for p in m.parts if p.type == "reasoning"]
    assert [p.get("text") for p in thoughts] == ["Planning the shell command first.", "All three done."]
    assert all(str(p.get("encrypted")).startswith("gAAAA") for p in thoughts)
    assert "from-shell" in results[0].get("output")
    assert not [e for e in ev if isinstance(e, Unknown)]
    assert s.extra["meta"]["history_mode"] == "paginated" and s.model == "gpt-5.5"


def test_0171_is_written_back_byte_for_byte(tmp_path: Path) -> None:
    ev = run(REAL)
    s, ms = last_session(ev), msgs(ev)
    out = codex.export(s, ms, env_for(tmp_path))
    (target, content), = out.files.items()
    assert content == REAL.read_bytes()
    assert target.name == REAL.name and target.parent.parts[-3:] == ("2026", "12", "01")
    assert out.lost == []
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    again = run(target)
    assert msgs(again) == ms and last_session(again) == s


def test_0171_changes_touch_only_their_lines_and_ordinals_stay_contiguous(tmp_path: Path) -> None:
    from oxide_git.core.model import Part

    ev = run(REAL)
    s, ms = last_session(ev), msgs(ev)
    original = REAL.read_bytes().splitlines()
    i = next(k for k, m in enumerate(ms) if m.role == "user")
    redacted = [Part(p.type, {**p.data, "text": "[REDACTED]"}) if p.type == "text" else p
                for p in ms[i].parts]
    changed = [*ms[:i], replace(ms[i], parts=tuple(redacted)), *ms[i + 1:]]
    content = next(iter(codex.export(s, changed, env_for(tmp_path)).files.values())).splitlines()
    diff = [k for k, (a, b) in enumerate(zip(original, content, strict=True)) if a != b]
    assert len(diff) == 1 and b"[REDACTED]" in content[diff[0]]
    assert json.loads(content[diff[0]])["ordinal"] == diff[0]
    # a conversation rewind to the second prompt: what is left is numbered 0..n-1, as Codex wants
    cut = [k for k, m in enumerate(ms) if m.role == "user"][1]
    lines = next(iter(codex.export(s, ms[:cut], env_for(tmp_path)).files.values())).splitlines()
    assert [json.loads(x)["ordinal"] for x in lines] == list(range(len(lines)))
    assert lines == original[:len(lines)]


def test_0171_unknown_types_are_reported_kept_and_written_back(tmp_path: Path) -> None:
    raw = REAL.read_bytes().splitlines()
    n = len(raw)
    extra = [
        {"timestamp": "2026-12-01T19:33:18.000Z", "ordinal": n, "type": "hologram", "payload": {"x": 1}},
        {"timestamp": "2026-12-01T19:33:18.001Z", "ordinal": n + 1, "type": "event_msg",
         "payload": {"type": "mood_changed", "mood": "calm"}},
        {"timestamp": "2026-12-01T19:33:18.002Z", "ordinal": n + 2, "type": "event_msg",
         "payload": {"type": "item_completed", "item": {"type": "Telepathy", "id": "t1"}}},
        {"timestamp": "2026-12-01T19:33:18.003Z", "ordinal": n + 3, "type": "response_item",
         "payload": {"type": "beam_call", "call_id": "b1"}, "metadata": {"history_sequence": 13}},
    ]
    path = tmp_path / REAL.name
    path.write_bytes(b"\n".join(raw + [json.dumps(x, separators=(",", ":")).encode() for x in extra])
                     + b"\n")
    ev = run(path)
    assert [(e.kind, e.version) for e in ev if isinstance(e, Unknown)] == [
        ("hologram", "0.171.0"), ("event_msg/mood_changed", "0.171.0"),
        ("event_msg/item_completed/Telepathy", "0.171.0"), ("response_item/beam_call", "0.171.0")]
    kinds = [p.get("kind") for m in msgs(ev) for p in m.parts if p.type == "other"]
    assert {"hologram", "mood_changed", "item_completed/Telepathy", "beam_call"} <= set(kinds)
    out = codex.export(last_session(ev), msgs(ev), env_for(tmp_path / "h"))
    assert next(iter(out.files.values())) == path.read_bytes()


def test_0171_a_line_our_serializer_would_change_is_kept_whole(tmp_path: Path) -> None:
    raw = REAL.read_bytes().splitlines()
    # key order and spacing Codex never writes, and a float Python prints another way
    odd = b'{"ordinal":%d, "timestamp":"2026-12-01T19:33:18.000Z","type":"event_msg",' \
          b'"payload":{"type":"token_count","info":null,"rate":1E+2}}' % len(raw)
    bad_time = b'{"timestamp":"2026-13-01T10:00:00.000Z","ordinal":%d,"type":"event_msg",' \
               b'"payload":{"type":"task_complete"}}' % (len(raw) + 1)
    path = tmp_path / REAL.name
    path.write_bytes(b"\n".join([*raw, odd, bad_time]) + b"\n")
    ev = run(path)
    out = codex.export(last_session(ev), msgs(ev), env_for(tmp_path / "h"))
    assert next(iter(out.files.values())) == path.read_bytes()


def test_compressed_archived_and_thread_store_rollouts_are_discovered(tmp_path: Path) -> None:
    import sqlite3

    import zstandard

    home = Path(os.environ["CODEX_HOME"])
    proj = Path("/tmp/cx/pt2/test_codex_import_and_round_tr0/project")  # the real rollout's cwd
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    data = REAL.read_bytes()
    packed = day / (REAL.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(data))
    other = data.replace(b"01a23334-175b-7030-bb12-84938bd24286", b"01a23334-175b-7030-bb12-849380000000")
    archived = home / "archived_sessions" / REAL.name.replace("84938bd24286", "849380000000")
    archived.parent.mkdir()
    archived.write_bytes(other)
    elsewhere = tmp_path / "moved" / REAL.name.replace("84938bd24286", "849381111111")
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(data.replace(b"01a23334-175b-7030-bb12-84938bd24286",
                                       b"01a23334-175b-7030-bb12-849381111111"))
    conn = sqlite3.connect(home / "state_5.sqlite")
    conn.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, cwd TEXT)")
    conn.execute("INSERT INTO threads VALUES (?, ?, ?)",
                 ("01a23334-175b-7030-bb12-849381111111", str(elsewhere), str(proj)))
    conn.commit()
    conn.close()
    found = codex.discover(env_for(tmp_path / "nohome", proj))
    assert sorted(found) == sorted([packed, archived, elsewhere])
    # the plain file wins over its compressed twin
    (day / REAL.name).write_bytes(data)
    assert (day / REAL.name) in codex.discover(env_for(tmp_path / "nohome", proj))
    (day / REAL.name).unlink()

    plain, zipped = run(REAL), run(packed)
    assert msgs(zipped) == msgs(plain)
    assert last_session(zipped).native_id == last_session(plain).native_id
    for i, e in enumerate(zipped):  # restart inside the decompressed stream
        if isinstance(e, Resumable) and i % 3 == 0:
            assert run(packed, offset=e.offset, state=e.state) == zipped[i + 1:]


def test_export_foreign_opencode_calls_and_an_aider_session(tmp_path: Path) -> None:
    from oxide_git.core.model import Part

    s = Session(id="0190aaaabbbbccccddddeeeeffff0002", agent="opencode", native_id="ses_2",
                created_at=1772359200000, cwd="/work/proj")
    ms = [Message("user", (Part.text("go"),)),
          Message("assistant", (Part.tool_call("c1", "bash", {"command": "ls", "timeout": 5}),
                                Part.tool_call("c2", "write", {"filePath": "/elsewhere/x.txt",
                                                               "content": "no newline"}),
                                Part.tool_call("c3", "edit", {"filePath": "/work/proj/x.txt",
                                                              "oldString": "a\nb\n", "newString": "c"}),
                                Part.tool_call("c4", "edit", {"filePath": "/work/proj/x.txt"}))),
          Message("tool", (Part.tool_result("c1", "out", True), Part.tool_result("c2", "ok"),
                           Part.tool_result("c3", "ok"), Part.tool_result("c4", "bad"))),
          Message("assistant", (Part.text("done"),))]
    out = codex.export(s, ms, env_for(tmp_path))
    items = [json.loads(x)["payload"] for x in next(iter(out.files.values())).splitlines()
             if json.loads(x)["type"] == "response_item"]
    by_id = {i.get("call_id"): i for i in items if i["type"].endswith("_call")}
    assert by_id["c1"]["name"] == "exec_command" and json.loads(by_id["c1"]["arguments"]) == {"cmd": "ls"}
    assert by_id["c2"]["input"] == "*** Begin Patch\n*** Add File: /elsewhere/x.txt\n+no newline\n*** End Patch\n"
    assert by_id["c3"]["input"] == "*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n-b\n+c\n*** End Patch\n"
    assert "c4" not in by_id  # an edit that does not say what to change stays text
    outputs = {i["call_id"]: i["output"] for i in items if i["type"].endswith("_output")}
    assert outputs["c1"] == "Exit code: 1\nOutput:\nout"  # a failed command reads as one
    assert "c4" not in outputs and any("[tool result c4]" in json.dumps(i) for i in items)

    aider = Session(id="0190aaaabbbbccccddddeeeeffff0003", agent="aider", native_id="a",
                    created_at=1772359200000, cwd="/work/proj")
    out = codex.export(aider, [Message("user", (Part.text("fix it"),)),
                               Message("assistant", (Part.text("done"), Part.patch("--- a\n+++ b\n")))],
                       env_for(tmp_path))
    assert out.lost[1:] == ["patches were turned into text"]


def test_envelope_era_rollouts_are_written_back_byte_for_byte(tmp_path: Path) -> None:
    """Before 0.155 (and what 0.171 appends to such a file): every line kept in place too."""
    for name in ("turns.jsonl", "compacted.jsonl", "fork.jsonl", "interrupted.jsonl", "unknown.jsonl"):
        ev = run(FIX / name)
        out = codex.export(last_session(ev), msgs(ev), env_for(tmp_path))
        assert next(iter(out.files.values())) == (FIX / name).read_bytes(), name
    # the events that repeat an item stay out of the text; one that repeats none is text
    ms = msgs(run(FIX / "turns.jsonl"))
    assert [p.get("source") for m in ms for p in m.parts if p.type == "text" and m.role == "assistant"] \
        == [None, None, None]
    lines = (FIX / "turns.jsonl").read_bytes().splitlines()
    extra = b'{"timestamp":"2026-03-01T10:00:14.000Z","type":"event_msg","payload":' \
            b'{"type":"agent_message","message":"Said only here."}}'
    path = tmp_path / "turns.jsonl"
    path.write_bytes(b"\n".join([*lines, extra]) + b"\n")
    ev = run(path)
    last = msgs(ev)[-1]
    assert last.role == "assistant" and last.parts[-1].type == "text"
    assert last.parts[-1].get("source") == "agent_message" and "Said only here." in last.text()
    out = codex.export(last_session(ev), msgs(ev), env_for(tmp_path / "h"))
    assert next(iter(out.files.values())) == path.read_bytes()
