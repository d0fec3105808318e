"""A wrong `--agent` must not stick (issue 38, item 2): a file that looks like another agent's is
refused before anything is stored, `--agent` may be left out, and a file a wrong import made into
a one-message session of another agent imports as the right agent's afterwards."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from oxide_git.agents import AGENT_NAMES
from oxide_git.agents.recognise import HEAD_BYTES, Head, kind, looks_like, recognise
from oxide_git.core.errors import OxideError, Refused
from oxide_git.imports import paths as import_paths
from oxide_git.imports.importing import import_sessions
from tests.conftest import FIXTURES, git, make_ctx, oxide

# Every agent's real files (fixtures/<agent>/), each format an importer reads given as a file.
SAMPLES = {
    "claude": ["claude/compaction.jsonl", "claude/split_response.jsonl", "claude/unknown_type.jsonl",
               "claude/legacy_sidechain.jsonl",
               "claude/30000000-0000-4000-8000-000000000003/subagents/agent-a1b2c3d.jsonl"],
    "codex": ["codex/turns.jsonl", "codex/rollout-2025-05-01-8b3f1a2c-1111-4222-8333-944455556666.json",
              "codex/rollout-2025-08-01T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl",
              "codex/rollout-2026-12-01T20-03-01-01a23334-175b-7030-bb12-84938bd24286.jsonl"],
    "opencode": ["opencode/export/session__quiet-lake__ses_48923d15fffeOT94hSKIr52KgW.json",
                 "opencode/db-1.18.33/opencode.db", "opencode/db-1.18.33/export.json",
                 "opencode/storage/session/9f1c2e4d5b6a7980a1b2c3d4e5f60718293a4b5c/"
                 "ses_4892557ffffeVhlvJlU2fzctdP.json"],
    "aider": ["aider/tokens.md", "aider/crlf.md", "aider/restored/.aider.chat.history.md"],
    "copilot": ["copilot/edge_cases.jsonl", "copilot/81c03215-76d1-48c4-bea3-4d764f350eaa/events.jsonl"],
    "cline": ["cline/1796163110409_qaeaw/1796163110409_qaeaw.messages.json",
              "cline/1796163110409_qaeaw/agent_1796163111348_bj6555.messages.json",
              "cline/1796163110409_qaeaw/1796163110409_qaeaw.json"],
    "pi": ["pi/basic.jsonl", "pi/tree.jsonl"],
    "gemini": ["gemini/project/chats/session-2026-12-01T22-10-29b5301f.jsonl",
               "gemini/legacy/chats/session-2026-12-01T22-24-fe2e1a3b.json",
               "gemini/subagent/chats/dcf30305-1e8d-42c3-b064-42193509cbc9/"
               "78bbc48c-bd90-4b03-b11f-b53ece61dc52.jsonl"],
    "qwen": ["qwen/projects/-tmp-gemini-q1-project/chats/c753d781-2223-4830-999a-641b7cd106a4.jsonl",
             "qwen/projects/-tmp-gemini-q4-project/subagents/4e3c6dc1-09bd-4668-b8e5-738a23334208/"
             "agent-general-purpose-call_9d6bc1da12a64fae9579c681.jsonl"],
}
CLAUDE = FIXTURES / "claude" / "compaction.jsonl"


def stored(repo: Path) -> tuple[str, list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The store as it stands: its refs, its sessions and its import cursors (the index)."""
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide", "refs/notes")
    db = repo / ".git" / "oxide" / "index.db"
    if not db.exists():
        return refs, [], []
    with sqlite3.connect(db) as conn:
        sessions = conn.execute("SELECT id, agent, message_count FROM sessions ORDER BY id").fetchall()
        cursors = conn.execute("SELECT path, agent, offset FROM cursors ORDER BY path").fetchall()
    return refs, sessions, cursors


def test_every_fixture_is_recognised_as_its_agent_and_refused_as_every_other() -> None:
    assert set(SAMPLES) == set(AGENT_NAMES)
    for agent, names in SAMPLES.items():
        for name in names:
            path = FIXTURES / name
            assert recognise(path) == [agent], name
            assert import_paths.files(None, [path]) == [(agent, path)]
            assert import_paths.files(agent, [path]) == [(agent, path)]
            for other in AGENT_NAMES:
                if other == agent:
                    continue
                assert not looks_like(other, path), (name, other)
                with pytest.raises(Refused) as e:
                    import_paths.files(other, [path])
                assert f"this looks like {kind(agent)}, not {kind(other)}" in e.value.message
                assert e.value.hint is not None and f"--agent {agent}" in e.value.hint


def test_a_json_document_written_on_one_line_is_told_the_same() -> None:
    """Cline's, OpenCode's, Gemini's and Codex's whole-file JSON, as their tools indent it or not."""
    from oxide_git.agents.recognise import SNIFFERS

    for agent, names in SAMPLES.items():
        for name in (n for n in names if n.endswith(".json")):
            compact = json.dumps(json.loads((FIXTURES / name).read_bytes()), separators=(",", ":"))
            head = Head(compact.encode() + b"\n")
            assert [n for n, test in SNIFFERS.items() if test(head)] == [agent], name


def test_a_claude_transcript_given_as_codex_is_refused_and_stores_nothing(repo: Path, tmp_path: Path) -> None:
    """What the user did: `import --agent codex` on a Claude Code transcript, then the right agent."""
    src = tmp_path / "transcript.jsonl"
    shutil.copy(CLAUDE, src)
    oxide(repo, "import", "--agent", "pi", str(FIXTURES / "pi" / "basic.jsonl"))  # a store already there
    before = stored(repo)
    r = oxide(repo, "import", "--agent", "codex", str(src), check=False)
    assert r.returncode == 1, r.stderr
    assert "error: " in r.stderr and "this looks like a Claude Code transcript, not a Codex rollout" in r.stderr
    assert "hint: --agent claude" in r.stderr and "Traceback" not in r.stderr
    assert stored(repo) == before  # no ref moved, no session, no cursor
    out = json.loads(oxide(repo, "import", "--agent", "claude", "--json", str(src)).stdout)
    assert out["messages"] == 5 and [f["agent"] for f in out["files"]] == ["claude"]


def test_a_folder_given_as_the_wrong_agent_is_refused_whole(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(FIXTURES / "codex" / "turns.jsonl", folder / "a.jsonl")
    shutil.copy(CLAUDE, folder / "b.jsonl")
    shutil.copy(FIXTURES / "claude" / "images.jsonl", folder / "c.jsonl")
    r = oxide(repo, "import", "--agent", "codex", str(folder), check=False)
    assert r.returncode == 1 and "b.jsonl: this looks like a Claude Code transcript" in r.stderr
    assert "(1 more file(s) like it)" in r.stderr
    assert stored(repo) == ("", [], [])


def test_without_agent_a_file_or_a_folder_is_told_from_its_content(repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "one.jsonl"
    shutil.copy(CLAUDE, src)
    r = oxide(repo, "import", str(src))
    assert "Imported 5 message(s) in 1 session(s) from 1 file(s)" in r.stderr
    folder = tmp_path / "mixed"
    (folder / "deep").mkdir(parents=True)
    shutil.copy(FIXTURES / "codex" / "turns.jsonl", folder / "rollout.jsonl")
    shutil.copy(FIXTURES / "pi" / "basic.jsonl", folder / "deep" / "pi.jsonl")
    shutil.copy(FIXTURES / "aider" / "tokens.md", folder / ".aider.chat.history.md")
    (folder / "notes.jsonl").write_text('{"hello": "world"}\n')  # nobody's: left out
    out = json.loads(oxide(repo, "import", "--json", str(folder)).stdout)
    assert sorted((f["agent"], Path(f["path"]).name) for f in out["files"]) == [
        ("aider", ".aider.chat.history.md"), ("codex", "rollout.jsonl"), ("pi", "pi.jsonl")]
    assert out["problems"] == []
    agents = {s["agent"] for s in json.loads(oxide(repo, "list", "--all", "--json").stdout)}
    assert agents == {"aider", "claude", "codex", "pi"}


def test_a_file_no_agent_recognises_needs_agent(repo: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    r = oxide(repo, "import", str(notes), check=False)
    assert r.returncode == 1 and "not a transcript of an agent git oxide knows" in r.stderr
    assert "hint: " in r.stderr and "--agent NAME" in r.stderr
    r = oxide(repo, "import", str(tmp_path / "gone.jsonl"), check=False)
    assert r.returncode == 1 and "no such file or directory" in r.stderr
    r = oxide(repo, "import", "--agent", "gemini", str(FIXTURES / "qwen"))
    assert "Nothing to import: no gemini's session file in" in r.stderr


def test_a_file_stuck_as_another_agent_imports_as_the_right_one(repo: Path, tmp_path: Path) -> None:
    """A store made before the refusal: the file read as Codex's (one message, records of unknown
    types) answered `unchanged` to the right `--agent claude`."""
    src = tmp_path / "transcript.jsonl"
    shutil.copy(CLAUDE, src)
    stuck = import_sessions(make_ctx(repo), [("codex", src)])  # what `import --agent codex` did
    wrong = stuck.files[0].sessions
    assert len(wrong) == 1 and stuck.files[0].unknown
    r = oxide(repo, "import", "--agent", "claude", str(src))
    assert "Imported 5 message(s) in 1 session(s) from 1 file(s)" in r.stderr
    assert "unchanged" not in r.stderr
    assert f"was imported before as codex's, now as claude's; the codex session made then is left as it was " \
           f"(`git oxide rm {wrong[0]}` removes it)" in r.stderr
    _refs, sessions, cursors = stored(repo)
    assert sorted(a for _id, a, _n in sessions) == ["claude", "codex"]
    assert [(p, a) for p, a, _o in cursors] == [(str(src.resolve()), "claude")]  # the file's cursor: claude's
    again = oxide(repo, "import", "--agent", "claude", str(src))
    assert "1 file(s) unchanged" in again.stderr and "imported before" not in again.stderr
    oxide(repo, "rm", "--yes", wrong[0])  # the hint works
    assert [a for _id, a, _n in stored(repo)[1]] == ["claude"]


def test_two_sessions_left_are_named_for_rm_one_by_one(repo: Path, tmp_path: Path) -> None:
    from oxide_git.imports.report import FileReport, ImportReport

    report = ImportReport(files=[FileReport("claude", "t.jsonl", "new", earlier_agent="codex",
                                            earlier_sessions=["aaa", "bbb"])])
    assert report.earlier_warnings() == [
        "t.jsonl was imported before as codex's, now as claude's; the 2 codex sessions made then are left "
        "as they were (`git oxide rm ID` removes one: aaa, bbb)"]


def test_the_sniff_reads_a_head_only() -> None:
    """A first line longer than the head (a pasted image) is told by the keys it starts with; a
    compressed rollout and a database by their magic bytes; a file two agents claim is named so."""
    big = CLAUDE.read_bytes().split(b"\n")[0]
    big = big.replace(b'"Refactor app.py"', b'"' + b"x" * (HEAD_BYTES * 2) + b'"')
    assert [n for n in AGENT_NAMES if matches(n, big[:HEAD_BYTES])] == ["claude"]
    assert [n for n in AGENT_NAMES if matches(n, b"\x28\xb5\x2f\xfd rest")] == ["codex"]
    assert [n for n in AGENT_NAMES if matches(n, b"\0\1\2 binary")] == []


def matches(agent: str, data: bytes) -> bool:
    from oxide_git.agents.recognise import SNIFFERS

    return SNIFFERS[agent](Head(data))


def test_a_file_two_agents_claim_asks_for_agent(tmp_path: Path) -> None:
    both = tmp_path / "both.jsonl"
    both.write_bytes(FIXTURES.joinpath("pi", "basic.jsonl").read_bytes().split(b"\n")[0] + b"\n"
                     + CLAUDE.read_bytes())
    assert recognise(both) == ["claude", "pi"]
    with pytest.raises(OxideError) as e:
        import_paths.files(None, [both])
    assert "this looks like a Claude Code transcript and like a pi session" in e.value.message
    assert import_paths.files("pi", [both]) == [("pi", both)]  # named: either is taken
    assert recognise(tmp_path / "gone") == []
