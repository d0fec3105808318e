"""Qwen Code, driven for real: import, same-agent round trip, what it sends its model, its own
resume of a file oxide wrote."""

from __future__ import annotations

import time
from pathlib import Path

from . import checks
from .conftest import make_driver
from .driver import PROMPT2, SHELL_TEXT


def test_qwen_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("qwen", compat_repo, model_server)
    first = d.run().check()
    sid = first.native_id
    assert sid
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"

    imported = checks.oxide(compat_repo, "import")
    assert "unknown" not in imported.stderr, imported.stderr  # every record of this release is known
    shown = checks.show(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    names = [c["name"] for c in checks.tool_calls(shown)]
    assert names == ["run_shell_command", "write_file", "edit"], names

    original = d.session_file(sid)
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    assert rt.result["native_id"] == sid
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell", "second line"])
    checks.record({"agent": "qwen", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"

    again = checks.import_session(compat_repo, sid)  # the resume appended: the same session grows
    assert checks.user_prompts(again)[-1] == PROMPT2
    assert [m["native_id"] for m in again["messages"][:len(shown["messages"])]] == [
        m["native_id"] for m in shown["messages"]]
    rows = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == "qwen"]
    assert len(rows) == 1, rows


def test_qwen_hooks_capture_without_an_import(compat_repo: Path, model_server) -> None:
    """`init --agent-hooks qwen`: the CLI's own UserPromptSubmit/Stop hooks import the session and
    take a prompt checkpoint, with no `git oxide import` run. The first prompt of a new session
    fires its hook before the CLI writes anything: that checkpoint is taken on no session and tied
    to the session by the Stop hook that imports it (docs/agents/qwen.md); every later one is the
    session's when it is taken."""
    d = make_driver("qwen", compat_repo, model_server)
    checks.oxide(compat_repo, "init", "--agent-hooks", "qwen")
    assert "git oxide agent-hook qwen prompt" in (compat_repo / ".qwen" / "settings.json").read_text()
    sid = d.run().check().native_id
    rows = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == "qwen"]
    assert [r["native_id"] for r in rows] == [sid]
    checks.assert_conversation(checks.show(compat_repo, sid), [d.prompt1])  # Stop imported the turn
    d.resume(sid, PROMPT2).check()
    cps = checks.oxide_json(compat_repo, "checkpoints", "--session", rows[0]["id"])
    got = sorted((c["kind"], c["message"]) for c in cps)
    assert got == sorted([("prompt", d.prompt1), ("prompt", PROMPT2)]), cps
    assert checks.user_prompts(checks.show(compat_repo, sid))[-1] == PROMPT2


def test_qwen_compression_is_a_compaction_it_resumes(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """A real ``/compress`` (``-p`` mode; the summariser's ``<state_snapshot>`` request answered by
    the model server): 0.24.4 writes a ``system/chat_compression`` record, oxide imports it as a
    compaction (the messages before it kept, compacted), writes the file back line for line, and
    the CLI resumed from that file sends the summary, not the history it replaced."""
    from .modelserver import SNAPSHOT_TEXT, Turn

    d = make_driver("qwen", compat_repo, model_server)
    model_server.script["PROMPT-3"] = [Turn.say("Done with three.")]
    sid = d.run().check().native_id
    assert sid
    out = d.resume(sid, "/compress").check().stdout
    assert "Context compressed" in out, out[-800:]
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    body = checks.request_text(model_server)
    assert SNAPSHOT_TEXT in body and PROMPT2 in body
    assert d.prompt1 not in body, "the CLI sent the history its compression replaced"

    checks.assert_compaction_imported(compat_repo, sid, SNAPSHOT_TEXT)

    original = d.session_file(sid)
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    checks.record({"agent": "qwen", "version": d.pin.version, "check": "round_trip_compression",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"
    model_server._log.clear()
    d.resume(sid, "PROMPT-3: three").check()
    body = checks.request_text(model_server)
    assert SNAPSHOT_TEXT in body and PROMPT2 in body and "PROMPT-3: three" in body
    assert d.prompt1 not in body, "the CLI resumed the history its compression replaced"


def test_qwen_rewind_in_the_cli_is_a_fork_it_resumes(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """Qwen Code's own rewind, driven in its interactive UI (tmux): two prompts, Escape twice on
    the empty input opens the rewind dialog (typing ``/rewind`` opens nothing in 0.24.4), the last
    turn, "Restore conversation only", then a new prompt. oxide imports a fork
    ``<id>/branch-1`` that keeps the first turn and the new one; `resume --into qwen` of it is a
    session the CLI resumes (its request holds the branch, not the turn the rewind dropped), and
    what the CLI adds then hangs on the fork."""
    from .drive_qwen import MODEL
    from .modelserver import Turn
    from .tmux import TMUX, Pane

    if TMUX is None:
        import pytest

        pytest.skip("tmux is not installed")
    d = make_driver("qwen", compat_repo, model_server)
    for n, word in enumerate(("one", "two", "three", "four"), 1):
        model_server.script[f"RW-{n}"] = [Turn.say(f"Done with {word}.")]
    env = {**d.env(), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    pane = Pane(tmp_path / "tmux.sock", [str(d.binary), "--auth-type", "openai", "-m", MODEL, "--yolo"],
                cwd=compat_repo, env=env, width=120, height=40)

    def press(*keys: str, pause: float = 0.3) -> None:  # one at a time: a key, not a paste
        for k in keys:
            pane.keys(k)
            time.sleep(pause)

    try:
        pane.wait("Type your message")
        for n, word in ((1, "one"), (2, "two")):
            pane.type(f"RW-{n}: {word}")
            time.sleep(0.5)
            press("Enter")
            pane.wait(f"Done with {word}.")
        # Escape twice opens the dialog only while the UI is idle (else the first one cancels
        # what is still running): pressed again until it shows
        for _ in range(10):
            time.sleep(1)
            press("Escape", "Escape", pause=0.4)
            if "Rewind Conversation (2 turns)" in pane.text():
                break
        pane.wait("Rewind Conversation (2 turns)", timeout=5)
        press("Enter")  # the last turn is the one chosen
        pane.wait("Restore conversation only")
        press("Enter")
        pane.wait("Conversation rewound")
        press("C-e", "C-u")  # the rewound prompt is back in the input box
        pane.type("RW-3: three")
        time.sleep(0.5)
        press("Enter")
        pane.wait("Done with three.")
    finally:
        pane.close()
    [path] = list((d.home / ".qwen" / "projects").glob("*/chats/*.jsonl"))
    sid = path.stem
    assert any('"subtype":"rewind"' in x for x in path.read_text().splitlines())

    checks.oxide(compat_repo, "import")
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [first] = [r for r in rows if r["native_id"] == sid]
    [fork] = [r for r in rows if r["parent_id"] == first["id"]]
    assert fork["native_id"] == f"{sid}/branch-1"
    assert checks.user_prompts(checks.show(compat_repo, first["id"])) == ["RW-1: one", "RW-2: two"]
    assert checks.user_prompts(checks.show(compat_repo, fork["id"])) == ["RW-1: one", "RW-3: three"]

    res = checks.into(compat_repo, fork["id"], "qwen")
    assert res["native_id"] != sid
    model_server._log.clear()
    d.resume(res["native_id"], "RW-4: four").check()
    body = checks.request_text(model_server)
    assert "RW-1: one" in body and "RW-3: three" in body and "RW-4: four" in body
    assert "RW-2: two" not in body, "the CLI resumed what its own rewind dropped"
    checks.oxide(compat_repo, "import")
    new = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["id"] not in {x["id"] for x in rows}]
    assert len(new) == 1 and new[0]["parent_id"] == fork["id"], new
