"""GitHub Copilot CLI 1.0.102, driven for real: import (prompts, harness, tools), the same-agent round
trip line for line through ``copilot --resume``, a sub-agent as a session of its own, its hooks
(``.github/hooks/*.json``) capturing the session, and re-import of what oxide wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import checks
from .conftest import make_driver
from .drive_copilot import KEY, CopilotDriver
from .driver import PROMPT2, SHELL_TEXT
from .modelserver import Turn


def _ref(repo: Path, sid: str) -> str:
    return subprocess.run(["git", "for-each-ref", "--format=%(objectname)", f"refs/oxide/sessions/{sid}"],
                          cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def test_copilot_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("copilot", compat_repo, model_server)
    assert isinstance(d, CopilotDriver)
    first = d.run().check()
    sid = first.native_id
    assert sid
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"
    assert model_server.requests("chat", scripted=True), "Copilot speaks Chat Completions to a provider"
    assert KEY not in first.stdout + first.stderr  # it masks its key; we never look for it in output

    imported = checks.oxide(compat_repo, "import")
    assert "unknown" not in imported.stderr, imported.stderr  # every event type of this release is known
    shown = checks.show(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    assert checks.user_prompts(shown) == [d.prompt1]  # the system prompt is never a user turn
    harness = [m for m in shown["messages"] if (m.get("extra") or {}).get("harness")]
    assert [m["role"] for m in harness] == ["system"], harness
    assert {c["name"] for c in checks.tool_calls(shown)} == {"bash", "create", "edit"}

    original = d.session_file(sid)
    before = original.read_bytes()
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    assert rt.result["native_id"] == sid and rt.result["lost"] == []
    checks.record({"agent": "copilot", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"
    assert original.read_bytes() == before
    assert not (d.copilot_home() / "session-store.db").exists()  # moved away: resume needs none of it

    ref = _ref(compat_repo, shown["session"]["id"])
    checks.oxide(compat_repo, "import")  # what oxide wrote is that session: nothing changes
    assert _ref(compat_repo, shown["session"]["id"]) == ref

    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell | tee shell.txt",
                                               "second line", PROMPT2])
    after = checks.import_session(compat_repo, sid)
    assert checks.user_prompts(after) == [d.prompt1, PROMPT2]
    assert after["messages"][:len(shown["messages"])] == shown["messages"]
    assert len({r["id"] for r in checks.oxide_json(compat_repo, "list", "--all")}) == 1


SUB_SCRIPT = {
    "SUB-1": [Turn.tool("task", {"description": "look around", "prompt": "SUBTASK-1 run echo",
                                 "agent_type": "general-purpose", "name": "sub"}),
              Turn.say("Main done.")],
    "SUBTASK-1": [Turn.shell(f"echo {SHELL_TEXT}"), Turn.say("Sub done.")],
}


def test_copilot_sub_agent_is_a_session_of_its_own(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("copilot", compat_repo, model_server)
    model_server.script.update(SUB_SCRIPT)
    sid = d.run("SUB-1: use a sub-agent").check().native_id
    assert sid
    shown = checks.import_session(compat_repo, sid)
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [sub] = [r for r in rows if r["parent_id"] == shown["session"]["id"]]
    sub_shown = checks.show(compat_repo, sub["id"])
    checks.assert_conversation(sub_shown, ["SUBTASK-1"])
    [task] = [c for c in checks.tool_calls(shown) if c["name"] == "task"]
    assert sub_shown["session"]["extra"]["parent_call_id"] == task["call_id"]
    assert not any("SUBTASK-1" in u for u in checks.user_prompts(shown))

    main = d.session_file(sid)
    lines = main.read_bytes().splitlines()
    own = [ln for ln in lines if b'"agentId"' not in ln]
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[main])
    # the main agent's lines come back byte for byte; the sub-agent's are in its own session
    assert rt.lines_same == len(own) and rt.lines_total == len(lines), (rt.lines_same, len(own), len(lines))
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, ["SUB-1: use a sub-agent", "Sub done.", PROMPT2])


@pytest.mark.parametrize("ends", ["agentStop and sessionEnd", "agentStop alone"])
def test_copilot_hooks_capture_the_session(compat_repo: Path, model_server, ends: str) -> None:
    """`git oxide init --agent-hooks copilot` writes `.github/hooks/oxide.json`; in a folder the user
    trusts (COPILOT_ALLOW_ALL=true here), Copilot runs them offline: the prompt makes a checkpoint,
    the end of the turn imports the session, without any `git oxide import`. With agentStop alone
    (an interactive session, where sessionEnd comes only when the user quits) the whole turn is
    imported too: Copilot writes the turn to events.jsonl after that hook has begun."""
    d = make_driver("copilot", compat_repo, model_server)
    checks.oxide(compat_repo, "init")
    out = checks.oxide(compat_repo, "init", "--agent-hooks", "copilot")
    hooks_file = compat_repo / ".github" / "hooks" / "oxide.json"
    assert str(hooks_file.relative_to(compat_repo)) in out.stderr + out.stdout
    if ends == "agentStop alone":
        body = json.loads(hooks_file.read_text())
        del body["hooks"]["sessionEnd"]
        hooks_file.write_text(json.dumps(body))
    env = d.env()
    env["COPILOT_ALLOW_ALL"] = "true"  # trusts this folder, which loads its hooks
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    r = subprocess.run([str(d.binary), "-p", d.prompt1, "--output-format", "json", "--no-auto-update"],
                       cwd=compat_repo, env=env, capture_output=True, text=True, timeout=d.timeout,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    sid = next(ev["sessionId"] for ev in map(json.loads, filter(None, r.stdout.splitlines()))
               if ev.get("type") == "result")
    shown = checks.show(compat_repo, sid)  # no import: the hooks did it
    oxide_log = compat_repo / ".git" / "oxide" / "log"
    assert not oxide_log.exists() or "copilot" not in oxide_log.read_text(), oxide_log.read_text()
    checks.assert_conversation(shown, [d.prompt1])
    assert "Done with one." in json.dumps(shown["messages"][-1]), shown["messages"][-1]  # the turn's last
    cps = checks.oxide_json(compat_repo, "checkpoints", "--session", shown["session"]["id"])
    assert any(c.get("kind") == "prompt" for c in cps), cps
    status = checks.oxide(compat_repo, "status").stdout + checks.oxide(compat_repo, "status").stderr
    assert shown["session"]["id"][:8] in status


def test_copilot_hooks_with_a_sub_agent(compat_repo: Path, model_server) -> None:
    """A sub-agent's end runs subagentStop: that hook also finds its own hook.start in
    events.jsonl (no 10 s wait, nothing in the oxide log), and the turn's end imports the main
    session whole, its sub-agent a session of its own. The sub-agent's own prompt hook names it by
    its agentId: its checkpoint goes to the sub-agent's session, and the parent stays current."""
    d = make_driver("copilot", compat_repo, model_server)
    model_server.script.update(SUB_SCRIPT)
    checks.oxide(compat_repo, "init")
    checks.oxide(compat_repo, "init", "--agent-hooks", "copilot")
    env = d.env()
    env["COPILOT_ALLOW_ALL"] = "true"
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    r = subprocess.run([str(d.binary), "-p", "SUB-1: use a sub-agent", "--output-format", "json",
                        "--no-auto-update"], cwd=compat_repo, env=env, capture_output=True, text=True,
                       timeout=d.timeout, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    sid = next(ev["sessionId"] for ev in map(json.loads, filter(None, r.stdout.splitlines()))
               if ev.get("type") == "result")
    oxide_log = compat_repo / ".git" / "oxide" / "log"
    assert not oxide_log.exists() or "copilot" not in oxide_log.read_text(), oxide_log.read_text()
    shown = checks.show(compat_repo, sid)  # no import: the hooks did it
    assert "Main done." in json.dumps(shown["messages"][-1])
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [sub] = [r for r in rows if r["parent_id"] == shown["session"]["id"]]
    checks.assert_conversation(checks.show(compat_repo, sub["id"]), ["SUBTASK-1"])
    # the sub-agent's own prompt hook (sessionId: its agentId) checkpoints on the sub-agent's session
    cps = checks.oxide_json(compat_repo, "checkpoints")
    assert all(c["session_id"] for c in cps), cps  # none left waiting for a session
    assert [c["message"] for c in cps if c["session_id"] == sub["id"]] == ["SUBTASK-1 run echo"], cps
    assert not list((compat_repo / ".git" / "oxide").rglob("pending-prompts.json"))
    assert checks.oxide_json(compat_repo, "status")["session"]["id"] == shown["session"]["id"]


def test_copilot_compaction_is_imported_and_resumed(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """A compaction Copilot makes itself: with a prompt budget of 24,000 tokens a long tool output
    starts one in the background (``session.compaction_start``), the model server answers its
    summarisation request, and ``session.compaction_complete`` carries the summary. Imported, the
    compaction's start is the boundary (Copilot keeps what came after it), the lines come back
    byte for byte, and the resumed Copilot sends the summary, not the history it replaced."""
    from .modelserver import SUMMARY_TEXT

    d = make_driver("copilot", compat_repo, model_server)
    model_server.script["COMPACT-1"] = [Turn.shell("seq 1 4000"), Turn.shell("echo one"),
                                        Turn.shell("echo two"), Turn.shell("echo three"),
                                        Turn.say("Compacted work done.")]
    run = d._exec(d.run_argv("COMPACT-1: make a long output"),
                  extra_env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "24000"}).check()
    sid = run.native_id
    assert sid
    assert [r for r in model_server.requests("chat") if r.get("summary")], "no summarisation request"
    events = [json.loads(ln) for ln in d.session_file(sid).read_text().splitlines()]
    [done] = [e for e in events if e["type"] == "session.compaction_complete"]
    assert done["data"]["success"] is True and done["data"]["summaryContent"] == SUMMARY_TEXT, done

    shown = checks.import_session(compat_repo, sid)
    msgs = shown["messages"]
    [i] = [i for i, m in enumerate(msgs) if any(p["type"] == "compaction" for p in m["parts"])]
    assert msgs[i]["role"] == "system" and SUMMARY_TEXT in json.dumps(msgs[i]["parts"])
    assert all(m["compacted"] for m in msgs[:i]) and not any(m["compacted"] for m in msgs[i:])
    after = json.dumps(msgs[i + 1:])
    assert "echo one" in after and "seq 1 4000" not in after  # the turn the compaction began in stays
    context = checks.oxide_json(compat_repo, "resume", sid, "--format", "json")
    assert SUMMARY_TEXT in json.dumps(context) and "seq 1 4000" not in json.dumps(context)

    original = d.session_file(sid)
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    checks.record({"agent": "copilot", "version": d.pin.version, "check": "compaction_round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"

    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [SUMMARY_TEXT, "COMPACT-1: make a long output", PROMPT2])
    body = checks.request_text(model_server)
    assert "3999\\n4000" not in body, "the resumed Copilot sent the history its compaction replaced"
    again = checks.import_session(compat_repo, sid)
    assert checks.user_prompts(again)[-1] == PROMPT2
    assert again["messages"][:len(msgs)] == msgs


def test_copilot_rewind_in_its_terminal_ui_is_a_fork(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """Copilot's ``/rewind`` (its terminal UI, driven in tmux), "Conversation only": it rewrites
    ``events.jsonl`` in place (the kept events, a ``session.info`` of ``infoType: "rewind"``, then
    what follows). Imported before and after, the session keeps every message, the dropped turn
    too, and what follows the rewind is a fork hanging on the last kept message; `resume --into
    copilot` of the fork gives Copilot what its rewind kept, not what it dropped, and Copilot's
    own resume of its session goes on in the fork."""
    from .tmux import TMUX, Pane

    if TMUX is None:
        import pytest

        pytest.skip("tmux is not installed")
    d = make_driver("copilot", compat_repo, model_server)
    model_server.script.update({"SAY-1": [Turn.shell("echo one > one.txt"), Turn.say("Said one.")],
                                "SAY-2": [Turn.shell("echo two > two.txt"), Turn.say("Said two.")],
                                "PROMPT-3": [Turn.say("Done with three.")],
                                "PROMPT-4": [Turn.say("Done with four.")]})
    checks.oxide(compat_repo, "init")
    env = {**d.env(), "TERM": "xterm-256color"}
    pane = Pane(tmp_path / "tmux.sock", [str(d.binary), "--allow-all", "--no-auto-update"],
                cwd=compat_repo, env=env)
    try:
        pane.wait("Do you trust")
        pane.keys("1")
        pane.wait("/ commands")
        pane.type("SAY-1: one")
        pane.keys("Enter")
        pane.wait("Said one.")
        pane.type("SAY-2: two")
        pane.keys("Enter")
        pane.wait("Said two.")
        [sid] = [p.name for p in (d.copilot_home() / "session-state").iterdir() if p.is_dir()
                 and not p.name.startswith(".")]
        checks.oxide(compat_repo, "import")  # what it had before the rewind
        before = checks.show(compat_repo, sid)
        pane.type("/rewind")
        pane.wait("Rewind the last turn")
        pane.keys("Enter")
        pane.wait("Rewind to a previous point")
        pane.keys("Enter")  # the last prompt: SAY-2
        pane.wait("Conversation only")
        pane.keys("Enter")
        pane.wait("Rewound the conversation")
        pane.keys("C-u")  # it put the prompt back in the input box
        pane.type("PROMPT-2: after the rewind")
        pane.keys("Enter")
        pane.wait("Done with two.")
        pane.type("/exit")
        pane.keys("Enter")
        pane.wait("EXIT=0")
    finally:
        pane.close()
    lines = d.session_file(sid).read_text().splitlines()
    assert not any('"SAY-2: two"' in ln for ln in lines), "the rewind did not rewrite the file"
    assert any('"infoType":"rewind"' in ln for ln in lines)

    checks.oxide(compat_repo, "import")  # the file grew, rewritten: read whole again
    rows = checks.oxide_json(compat_repo, "list", "--all")
    main = checks.show(compat_repo, sid)
    assert main["messages"] == before["messages"]  # nothing the rewind dropped is lost
    assert checks.user_prompts(main) == ["SAY-1: one", "SAY-2: two"]
    [fork] = [r for r in rows if r["parent_id"] == main["session"]["id"]]
    shown = checks.show(compat_repo, fork["id"])
    assert checks.user_prompts(shown) == ["SAY-1: one", "PROMPT-2: after the rewind"]
    said_one = next(m for m in main["messages"] if "Said one." in json.dumps(m["parts"]))
    assert fork["fork_message_id"] == said_one["id"]

    res = checks.into(compat_repo, fork["id"], "copilot")
    assert res["native_id"] != sid
    model_server._log.clear()
    d.resume(res["native_id"], "PROMPT-3: three").check()
    body = checks.request_text(model_server)
    assert "SAY-1: one" in body and "after the rewind" in body and "PROMPT-3: three" in body
    assert "SAY-2: two" not in body, "the fork handed Copilot what its rewind dropped"

    model_server._log.clear()
    d.resume(sid, "PROMPT-4: four").check()  # Copilot's own session goes on after its rewind
    assert "SAY-2: two" not in checks.request_text(model_server)
    checks.oxide(compat_repo, "import")
    assert checks.user_prompts(checks.show(compat_repo, fork["id"]))[-1] == "PROMPT-4: four"
    assert checks.user_prompts(checks.show(compat_repo, sid)) == ["SAY-1: one", "SAY-2: two"]
