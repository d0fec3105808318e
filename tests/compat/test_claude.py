"""Claude Code, driven for real: import, same-agent round trip, what it sends its model."""

from __future__ import annotations

from pathlib import Path

from . import checks
from .conftest import make_driver
from .driver import PROMPT2, SHELL_TEXT


def test_claude_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("claude", compat_repo, model_server)
    first = d.run().check()
    sid = first.native_id
    assert sid
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"

    imported = checks.oxide(compat_repo, "import")
    assert "unknown type" not in imported.stderr  # every record type of this release is known
    shown = checks.show(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    assert shown["session"]["title"] is None or d.marker in str(shown["session"]["title"])

    original = d.session_file(sid)
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    assert rt.result["native_id"] == sid
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell", "second line"])
    checks.record({"agent": "claude", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"


def test_claude_resumes_the_rewound_conversation(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """Issue 13, item 11: after `rewind --conversation`, `claude --resume` continues the rewound
    conversation, not the agent's own longer file, which is set aside (nothing is lost)."""
    from .modelserver import Turn

    d = make_driver("claude", compat_repo, model_server)
    model_server.script["PROMPT-3"] = [Turn.say("Done with three.")]
    sid = d.run().check().native_id
    assert sid
    checks.import_session(compat_repo, sid)
    cp = checks.oxide(compat_repo, "checkpoint", "--session", sid, "-m", "after the first prompt").stdout.strip()
    d.resume(sid, PROMPT2).check()
    assert any(PROMPT2 in u for u in checks.user_prompts(checks.import_session(compat_repo, sid)))

    checks.oxide(compat_repo, "rewind", cp, "--conversation", "--yes")
    rewound = checks.show(compat_repo, sid)
    assert not any(PROMPT2 in u for u in checks.user_prompts(rewound))
    path = d.session_file(sid)
    longer = path.read_bytes()
    res = checks.into(compat_repo, sid, "claude")
    assert res["written"] == [str(path)]
    assert Path(res["set_aside"][0]).read_bytes() == longer  # the agent's file, kept aside

    model_server._log.clear()
    d.resume(sid, "PROMPT-3: and now?").check()
    body = checks.request_text(model_server)
    assert d.prompt1 in body and SHELL_TEXT in body
    assert PROMPT2 not in body, "the agent resumed the conversation the user rewound away"


def test_claude_sub_agent_and_compaction(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """A sub-agent (the Agent tool) and a /compact: the sub-agent's file is its own session hanging
    on the parent's call, the compaction a message, and the main file still comes back whole."""
    from .modelserver import Turn

    d = make_driver("claude", compat_repo, model_server)
    model_server.script.update({
        "SUB-1": [Turn.tool("Agent", {"description": "look around", "prompt": "SUBTASK-1 list files",
                                      "subagent_type": "general-purpose"}), Turn.say("Sub done.")],
        "SUBTASK-1": [Turn.shell(f"echo {SHELL_TEXT}"), Turn.say("Files listed.")],
    })
    sid = d.run("SUB-1: use a sub-agent").check().native_id
    assert sid
    d.resume(sid, "/compact").check()
    main = d.session_file(sid)
    [sub_file] = list(main.with_suffix("").glob("subagents/agent-*.jsonl"))

    shown = checks.import_session(compat_repo, sid)
    assert any(p["type"] == "compaction" for m in shown["messages"] for p in m["parts"])
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [sub] = [r for r in rows if r["parent_id"] == shown["session"]["id"]]
    sub_shown = checks.show(compat_repo, sub["id"])
    checks.assert_conversation(sub_shown, ["SUBTASK-1"])

    original = main.read_bytes()
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[main])
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total}"
    assert main.read_bytes() == original
    assert sub_file.exists() is False  # moved away; a resume writes the main file only (docs/agents/claude.md)
