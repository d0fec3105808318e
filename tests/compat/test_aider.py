"""Aider 0.86.2, driven for real: a restored chat history is one session, the same-agent round
trip is line-identical and idempotent, and another agent's session restores into Aider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import checks
from .conftest import make_driver
from .drive_aider import NOTES_LINE, SHELL_COMMAND
from .driver import PROMPT2, SHELL_TEXT
from .modelserver import ModelServer, Turn

PROMPT3 = "PROMPT-3: what did we do so far?"
LONG = 1500  # lines of shell output: a history over aider's 1k-token budget for this model


def aider_sessions(repo: Path) -> list[dict[str, Any]]:
    rows = checks.oxide_json(repo, "list", "--all")
    return [r for r in rows if r.get("agent") == "aider"]


def test_aider_restored_history_round_trip(compat_repo: Path, model_server: ModelServer,
                                           tmp_path: Path) -> None:
    d = make_driver("aider", compat_repo, model_server)
    model_server.script["PROMPT-3"] = [Turn.say("Done with three.")]
    d.run().check()
    assert (compat_repo / "notes.txt").read_text() == NOTES_LINE + "\n"
    # --yes-always answers "n" to "Run shell command?" (aider asks for an explicit yes there)
    assert not (compat_repo / "shell.txt").exists()
    assert "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: n" in d.history().read_text()
    d.resume("", PROMPT2).check()
    history = d.history().read_text()
    assert history.count("# aider chat started at") == 2
    assert "> Restored previous conversation history.  \n" in history

    # one session holds both prompts
    checks.oxide(compat_repo, "import")
    (row,) = aider_sessions(compat_repo)
    native = row["native_id"]
    shown = checks.show(compat_repo, native)
    checks.assert_conversation(shown, [d.prompt1, PROMPT2], tools=False)
    outputs = json.dumps(checks.tool_results(shown))
    assert "Applied edit to notes.txt" in outputs and SHELL_COMMAND in outputs
    assert any(p["type"] == "patch" and NOTES_LINE in p["text"]
               for m in shown["messages"] for p in m["parts"])

    # the files moved away and written back: every line aider wrote, in both files
    originals = checks.snapshot(d.store())
    rt = checks.round_trip(d, compat_repo, native, tmp_path)
    checks.record({"agent": "aider", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"
    assert rt.written == originals  # byte for byte, in fact
    assert rt.result["native_id"] == native and rt.result["lost"] == []

    # a second resume appends nothing
    again = checks.into(compat_repo, native, "aider")
    assert again["written"] == [] and again["native_id"] == native
    assert checks.snapshot(d.store()) == originals

    # aider accepts what oxide wrote: its request holds every earlier prompt and the edit
    model_server._log.clear()
    d.resume(native, PROMPT3).check()
    checks.assert_request_holds(model_server, [d.prompt1, PROMPT2, PROMPT3, NOTES_LINE,
                                               "Done with two."])
    assert "Restored previous conversation history." in d.history().read_text()

    # after aider's own third section: resume appends nothing, import makes no new session
    grown = checks.snapshot(d.store())
    assert checks.into(compat_repo, native, "aider")["written"] == []
    assert checks.snapshot(d.store()) == grown
    checks.oxide(compat_repo, "import")
    (after,) = aider_sessions(compat_repo)
    assert after["id"] == row["id"]
    checks.assert_conversation(checks.show(compat_repo, native), [d.prompt1, PROMPT2, PROMPT3],
                               tools=False)


def _into_aider_and_back(repo: Path, server: ModelServer, source_id: str) -> dict[str, Any]:
    """``resume --into aider`` twice (the second writes nothing); an import then makes no session
    of what oxide wrote. Returns the first resume's result."""
    checks.oxide(repo, "import")
    res = checks.into(repo, source_id, "aider")
    assert res["agent"] == "aider" and res["command"][:2] == ["aider", "--restore-chat-history"]
    assert sum("Tool calls" in x for x in res["lost"]) == 1, res["lost"]
    oxide_id = checks.show(repo, source_id)["session"]["id"]
    history = repo / ".aider.chat.history.md"
    text = history.read_text()
    assert f"> git-oxide: restored session {oxide_id}  \n" in text
    assert checks.into(repo, source_id, "aider")["written"] == []
    assert history.read_text() == text
    checks.oxide(repo, "import")
    assert aider_sessions(repo) == [], "importing what oxide wrote made a session of it"
    return res


def _continued_in_aider(repo: Path, source_id: str, prompt: str) -> None:
    """After aider went on: one aider session, hanging on the session it continues."""
    checks.oxide(repo, "import")
    (row,) = aider_sessions(repo)
    shown = checks.show(repo, row["id"])
    assert shown["session"]["parent_id"] == checks.show(repo, source_id)["session"]["id"]
    assert any(prompt in u for u in checks.user_prompts(shown))


def test_claude_session_restores_into_aider(compat_repo: Path, model_server: ModelServer) -> None:
    """Claude Code's session written into Aider's history: aider --restore-chat-history sends its
    prompts, tool calls and tool outputs to the model, as text."""
    claude = make_driver("claude", compat_repo, model_server)
    model_server.script[claude.marker] = [
        Turn.shell(f"echo {SHELL_TEXT} | tee shell.txt; seq 1 {LONG}"),
        Turn.write(str(compat_repo / "notes.txt"), "second line\n"), Turn.say("Done with one.")]
    model_server.script["PROMPT-3"] = [Turn.say("Done with three.")]
    sid = claude.run().check().native_id
    assert sid
    res = _into_aider_and_back(compat_repo, model_server, sid)
    d = make_driver("aider", compat_repo, model_server)

    # over the budget, aider has its weak model summarize the restored history first (a side
    # request here, answered with the server's side text), and sends the summary instead
    model_server._log.clear()
    d.restore(PROMPT3).check()
    assert any("summarize" in json.dumps(r["body"]) for r in model_server.requests(scripted=False))
    sent = checks.request_text(model_server)
    assert model_server.side_text in sent and f"\\n{LONG}\\n" not in sent
    assert any("summarizes" in x for x in res["lost"])
    model_server._log.clear()
    d.restore(PROMPT3, "--max-chat-history-tokens", "100000").check()
    checks.assert_request_holds(model_server, [claude.prompt1, SHELL_TEXT, "echo from-shell",
                                               "second line", f"\n{LONG}\n"])
    _continued_in_aider(compat_repo, sid, PROMPT3)


def test_codex_session_restores_into_aider(compat_repo: Path, model_server: ModelServer) -> None:
    """Codex's session, harness context (environment, permissions) left out and said so."""
    codex = make_driver("codex", compat_repo, model_server)
    model_server.script["PROMPT-3"] = [Turn.say("Done with three.")]
    tid = codex.run().check().native_id
    assert tid
    res = _into_aider_and_back(compat_repo, model_server, tid)
    assert sum("harness" in x for x in res["lost"]) == 1, res["lost"]
    assert "<environment_context>" not in (compat_repo / ".aider.chat.history.md").read_text()
    d = make_driver("aider", compat_repo, model_server)
    model_server._log.clear()
    d.restore(PROMPT3).check()
    checks.assert_request_holds(model_server, [codex.prompt1, SHELL_TEXT, "echo from-shell",
                                               "second line"])
    _continued_in_aider(compat_repo, tid, PROMPT3)
