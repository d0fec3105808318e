"""Gemini CLI, driven for real: import, same-agent round trip, what it sends its model, its own
resume of a file oxide wrote, and what a resume of its own leaves in the file."""

from __future__ import annotations

import json
from pathlib import Path

from . import checks
from .conftest import make_driver
from .driver import PROMPT2, SHELL_TEXT


def test_gemini_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("gemini", compat_repo, model_server)
    first = d.run().check()
    sid = first.native_id
    assert sid
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"

    imported = checks.oxide(compat_repo, "import")
    assert "unknown" not in imported.stderr, imported.stderr  # every record of this release is known
    shown = checks.show(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    assert shown["messages"][0]["extra"].get("harness") is True  # the CLI's <session_context>
    names = [c["name"] for c in checks.tool_calls(shown)]
    assert names == ["run_shell_command", "write_file", "replace"], names

    original = d.session_file(sid)
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    assert rt.result["native_id"] == sid
    assert rt.written[str(original)] == original_bytes(tmp_path, original)
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell", "second line"])
    checks.record({"agent": "gemini", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"

    # The CLI's own resume rewrote the history in the file ($set.messages): importing again adds
    # the second prompt and its answer to the same session, nothing else.
    again = checks.import_session(compat_repo, sid)
    assert [m["native_id"] for m in again["messages"][:len(shown["messages"])]] == [
        m["native_id"] for m in shown["messages"]]
    assert checks.user_prompts(again)[-1] == PROMPT2
    assert len(again["messages"]) == len(shown["messages"]) + 2
    rows = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == "gemini"]
    assert len(rows) == 1, rows  # the startup file a resume leaves behind is no session


def original_bytes(tmp: Path, original: Path) -> bytes:
    [moved] = list((tmp / "moved-away").iterdir())
    return (moved / original.relative_to(original.parents[2])).read_bytes()


def test_gemini_hooks_capture_without_an_import(compat_repo: Path, model_server) -> None:
    """`init --agent-hooks gemini`: the CLI's own BeforeAgent/AfterAgent hooks import the session
    and take a prompt checkpoint, with no `git oxide import` run."""
    d = make_driver("gemini", compat_repo, model_server)
    # A folder the user trusted (the CLI asks once, interactively): only there does it load the
    # project's settings, and so its hooks (--skip-trust comes too late for them).
    (d.home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(compat_repo): "TRUST_FOLDER"}))
    checks.oxide(compat_repo, "init", "--agent-hooks", "gemini")
    settings = (compat_repo / ".gemini" / "settings.json").read_text()
    assert "git oxide agent-hook gemini prompt" in settings
    sid = d.run().check().native_id
    rows = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == "gemini"]
    assert [r["native_id"] for r in rows] == [sid]
    shown = checks.show(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])  # AfterAgent imported the whole turn
    cps = checks.oxide_json(compat_repo, "checkpoints", "--session", rows[0]["id"])
    assert [c["kind"] for c in cps] == ["prompt"], cps
    status = checks.oxide_json(compat_repo, "status")
    assert status["session"]["id"] == rows[0]["id"], status


def test_gemini_resumes_the_rewind_it_made(compat_repo: Path, model_server) -> None:
    """A /rewind made in the CLI (a real 0.61 file, driven interactively in tmux) is a fork in
    oxide; `resume --into gemini` writes the rewound conversation as a session of its own, the CLI
    resumes it (its request holds what the rewind kept, not what it dropped), and what it adds
    then imports as that fork's continuation."""
    import shutil

    from .modelserver import Turn

    d = make_driver("gemini", compat_repo, model_server)
    model_server.script["PROMPT-4"] = [Turn.say("Done with four.")]
    folder = d.home / ".gemini" / "tmp" / "project"
    (folder / "chats").mkdir(parents=True)
    (folder / ".project_root").write_text(str(compat_repo))
    shutil.copy(REWIND_FIXTURE, folder / "chats")
    checks.oxide(compat_repo, "import")
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [first] = [r for r in rows if r["parent_id"] is None]
    [fork] = [r for r in rows if r["parent_id"] == first["id"]]
    assert "PROMPT-2: two" in checks.user_prompts(checks.show(compat_repo, first["id"]))
    res = checks.into(compat_repo, fork["id"], "gemini")
    model_server._log.clear()
    d.resume(res["native_id"], "PROMPT-4: four").check()
    body = checks.request_text(model_server)
    assert "SAY-1: hello" in body and "PROMPT-3: three" in body
    assert "PROMPT-2: two" not in body, "the CLI resumed what its own rewind dropped"
    checks.oxide(compat_repo, "import")
    new = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["id"] not in {x["id"] for x in rows}]
    assert len(new) == 1 and new[0]["parent_id"] == fork["id"], new


REWIND_FIXTURE = (Path(__file__).resolve().parents[2] / "fixtures" / "gemini" / "rewind" / "chats"
                  / "session-2026-12-01T22-31-5b71e34a.jsonl")


def test_gemini_compression_is_a_compaction_it_resumes(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """A real compression: with ``model.compressionThreshold`` low (a user setting), 0.61
    compresses the history when a resume's prompt comes in (the summariser's ``<state_snapshot>``
    request is answered by the model server); it summarises the first turn and keeps the second
    (under new ids). oxide imports the summary as a compaction (the messages before it kept,
    compacted), writes the file back line for line, and the CLI resumed from that file sends the
    summary and the kept turn, not the history the summary replaced."""
    from .modelserver import SNAPSHOT_TEXT, Turn

    d = make_driver("gemini", compat_repo, model_server)
    model_server.script["PROMPT-3"] = [Turn.say("Done with three.")]
    model_server.script["PROMPT-4"] = [Turn.say("Done with four.")]
    sid = d.run().check().native_id
    assert sid
    d.resume(sid, PROMPT2).check()
    settings_path = d.home / ".gemini" / "settings.json"
    plain = settings_path.read_text()
    settings_path.write_text(json.dumps({**json.loads(plain), "model": {"compressionThreshold": 0.0001}}))
    model_server._log.clear()
    d.resume(sid, "PROMPT-3: three").check()
    asked = [r for r in model_server.requests("gemini") if ":generateContent" in r["path"]]
    assert len(asked) == 2, "no compression: the summariser was not asked (and verified)"
    body = checks.request_text(model_server)
    assert SNAPSHOT_TEXT in body and PROMPT2 in body and "PROMPT-3: three" in body
    assert d.prompt1 not in body, "the CLI sent the history its compression replaced"
    settings_path.write_text(plain)

    ctx_msgs = checks.assert_compaction_imported(compat_repo, sid, SNAPSHOT_TEXT)
    after = [t for m in ctx_msgs[1:] for t in checks.texts(m, "text")]
    assert after == ["Got it. Thanks for the additional context!", PROMPT2, "Done with two.",
                     "PROMPT-3: three", "Done with three."]  # the kept turn, as the CLI holds it

    original = d.session_file(sid)
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    checks.record({"agent": "gemini", "version": d.pin.version, "check": "round_trip_compression",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"
    model_server._log.clear()
    d.resume(sid, "PROMPT-4: four").check()
    body = checks.request_text(model_server)
    assert all(x in body for x in (SNAPSHOT_TEXT, PROMPT2, "PROMPT-3: three", "PROMPT-4: four"))
    assert d.prompt1 not in body and "echo from-shell" not in body
