"""`git oxide mcp` driven by the MCP SDK's own client over stdio, on a real store in a temporary
repository: the tools listed, each called, results redacted, bounded and paged with a cursor."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, make_ctx, oxide
from tests.planted import NEEDLES, PLANTED, claude_transcript
from tests.store.test_redact import _all_objects

pytestmark = pytest.mark.process

READ_TOOLS = {"search", "show_session", "blame", "checkpoints", "memory_read"}


def serve(repo: Path, calls: list[tuple[str, dict[str, Any]]], *, writes: bool = False
          ) -> tuple[dict[str, Any], list[Any]]:
    """Start `git oxide mcp` in ``repo`` with the SDK's client; (tools by name, each call's result:
    the parsed JSON, or ``("error", text)``)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    params = StdioServerParameters(command="git", args=["oxide", "mcp", *(["--allow-writes"] if writes else [])],
                                   cwd=str(repo), env=env)

    async def go() -> tuple[dict[str, Any], list[Any]]:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            init = await s.initialize()
            assert init.serverInfo.name == "git-oxide"
            listed = {t.name: t for t in (await s.list_tools()).tools}
            out: list[Any] = []
            for name, args in calls:
                follow, pages = bool(args.get("follow")), []
                while True:  # follow=True: every page, following next_cursor
                    res = await s.call_tool(name, {k: v for k, v in args.items() if k != "follow"})
                    text = res.content[0].text  # type: ignore[union-attr]
                    pages.append(("error", text) if res.isError else json.loads(text))
                    more = not res.isError and pages[-1].get("next_cursor")
                    if not (follow and more):
                        break
                    args = {"cursor": pages[-1]["next_cursor"], "follow": True}
                out.append(pages if follow else pages[0])
            return listed, out

    return anyio.run(go)


@pytest.fixture
def store(repo: Path, tmp_path: Path) -> dict[str, Any]:
    """A Claude Code session imported while redaction was off (its secrets are in git as they came),
    a long session with a compaction, two checkpoints, and a memory topic."""
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.imports.importing import import_sessions
    from oxide_git.store import writes as st

    oxide(repo, "init")
    git(repo, "config", "oxide.redact", "false")
    path = claude_transcript(tmp_path / "t.jsonl", str(repo), turns=2)
    claude = import_sessions(make_ctx(repo), [("claude", path)]).files[0].sessions[0]
    git(repo, "config", "--unset", "oxide.redact")
    ctx = make_ctx(repo)
    long = Session(id="0190000000000000000000000000beef", agent="codex", native_id="codex-long",
                   title="the long one", created_at=1_767_225_600_000, updated_at=1_767_225_700_000,
                   project_id=ctx.repo.project_id(), worktree=ctx.repo.worktree_id, branch="feature",
                   cwd=str(repo))
    msgs = []
    for i in range(60):
        if i == 40:
            msgs.append(Message("user", (Part.compaction("SUMMARY of messages zero to thirty-nine"),),
                                created_at=1_767_225_600_000 + i))
        elif i % 2:
            msgs.append(Message("assistant", (Part.text(f"answer {i} " + "word " * 1500),),
                                created_at=1_767_225_600_000 + i))
        else:
            msgs.append(Message("user", (Part.text(f"question {i} about the zanzibar parser"),),
                                created_at=1_767_225_600_000 + i))
    st.append(ctx, long, msgs)
    ctx.close()
    (repo / "src" / "app.py").write_text("print('one')\n")
    first = oxide(repo, "checkpoint", "-m", "first", "--session", claude).stdout.strip()
    (repo / "README.md").write_text("hello again\n")
    second = oxide(repo, "checkpoint", "-m", "second", "--session", claude).stdout.strip()
    oxide(repo, "memory", "add", "build", "make test runs the suite")
    return {"repo": repo, "claude": claude, "long": long.id, "first": first, "second": second}


def test_lists_the_tools_and_calls_each(store: dict[str, Any]) -> None:
    repo = store["repo"]
    listed, (hits, codex_hits, shown, cps, readme, memory) = serve(repo, [
        ("search", {"query": "deploy script"}),
        ("search", {"query": "zanzibar", "agent": "codex", "branch": "feature", "since": "2026-01-01"}),
        ("show_session", {"session": store["claude"][:10], "limit": 3}),
        ("checkpoints", {"session": store["claude"]}),
        ("checkpoints", {"path": str(repo / "README.md")}),
        ("memory_read", {}),
    ])
    assert set(listed) == READ_TOOLS  # read-only by default: no memory_add
    assert all(t.annotations.readOnlyHint for t in listed.values())
    from oxide_git.agents import AGENT_NAMES

    assert listed["search"].inputSchema["properties"]["agent"]["enum"] == list(AGENT_NAMES)
    assert {"claude", "codex", "opencode", "aider"} <= set(AGENT_NAMES)
    assert hits["results"] and {h["session_id"] for h in hits["results"]} == {store["claude"]}
    top = hits["results"][0]
    assert top["agent"] == "claude" and top["branch"] == "main" and "[deploy]" in top["snippet"]
    assert top["message_id"] and isinstance(top["seq"], int)
    assert {h["session_id"] for h in codex_hits["results"]} == {store["long"]}
    assert shown["session"]["id"] == store["claude"] and [m["seq"] for m in shown["messages"]] == [0, 1, 2]
    assert "please fix the deploy script" in shown["messages"][0]["text"] and "next_cursor" in shown
    assert [c["id"] for c in cps["checkpoints"]] == [store["second"], store["first"]]
    assert cps["checkpoints"][0]["message"] == "second"
    # README.md changed at the second checkpoint only (the first saw it as committed)
    assert [(c["id"], c["change"]) for c in readme["checkpoints"]] == [(store["second"], "modified")]
    assert memory["topics"] == ["build"] and "build" in memory["text"]


def test_results_are_redacted_as_exports_are(store: dict[str, Any]) -> None:
    """The session was stored with redaction off: the server redacts on the way out, as export."""
    _listed, results = serve(store["repo"], [
        ("search", {"query": "deploy"}),
        ("show_session", {"session": store["claude"], "full": True, "limit": 100}),
    ])
    text = json.dumps(results)
    assert PLANTED["openai_key"][1].encode() in _all_objects(store["repo"])  # in git as it came
    assert not [n for n in NEEDLES if n in text]
    assert "[REDACTED:openai_key]" in text
    assert results[1]["redactions"]["openai_key"] >= 1


def test_compaction_paging_and_the_size_bound(store: dict[str, Any]) -> None:
    from oxide_git.mcp.tools import MAX_CHARS

    sid = store["long"]
    _l, (latest, first, hit1) = serve(store["repo"], [
        ("show_session", {"session": sid}),
        ("show_session", {"session": sid, "start": 0, "limit": 100}),
        ("search", {"query": "zanzibar parser", "limit": 1}),
    ])
    # by default from the last compaction, whose summary stands for what came before
    assert latest["start"] == 40 and latest["messages"][0]["seq"] == 40
    assert "SUMMARY of messages zero" in latest["messages"][0]["text"] and "start=0" in latest["note"]
    assert latest["session"]["last_compaction"] == 40
    # long answers: the page stops at the size bound, not at the limit
    assert len(first["messages"]) < 100 and len(json.dumps(first)) < MAX_CHARS + 2_000
    _l, [pages, hits] = serve(store["repo"], [("show_session", {"session": sid, "start": 0, "follow": True}),
                                              ("search", {"query": "zanzibar parser", "limit": 1,
                                                          "follow": True})])
    assert all(isinstance(p, dict) and len(json.dumps(p)) < MAX_CHARS + 2_000 for p in pages), pages
    seen = [m["seq"] for p in pages for m in p["messages"]]
    assert seen == list(range(60)) and len(pages) > 2  # every message once, in order
    assert first["messages"][0]["compacted"] is True and "compacted" not in pages[-1]["messages"][-1]
    # 29 prompts hold the words (#40 is the compaction): one a page, each another, then no cursor
    assert [len(h["results"]) for h in hits] == [1] * 29 and "next_cursor" not in hits[-1]
    assert len({h["results"][0]["seq"] for h in hits}) == 29
    assert hits[0]["results"] == hit1["results"] and hits[1]["results"] != hit1["results"]


def test_memory_add_only_when_the_user_allows_writes(store: dict[str, Any]) -> None:
    repo = store["repo"]
    before = git(repo, "rev-parse", "refs/oxide/memory").strip()
    _l, [refused] = serve(repo, [("memory_add", {"topic": "style", "text": "tabs"})])
    assert refused[0] == "error" and "--allow-writes" in refused[1]
    assert git(repo, "rev-parse", "refs/oxide/memory").strip() == before
    listed, [added, read] = serve(repo, [("memory_add", {"topic": "style", "text": "four spaces"}),
                                         ("memory_read", {"topic": "style"})], writes=True)
    assert "memory_add" in listed and not listed["memory_add"].annotations.readOnlyHint
    assert added["topic"] == "style" and git(repo, "rev-parse", "refs/oxide/memory").strip() == added["commit"]
    assert "four spaces" in read["text"] and read["topics"] == ["build", "style"]


def test_errors_say_what_and_the_server_goes_on(store: dict[str, Any], tmp_path: Path) -> None:
    from oxide_git.mcp.tools import make_cursor

    forged = make_cursor("checkpoints", offset="ten", limit=5, session=None, path=None)
    _l, (unknown, bad_cursor, made_up, bad_date, outside, fine) = serve(store["repo"], [
        ("show_session", {"session": "nosuchsession"}),
        ("show_session", {"cursor": "bm90IGEgY3Vyc29y"}),
        ("checkpoints", {"cursor": forged}),
        ("search", {"query": "deploy", "since": "last tuesday"}),
        ("checkpoints", {"path": str(tmp_path)}),
        ("search", {"query": "deploy"}),
    ])
    assert unknown == ("error", "error: session nosuchsession not found\n"
                                "hint: run `git oxide list --all` to see sessions")
    assert bad_cursor[0] == "error" and "cursor" in bad_cursor[1]
    assert made_up == ("error", "error: this cursor was not given by checkpoints\n"
                                "hint: pass next_cursor of an earlier checkpoints result, unchanged")
    assert bad_date[0] == "error" and "ISO 8601" in bad_date[1]
    assert outside[0] == "error" and "outside this repository" in outside[1]
    assert fine["results"]  # still serving


def test_a_repository_without_oxide_gets_an_error_not_a_store(tmp_path: Path) -> None:
    from tests.conftest import new_repo

    repo = new_repo(tmp_path / "plain")
    _l, [res] = serve(repo, [("search", {"query": "x"})])
    assert res[0] == "error" and "git oxide init" in res[1]
    assert not (repo / ".git" / "oxide").exists()  # a read-only server creates nothing
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    _l, [res] = serve(nowhere, [("search", {"query": "x"})])  # started outside any repository
    assert res[0] == "error" and res[1].startswith("error: not a git repository"), res


def test_blame_names_the_session_and_prompt_of_each_line(repo: Path) -> None:
    from tests.blame_helpers import Clock, FakeAgent, human_edit

    oxide(repo, "init")
    clock = Clock()
    sid = "0" * 12 + "c" * 20
    agent = FakeAgent(repo, clock, sid)
    p1 = agent.prompt("write the notes file please")
    agent.write("notes.txt", "alpha\nbeta\n")
    agent.say("done")
    human_edit(repo, clock, "notes.txt", "alpha\nbeta\nmine\n")
    agent.prompt("nothing more")
    _l, [whole, pages] = serve(repo, [("blame", {"path": "notes.txt"}),
                                      ("blame", {"path": str(repo / "notes.txt"), "limit": 1, "follow": True})])
    assert [(ln["number"], ln["text"], ln["who"]) for ln in whole["lines"]] == [
        (1, "alpha", "agent"), (2, "beta", "agent"), (3, "mine", "human")]
    first = whole["lines"][0]
    assert sid.startswith(first["session_id"]) and first["message_id"] == p1 and first["agent"] == "claude"
    assert whole["prompts"][p1]["prompt"] == "write the notes file please"
    assert whole["prompts"][p1]["session_id"] == sid and whole["total_lines"] == 3
    assert "next_cursor" not in whole
    assert all(isinstance(p, dict) for p in pages), pages
    assert [[ln["number"] for ln in p["lines"]] for p in pages] == [[1], [2], [3]]
    assert pages[2]["prompts"] == {} and pages[2]["lines"][0]["who"] == "human"  # no prompt behind it


def test_the_command_without_the_fast_path_and_its_help(repo: Path) -> None:
    """`git oxide mcp` runs without click (the console script's fast path); click's command serves
    the same way, and `-h` goes to click."""
    import subprocess

    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    r = subprocess.run([sys.executable, "-c", "from oxide_git.cli import main; main(['mcp'])"], cwd=repo,
                       env=env, input=init + "\n", capture_output=True, text=True, timeout=60)
    assert json.loads(r.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "git-oxide"
    h = oxide(repo, "mcp", "-h").stdout
    assert "--allow-writes" in h and "stdio" in h
    bad = oxide(repo, "mcp", "--bogus", check=False)
    assert bad.returncode == 2 and "No such option" in bad.stderr


def test_arguments_outside_a_tools_schema_are_refused_as_the_sdk_would(store: dict[str, Any]) -> None:
    """The server checks arguments itself (the SDK's check imports jsonschema at every start):
    each rule the tools' schemas use, said as the SDK says it, and the server goes on."""
    _l, results = serve(store["repo"], [
        ("search", {"query": 5}), ("search", {"query": "x", "limit": 0}), ("search", {"query": "x", "limit": 51}),
        ("search", {"query": "x", "agent": "nobody"}), ("search", {"query": "x", "colour": "red"}),
        ("show_session", {"session": "x", "full": 1}), ("search", {"query": "deploy", "limit": 2.0}),
    ])
    *bad, fine = results
    for got, words in zip(bad, ("5 is not of type 'string'", "0 is less than the minimum of 1",
                                "51 is greater than the maximum of 50", "'nobody' is not one of",
                                "('colour' was unexpected)", "1 is not of type 'boolean'"), strict=True):
        assert got[0] == "error" and got[1].startswith("Input validation error: ") and words in got[1], got
    assert fine["results"]


def test_the_argument_check_agrees_with_jsonschema() -> None:
    """Same verdict as the SDK's validator (jsonschema) on every tool's schema, over valid and
    invalid arguments of each kind."""
    import jsonschema

    from oxide_git.mcp.tools import check_arguments, tools

    samples: list[Any] = ["x", "", 0, 1, 2.0, 2.5, -1, 10_000, True, False, None, [], {}, "claude"]
    for tool in tools(allow_writes=True):
        props = tool.schema["properties"]
        cases: list[dict[str, Any]] = [{}, {"unexpected": 1}]
        cases += [{k: v} for k in props for v in samples]
        cases += [{k: "x" for k in tool.schema.get("required", [])}]
        for args in cases:
            try:
                jsonschema.validate(instance=args, schema=tool.schema)
                expected = None
            except jsonschema.ValidationError as e:
                expected = e.message
            got = check_arguments(tool.schema, args)
            assert (got is None) == (expected is None), (tool.name, args, got, expected)


def test_an_unexpected_failure_is_logged_and_the_server_goes_on(repo: Path) -> None:
    """A tool that fails on something git oxide did not foresee (here an object of the memory lost
    from the object store) answers with an error naming the log, which holds the traceback; the
    server answers the next calls."""
    oxide(repo, "init")
    oxide(repo, "memory", "add", "build", "make test runs the suite")
    lost = git(repo, "rev-parse", "refs/oxide/memory:MEMORY.md").strip()
    (repo / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    _l, [broken, again, other] = serve(repo, [("memory_read", {}), ("memory_read", {"topic": "build"}),
                                              ("checkpoints", {})])
    log = repo / ".git" / "oxide" / "oxide.log"
    assert broken == ("error", f"error: unexpected error in git oxide (details in {log})")
    assert again == broken  # another topic too (the memory is read whole): nothing half-read kept
    assert other == {"checkpoints": [], "total": 0}  # ...and the server still serves the others
    assert f"KeyError: {lost}" in log.read_text() and "Traceback" in log.read_text()
