"""A conversation rewind reaches the agent (issue 13, item 11), and what oxide wrote into an agent's
store is that session again on import, never a new one (item 10). The real agents do the same in
tests/compat/; these run without them."""

from __future__ import annotations

import json
from pathlib import Path

from oxide_git.agents.claude.export import encode_cwd
from tests.conftest import oxide


def _line(uuid: str, parent: str | None, kind: str, content: str, ts: str) -> str:
    msg = {"role": kind, "content": content} if kind == "user" else {
        "model": "m", "id": f"msg_{uuid}", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": content}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    return json.dumps({"parentUuid": parent, "isSidechain": False, "type": kind, "message": msg,
                       "uuid": uuid, "timestamp": ts, "sessionId": SID, "cwd": CWD[0]},
                      separators=(",", ":"))  # as Claude Code writes them


SID = "40000000-0000-4000-8000-000000000004"
CWD: list[str] = []


def _transcript(repo: Path, home: Path) -> Path:
    CWD[:] = [str(repo)]
    path = home / ".claude" / "projects" / encode_cwd(str(repo)) / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([
        _line("u1", None, "user", "first prompt", "2026-02-01T10:00:01.000Z"),
        _line("a1", "u1", "assistant", "first answer", "2026-02-01T10:00:02.000Z"),
    ]) + "\n")
    return path


def test_the_agent_resumes_the_rewound_conversation(repo: Path, isolated_env: Path) -> None:
    path = _transcript(repo, isolated_env)
    oxide(repo, "import")
    cp = oxide(repo, "checkpoint", "--session", SID).stdout.strip()
    with path.open("a") as f:  # the user went on in Claude
        f.write(_line("u2", "a1", "user", "second prompt", "2026-02-01T10:01:01.000Z") + "\n")
        f.write(_line("a2", "u2", "assistant", "second answer", "2026-02-01T10:01:02.000Z") + "\n")
    oxide(repo, "import")
    longer = path.read_bytes()

    into = json.loads(oxide(repo, "resume", SID, "--into", "claude", "--json").stdout)
    assert into["kept"] == [str(path)] and into["written"] == []  # no rewind: the agent's file wins

    oxide(repo, "rewind", cp, "--conversation", "--yes")
    into = json.loads(oxide(repo, "resume", SID, "--into", "claude", "--json").stdout)
    assert into["written"] == [str(path)]
    assert "second prompt" not in path.read_text() and "first answer" in path.read_text()
    assert Path(into["set_aside"][0]).read_bytes() == longer  # kept aside, not lost
    assert "second prompt" not in oxide(repo, "resume", SID, "--format", "json").stdout

    again = json.loads(oxide(repo, "resume", SID, "--into", "claude", "--json").stdout)
    assert again["written"] == [] and again["kept"] == [str(path)]  # same bytes: nothing to do

    with path.open("a") as f:  # the user went on in Claude after the rewind, without an import
        f.write(_line("u3", "a1", "user", "third prompt", "2026-02-01T10:02:01.000Z") + "\n")
    went_on = path.read_bytes()
    third = json.loads(oxide(repo, "resume", SID, "--into", "claude", "--json").stdout)
    assert third["kept"] == [str(path)] and path.read_bytes() == went_on  # never overwritten


def test_importing_what_oxide_wrote_makes_no_new_session(repo: Path, isolated_env: Path) -> None:
    _transcript(repo, isolated_env)
    oxide(repo, "import")
    into = json.loads(oxide(repo, "resume", SID, "--into", "codex", "--json").stdout)
    [rollout] = [Path(p) for p in into["written"]]
    before = json.loads(oxide(repo, "list", "--all", "--json").stdout)
    oxide(repo, "import")
    oxide(repo, "import")  # and again: still nothing
    assert json.loads(oxide(repo, "list", "--all", "--json").stdout) == before

    # Codex went on: what it added is a continuation of the original, linked to it.
    ts = "2026-02-01T11:00:00.000Z"
    with rollout.open("a") as f:
        for payload in (
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go on"}]},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "codex went on"}]},
        ):
            f.write(json.dumps({"timestamp": ts, "type": "response_item", "payload": payload}) + "\n")
            if payload["role"] == "user":
                f.write(json.dumps({"timestamp": ts, "type": "event_msg", "payload": {
                    "type": "user_message", "message": "go on"}}) + "\n")
    oxide(repo, "import")
    rows = json.loads(oxide(repo, "list", "--all", "--json").stdout)
    new = [r for r in rows if r["id"] not in {b["id"] for b in before}]
    assert len(new) == 1 and new[0]["agent"] == "codex"
    original = next(r["id"] for r in before if r["native_id"] == SID)
    assert new[0]["parent_id"] == original
    shown = json.loads(oxide(repo, "show", new[0]["id"], "--json", "--full").stdout)
    assert "codex went on" in json.dumps(shown["messages"])


def test_aider_resumes_the_rewound_conversation(repo: Path) -> None:
    """Aider restores its whole history file: after a rewind, the session's sections in it are
    replaced by the rewound session (the other sections stay), the longer file set aside."""
    history = repo / ".aider.chat.history.md"
    other = "\n# aider chat started at 2026-01-01 09:00:00\n\n> aider\n\n#### another session\n\nits answer\n"
    first = ("\n# aider chat started at 2026-02-01 10:00:00\n\n> aider --model x\n\n"
             "#### first prompt\n\nfirst answer\n")
    history.write_text(other + first)
    oxide(repo, "import")
    [row] = [r for r in json.loads(oxide(repo, "list", "--json").stdout) if r["title"] == "first prompt"]
    cp = oxide(repo, "checkpoint", "--session", row["id"]).stdout.strip()
    with history.open("a") as f:
        f.write("\n#### second prompt\n\nsecond answer\n")
    oxide(repo, "import")
    longer = history.read_bytes()
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    into = json.loads(oxide(repo, "resume", row["id"], "--into", "aider", "--json").stdout)
    text = history.read_text()
    assert into["written"] == [str(history)] and Path(into["set_aside"][0]).read_bytes() == longer
    assert "first answer" in text and "second prompt" not in text
    assert text.startswith(other)  # the other session is as it was
    again = json.loads(oxide(repo, "resume", row["id"], "--into", "aider", "--json").stdout)
    assert history.read_text() == text and again["set_aside"] == []  # nothing more to do


def test_aider_rewind_after_its_own_restored_section(repo: Path) -> None:
    """As real aider 0.86 writes it: the first section's status lines, then a restored section
    whose status lines repeat the first's ("> Tokens: ..."), every message at its section's time.
    Imported between the two (with a checkpoint moving the tip), the messages stay apart; the
    rewind's resume writes the first section back exactly, the longer file set aside."""
    history = repo / ".aider.chat.history.md"
    first = ("\n# aider chat started at 2026-02-01 10:00:00\n\n"
             "> Update git name with: git config user.name \"Your Name\"  \n> Aider v0.86.2  \n"
             "> Model: openai/fake-model with diff edit format  \n\n"
             "#### first prompt  \n\nfirst answer\n\n> Tokens: 100 sent, 20 received.  \n")
    history.write_text(first)
    oxide(repo, "import")
    [row] = [r for r in json.loads(oxide(repo, "list", "--json").stdout) if r["title"] == "first prompt"]
    cp = oxide(repo, "checkpoint", "--session", row["id"]).stdout.strip()
    with history.open("a") as f:
        f.write("\n# aider chat started at 2026-02-01 10:00:04\n\n"
                "> aider --restore-chat-history  \n> Aider v0.86.2  \n"
                "> Restored previous conversation history.  \n\n"
                "#### second prompt  \n\nsecond answer\n\n> Tokens: 100 sent, 20 received.  \n")
    oxide(repo, "import")
    shown = json.loads(oxide(repo, "show", row["id"], "--json").stdout)["messages"]
    outputs = [p.get("output") for m in shown for p in m["parts"] if p["type"] == "tool_result"]
    assert outputs[0].startswith("Update git name") and outputs.count("Tokens: 100 sent, 20 received.") == 2
    longer = history.read_bytes()
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    into = json.loads(oxide(repo, "resume", row["id"], "--into", "aider", "--json").stdout)
    assert Path(into["set_aside"][0]).read_bytes() == longer
    text = history.read_text()  # the blank line aider wrote before the next header stays the message's
    assert text.startswith(first) and not text[len(first):].strip()
