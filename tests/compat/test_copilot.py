"""GitHub Copilot CLI 1.0.102, driven for real: import (prompts, harness, tools), the same-agent round
trip line for line through ``copilot --resume``, a sub-agent as a session of its own, its hooks
(``.github/hooks/*.json``) capturing the session, and re-import of what oxide wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


def test_copilot_sub_agent_is_a_session_of_its_own(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("copilot", compat_repo, model_server)
    model_server.script.update({
        "SUB-1": [Turn.tool("task", {"description": "look around", "prompt": "SUBTASK-1 run echo",
                                     "agent_type": "general-purpose", "name": "sub"}),
                  Turn.say("Main done.")],
        "SUBTASK-1": [Turn.shell(f"echo {SHELL_TEXT}"), Turn.say("Sub done.")],
    })
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


def test_copilot_hooks_capture_the_session(compat_repo: Path, model_server) -> None:
    """`git oxide init --agent-hooks copilot` writes `.github/hooks/oxide.json`; in a folder the user
    trusts (COPILOT_ALLOW_ALL=true here), Copilot runs them offline: the prompt makes a checkpoint,
    the end of the turn imports the session, without any `git oxide import`."""
    d = make_driver("copilot", compat_repo, model_server)
    checks.oxide(compat_repo, "init")
    out = checks.oxide(compat_repo, "init", "--agent-hooks", "copilot")
    assert ".github/hooks/oxide.json" in out.stderr + out.stdout
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
    checks.assert_conversation(shown, [d.prompt1])
    cps = checks.oxide_json(compat_repo, "checkpoints", "--session", shown["session"]["id"])
    assert any(c.get("kind") == "prompt" for c in cps), cps
    status = checks.oxide(compat_repo, "status").stdout + checks.oxide(compat_repo, "status").stderr
    assert shown["session"]["id"][:8] in status


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
