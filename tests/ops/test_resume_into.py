"""Resume into each agent, then import what was written: the same session comes back unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.agents import FoundSession, agent
from oxide_git.imports.importing import import_sessions
from oxide_git.imports.paths import expand
from oxide_git.ops.resume import into
from oxide_git.store import sessionlog
from tests.conftest import FIXTURES, configure_opencode_model, make_ctx, oxide

# How each agent continues a session: the command's first two words.
RESUMES = {"claude": ["claude", "--resume"], "codex": ["codex", "resume"], "opencode": ["opencode", "--session"],
           "aider": ["aider", "--restore-chat-history"], "copilot": ["copilot", "--resume"],
           "pi": ["pi", "--session"]}
CASES = {
    "claude": FIXTURES / "claude" / "split_response.jsonl",
    "codex": FIXTURES / "codex" / "turns.jsonl",
    "opencode": FIXTURES / "opencode" / "export",
    "aider": FIXTURES / "aider" / "tokens.md",
    "copilot": FIXTURES / "copilot" / "01fbf44d-0f39-4b67-aab1-efc7e7ef9294",
    "pi": FIXTURES / "pi" / "basic.jsonl",
}


def _import(ctx, agent: str, path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    report = import_sessions(ctx, expand(agent, [path]))
    return [s for f in report.files for s in f.sessions]


def _semantic(r, log):  # type: ignore[no-untyped-def]
    out = []
    for _, m in sessionlog.iter_messages(r, log.commit.tree):
        parts = [(p.type, p.get("text"), p.get("call_id"), p.get("name"), p.get("input"), p.get("output"),
                  p.get("is_error"), p.get("summary")) for p in m.parts if p.type != "other"]
        out.append((m.role, m.native_id, parts))
    return out


@pytest.mark.parametrize("agent", sorted(CASES))
def test_round_trip_through_the_agents_own_store(repo: Path, agent: str) -> None:
    ctx = make_ctx(repo)
    src = CASES[agent]
    if agent == "aider":  # aider keeps its history at the worktree top
        (repo / ".aider.chat.history.md").write_bytes(src.read_bytes())
        src = repo / ".aider.chat.history.md"
    sid = _import(ctx, agent, src)[0]
    r = ctx.repo
    before = sessionlog.load(r, sid)
    res = into(ctx, sid, agent)
    assert res.command[:2] == RESUMES[agent]
    if agent != "aider":  # aider has no session ids: it restores the chat history file
        assert res.command[2:] == [res.native_id]
    assert res.written or res.kept
    written = [Path(p) for p in res.written + res.kept]
    if agent == "opencode":  # OpenCode 1.18: the rows written into opencode.db
        written = [p for p in written if p.name == "opencode.db"]
    if agent == "aider":
        # the agent's own file now holds the original sessions and the restored copy
        written = [repo / ".aider.chat.history.md"]
    ids = []
    for p in written:
        ids += _import(make_ctx(repo), agent, p)
    if agent != "aider":
        assert sid in ids  # the agent's file reads back as the same session
    after = sessionlog.load(r, sid)
    if agent != "aider":
        # Same messages and parts (an exporter may re-link native parent pointers, nothing else).
        assert _semantic(r, after) == _semantic(r, before)
        assert after.count == before.count
    else:
        # What oxide wrote into the history is that session, never a new one (issue 13, item 10).
        copies = [i for i in ids if i != sid]
        assert not copies, "the section oxide wrote was imported as a session of its own"
        assert after.count == before.count


@pytest.mark.parametrize("target", ["claude", "codex", "opencode", "aider", "copilot", "pi"])
def test_cross_agent_resume_writes_a_readable_session(repo: Path, target: str) -> None:
    ctx = make_ctx(repo)
    sid = _import(ctx, "codex", CASES["codex"])[0]
    if target == "opencode":
        configure_opencode_model()
    res = into(ctx, sid, target)
    assert res.written
    found, ids = [], []
    for p in res.written:
        if target == "opencode" and not p.endswith("opencode.db"):
            continue
        found += [e for e in agent(target).parse(Path(p)) if isinstance(e, FoundSession)]
        ids += _import(make_ctx(repo), target, Path(p))
    assert found, f"{target} could not read back what we wrote"
    assert [i for i in ids if i != sid] == [], "importing what oxide wrote made a new session of it"
    out = oxide(repo, "resume", sid, "--into", target)
    cd, _, command = out.stdout.strip().partition(" && ")
    assert cd == f"cd {repo}" and command.split()[:2] == RESUMES[target]


def test_resume_into_never_overwrites_what_the_agent_wrote_since(repo: Path) -> None:
    """The agent went on after a resume: a second resume keeps its file as it is."""
    sid = _import(make_ctx(repo), "codex", CASES["codex"])[0]
    first = into(make_ctx(repo), sid, "claude")
    [path] = [Path(p) for p in first.written]
    grown = path.read_bytes() + b'{"type":"user","note":"the agent went on"}\n'
    path.write_bytes(grown)
    again = into(make_ctx(repo), sid, "claude")
    assert again.written == [] and again.kept == [str(path)]
    assert path.read_bytes() == grown


def test_a_pi_file_with_branches_the_store_has_not_seen_is_kept(repo: Path) -> None:
    """pi keeps in-place branches in the session's own file: a branch added since the last import
    is the agent going on (the file is kept); once imported, resuming the session writes it and
    sets the file, branches and all, aside."""
    import os

    lines = (FIXTURES / "pi" / "tree.jsonl").read_bytes().replace(b"/home/dev/proj", str(repo).encode())
    folder = Path(os.environ["HOME"]) / ".pi" / "agent" / "sessions" / ("--" + str(repo)[1:].replace("/", "-") + "--")
    folder.mkdir(parents=True)
    path = folder / "2026-12-01T22-09-27-646Z_01a233a7-d85e-75d4-b658-68935167949d.jsonl"
    first = b"".join(lines.splitlines(True)[:20])  # the session and the start of its first branch
    path.write_bytes(first)
    oxide(repo, "import")
    sid = make_ctx(repo).index.resolve_session("01a233a7-d85e-75d4-b658-68935167949d")
    path.write_bytes(lines)  # pi went on: the first branch grew, a second one began
    kept = into(make_ctx(repo), sid, "pi")
    assert kept.written == [] and kept.kept == [str(path)] and path.read_bytes() == lines
    oxide(repo, "import")
    written = into(make_ctx(repo), sid, "pi")
    assert written.written == [str(path)] and Path(written.set_aside[0]).read_bytes() == lines
    assert len(path.read_bytes().splitlines()) == 13  # the session alone: pi continues its last entry


def test_into_opencode_on_its_first_run_is_refused_before_anything_is_written(repo: Path) -> None:
    """Issue 37: no model configured (OpenCode never ran here): refused with the fix, no database
    made; once a model is configured the same command writes the session under that model."""
    import json
    import os
    import sqlite3
    from contextlib import closing

    ctx = make_ctx(repo)
    sid = _import(ctx, "codex", CASES["codex"])[0]
    data = Path(os.environ["XDG_DATA_HOME"]) / "opencode"
    r = oxide(repo, "resume", sid, "--into", "opencode", check=False)
    assert r.returncode == 1 and r.stderr.startswith("error: OpenCode has no model configured")
    assert "hint: set \"model\": \"<provider>/<model>\" in" in r.stderr and "Traceback" not in r.stderr
    assert not (data / "opencode.db").exists()
    configure_opencode_model("fake/fake-model")
    res = into(make_ctx(repo), sid, "opencode")
    [db] = [p for p in res.written if p.endswith("opencode.db")]
    with closing(sqlite3.connect(db)) as conn:
        users = [json.loads(d) for (d,) in conn.execute("SELECT data FROM message")]
    assert {json.dumps(u.get("model")) for u in users if u["role"] == "user"} == {
        json.dumps({"providerID": "fake", "modelID": "fake-model"})}
