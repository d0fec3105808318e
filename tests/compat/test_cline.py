"""Cline 3.0.65, driven for real: import (prompts, tools, title), the same-agent round trip byte
for byte, resume over ACP from oxide's files alone, a sub-agent, re-import of what oxide wrote,
and no process left behind (every run starts a background hub)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from . import checks
from .conftest import make_driver
from .drive_cline import ClineDriver
from .driver import PROMPT2, SHELL_TEXT
from .modelserver import Turn


def _ref(repo: Path, sid: str) -> str:
    return subprocess.run(["git", "for-each-ref", "--format=%(objectname)",
                           f"refs/oxide/sessions/{sid}"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def _driver(repo: Path, server) -> ClineDriver:
    d = make_driver("cline", repo, server)
    assert isinstance(d, ClineDriver)
    return d


def test_cline_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = _driver(compat_repo, model_server)
    first = d.run().check()
    sid = first.native_id
    assert sid
    assert not d.hub_pids(), "the hub outlived the run"
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"

    imported = checks.oxide(compat_repo, "import")
    assert "unknown" not in imported.stderr, imported.stderr  # every record type of this release is known
    shown = checks.show(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    assert checks.user_prompts(shown) == [d.prompt1]  # the <user_input> wrapper is not the prompt
    assert shown["session"]["title"] == d.prompt1
    assert shown["session"]["cwd"] == str(compat_repo)
    calls = [(c["name"], c["input"]) for c in checks.tool_calls(shown)]
    notes = str(compat_repo / "notes.txt")
    assert calls == [("run_commands", {"commands": [f"echo {SHELL_TEXT} | tee shell.txt"]}),
                     ("editor", {"path": notes, "new_text": "first line\n"}),
                     ("editor", {"path": notes, "old_text": "first line", "new_text": "second line"})]

    files = d.session_files(sid)
    before = {p: p.read_bytes() for p in files}
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=files)
    assert rt.result["native_id"] == sid
    assert sorted(rt.result["written"]) == sorted(str(p) for p in files)
    checks.record({"agent": "cline", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"
    assert {p: p.read_bytes() for p in files} == before  # byte for byte
    assert rt.result.get("lost") == []

    ref = _ref(compat_repo, shown["session"]["id"])
    checks.oxide(compat_repo, "import")  # what oxide wrote is that session: nothing changes
    assert _ref(compat_repo, shown["session"]["id"]) == ref

    model_server._log.clear()
    second = d.resume(sid, PROMPT2).check()
    assert not d.hub_pids(), "the hub outlived the ACP run"
    assert '"stopReason":"end_turn"' in second.stdout
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell | tee shell.txt",
                                               "second line", PROMPT2])
    calls_sent = checks.request_tool_calls(model_server)
    assert [n for n, _ in calls_sent] == ["run_commands", "editor", "editor"], calls_sent

    checks.oxide(compat_repo, "import")  # the ACP turn appended to the same file: same session
    again = checks.show(compat_repo, sid)
    assert again["session"]["id"] == shown["session"]["id"]
    assert checks.user_prompts(again) == [d.prompt1, PROMPT2]
    assert again["messages"][: len(shown["messages"])] == shown["messages"]


def test_cline_resumes_without_its_databases(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """Cline's SQLite indexes (``data/db``) are not needed: a session oxide wrote into a fresh
    HOME resumes from its two files alone."""
    d = _driver(compat_repo, model_server)
    sid = d.run().check().native_id
    assert sid
    checks.import_session(compat_repo, sid)
    d.move_store_away(tmp_path / "sessions-away")
    (d.cline_dir() / "data" / "db").rename(tmp_path / "db-away")
    res = checks.into(compat_repo, sid, "cline")
    assert res["native_id"] == sid and len(res["written"]) == 2
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, PROMPT2])
    assert not d.hub_pids()


def test_cline_sub_agent(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """A ``spawn_agent`` sub-agent is a session of its own (its file beside the parent's), hanging
    on the parent at the call that started it."""
    d = _driver(compat_repo, model_server)
    model_server.script.update({
        "SUB-1": [Turn.tool("spawn_agent", {"systemPrompt": "You list files.",
                                            "task": "SUBTASK-1 list files"}), Turn.say("Sub done.")],
        "SUBTASK-1": [Turn.shell(f"echo {SHELL_TEXT}"), Turn.say("Files listed.")],
    })
    sid = d.run("SUB-1: use a sub-agent").check().native_id
    assert sid
    [sub_file] = list((d.sessions() / sid).glob("agent_*.messages.json"))
    shown = checks.import_session(compat_repo, sid)
    [spawn] = [c for c in checks.tool_calls(shown) if c["name"] == "spawn_agent"]
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [sub] = [r for r in rows if r["parent_id"] == shown["session"]["id"]]
    sub_shown = checks.show(compat_repo, sub["id"])
    assert sub_shown["session"]["native_id"] == f"{sid}__{sub_file.name.removesuffix('.messages.json')}"
    assert sub_shown["session"]["extra"]["parent_call_id"] == spawn["call_id"]
    checks.assert_conversation(sub_shown, ["SUBTASK-1"])
    assert not d.hub_pids()


def test_cline_runs_oxides_hooks(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """`git oxide init --agent-hooks cline`: Cline itself runs the scripts, and the session is in
    the store without an import; its first task got a prompt checkpoint."""
    import json
    import time

    d = _driver(compat_repo, model_server)
    checks.oxide(compat_repo, "init", "--agent-hooks", "cline")
    assert (compat_repo / ".clinerules" / "hooks" / "TaskComplete.sh").is_file()
    sid = d.run().check().native_id
    assert sid
    deadline = time.monotonic() + 30  # TaskStart's hook runs detached: it may finish after Cline
    while time.monotonic() < deadline:
        rows = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["native_id"] == sid]
        cps = checks.oxide_json(compat_repo, "checkpoints", "--session", rows[0]["id"]) if rows else []
        if rows and rows[0]["message_count"] >= 8 and cps:
            break
        time.sleep(0.5)
    assert rows and rows[0]["message_count"] == 8, rows
    assert [c["kind"] for c in cps] == ["prompt"], json.dumps(cps)[:500]
    checks.assert_conversation(checks.show(compat_repo, sid), [d.prompt1])
    log = compat_repo / ".git" / "oxide" / "log"
    assert "failed" not in (log.read_text() if log.exists() else "")
    assert not d.hub_pids()


def test_cline_compaction_is_imported_and_resumed(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """A compaction Cline makes itself: with a context window of 8,000 tokens (providers.json) a
    long tool output reaches 90% of it, Cline asks the model server for a summary and writes
    ``<id>.compaction.json`` (the messages file stays whole). Imported, it is a compaction message
    after the messages it summarised; the three files come back byte for byte, and the resumed
    Cline (over ACP, from oxide's files) sends the summary instead of the first prompt."""
    import json

    from .modelserver import SUMMARY_TEXT

    d = _driver(compat_repo, model_server)
    d.limit_context(8000)
    prompt = "COMPACT-1: make a long output"
    model_server.script["COMPACT-1"] = [Turn.shell("seq 1 4000"), Turn.say("Compacted work done.")]
    sid = d.run(prompt).check().native_id
    assert sid and not d.hub_pids()
    assert [r for r in model_server.requests("chat") if r.get("summary")], "no summarisation request"
    files = d.session_files(sid)
    manifest = json.loads(files[0].read_text())
    compaction = Path(manifest["compaction_path"])
    doc = json.loads(compaction.read_text())
    assert doc["messages"][0]["metadata"]["kind"] == "compaction_summary"
    assert SUMMARY_TEXT in doc["messages"][0]["content"][0]["text"]

    shown = checks.import_session(compat_repo, sid)
    msgs = shown["messages"]
    [i] = [i for i, m in enumerate(msgs) if any(p["type"] == "compaction" for p in m["parts"])]
    assert i == doc["source_message_count"] and msgs[i]["role"] == "system"
    [part] = msgs[i]["parts"]
    assert SUMMARY_TEXT in part["summary"] and part["kept"] == [
        m["id"] for m in doc["messages"] if "id" in m]
    assert all(m["compacted"] for m in msgs[:i]) and not any(m["compacted"] for m in msgs[i:])
    assert checks.user_prompts(shown) == [prompt]

    files.append(compaction)
    before = {p: p.read_bytes() for p in files}
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=files)
    assert sorted(rt.result["written"]) == sorted(str(p) for p in files)
    checks.record({"agent": "cline", "version": d.pin.version, "check": "compaction_round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert {p: p.read_bytes() for p in files} == before  # byte for byte, the compaction file too

    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    assert not d.hub_pids()
    checks.assert_request_holds(model_server, [SUMMARY_TEXT, PROMPT2])
    assert prompt not in checks.request_text(model_server), "the resumed Cline sent what it compacted"
    again = checks.import_session(compat_repo, sid)
    assert again["messages"][:len(msgs)] == msgs and checks.user_prompts(again) == [prompt, PROMPT2]
