"""`git oxide usage` on what the real agents recorded (issue 35): for each agent the suite drives,
the session's row of `usage --by session --json` equals the sum of the agent's own usage records,
read here straight from the files (or database) the agent wrote, each response once.

The model server gives every answer figures of its own (``ModelServer(distinct_usage=True)``:
input with a cached share, output with a reasoning share, an Anthropic cache write), so a response
counted twice, or one left out, changes the sum. The figures the server sent are in its log
(``usage``): a failure's message names them too, to tell whether the agent or oxide is off.

The readers below are the agents' formats read on their own terms (not oxide's importers): what
each wrote when these tests were made, confirmed on the files of a real run.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ops import test_usage as fixtures_usage

from . import checks
from .conftest import make_driver
from .driver import AGENTS, PROMPT2, Driver
from .modelserver import ModelServer

Tokens = tuple[int, int, int, int]  # input (neither read from nor written to a cache), output, cache read, cache write
ARTIFACTS = os.environ.get("OXIDE_COMPAT_ARTIFACTS")  # where a run leaves its usage table, when set
RESUMED = ("claude", "codex")  # a second turn through the agent's own resume (a new process)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    srv = ModelServer({}, log_path=tmp_path / "requests.jsonl", distinct_usage=True).start()
    try:
        yield srv
    finally:
        srv.stop()


def _add(a: Tokens, b: Tokens) -> Tokens:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


def _opencode(d: Driver, native: str) -> Tokens:
    """OpenCode 1.18's database: a message's ``data`` holds ``tokens`` (input without the cache
    read, output, reasoning apart, cache read/write), assistant messages only."""
    out: Tokens = (0, 0, 0, 0)
    db = sqlite3.connect(f"file:{d.db()}?mode=ro", uri=True)
    try:
        for (data,) in db.execute("SELECT data FROM message WHERE session_id=?", (native,)):
            m = json.loads(data)
            t = m.get("tokens")
            if m.get("role") == "assistant" and isinstance(t, dict):
                out = _add(out, (t["input"], t["output"] + t.get("reasoning", 0), t["cache"]["read"],
                                 t["cache"]["write"]))
    finally:
        db.close()
    return out


def own_records(d: Driver, native: str) -> Tokens:
    """The sum of what ``d``'s agent recorded for session ``native``, from its own files."""
    name = d.name
    if name == "claude":
        return fixtures_usage.raw_claude(d.session_file(native))
    if name == "codex":
        return fixtures_usage.raw_codex(d.session_file(native))
    if name == "opencode":
        return _opencode(d, native)
    if name == "aider":
        return fixtures_usage.raw_aider(d.history())[0]
    if name == "copilot":
        return fixtures_usage.raw_copilot(d.session_file(native))
    if name == "cline":
        return fixtures_usage.raw_cline(d.sessions() / native)[0]
    if name == "pi":
        return fixtures_usage.raw_pi(d.session_file(native))
    if name == "gemini":
        return fixtures_usage.raw_gemini(d.session_file(native).parent)
    if name == "qwen":
        return fixtures_usage.raw_qwen(d.session_file(native).parent)
    raise AssertionError(f"no reader for {name}")


def _served(srv: ModelServer) -> list[dict[str, Any]]:
    return [{"scripted": r.get("scripted"), **r["usage"]} for r in srv.requests() if r.get("usage")]


def served_tokens(agent: str, served: list[dict[str, Any]]) -> Tokens:
    """What the server sent the scripted requests (those the agents record; none of them kept a
    side request's usage in these runs), in the four counts: Claude Code's record keeps the
    Anthropic API's cache write apart, the other APIs have none; Aider's names no cache hit of an
    OpenAI-style answer, so its input is the whole prompt."""
    out: Tokens = (0, 0, 0, 0)
    for u in (u for u in served if u["scripted"]):
        if agent == "claude":
            t = (u["prompt"] - u["cached"] - u["written"], u["output"], u["cached"], u["written"])
        elif agent == "aider":
            t = (u["prompt"], u["output"], 0, 0)
        else:
            t = (u["prompt"] - u["cached"], u["output"], u["cached"], 0)
        out = _add(out, t)
    return out


@pytest.mark.parametrize("agent", AGENTS)
def test_usage_is_the_agents_own_records(agent: str, compat_repo: Path, server: ModelServer) -> None:
    d = make_driver(agent, compat_repo, server)
    native = d.run().check().native_id
    if agent in RESUMED:
        assert native
        d.resume(native, PROMPT2).check()
    checks.oxide(compat_repo, "import")
    [row] = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == agent]
    sid = row["id"]
    own = own_records(d, native or row["native_id"])
    got = [r for r in checks.oxide_json(compat_repo, "usage", "--by", "session") if r["session"] == sid]
    served = _served(server)
    if ARTIFACTS:
        folder = Path(ARTIFACTS)
        folder.mkdir(parents=True, exist_ok=True)
        table = checks.oxide(compat_repo, "usage", "--by", "agent").stdout
        (folder / f"usage-{agent}.txt").write_text(table)
        (folder / f"usage-{agent}.json").write_text(json.dumps(
            {"agent": agent, "version": d.pin.version, "own_records": own, "oxide": got,
             "served": served}, indent=1))
    checks.record({"check": "usage", "agent": agent, "version": d.pin.version, "own_records": own,
                   "oxide": [(r["input_tokens"], r["output_tokens"], r["cache_read_tokens"],
                              r["cache_write_tokens"]) for r in got]})
    why = f"{agent}: oxide {got}, the agent's own records {own}, the server sent {served}"
    if not any(own):
        assert got == [], why  # the agent recorded no usage: none is made up
        return
    [mine] = got
    assert (mine["input_tokens"], mine["output_tokens"], mine["cache_read_tokens"],
            mine["cache_write_tokens"]) == own, why
    assert mine["agent"] == agent
    # and the agent's records (so both sums) are what the server sent: a reader of the agent's
    # format that shares a mistake with oxide's (as Copilot CLI's cached share once) shows here
    assert own == served_tokens(agent, served), why


def test_aider_with_an_anthropic_model_counts_the_cache_once(compat_repo: Path, server: ModelServer) -> None:
    """Aider's line for an Anthropic answer names a cache hit and write, which its ``sent`` also
    holds (the write twice): each token counts once, as the server sent it."""
    d = make_driver("aider", compat_repo, server)
    d.run_anthropic("AIDER-ANTHROPIC: just say hello.").check()
    checks.oxide(compat_repo, "import")
    [row] = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == "aider"]
    [u] = _served(server)
    assert "cache hit" in d.history().read_text()
    own = own_records(d, row["native_id"])
    got = [r for r in checks.oxide_json(compat_repo, "usage", "--by", "session") if r["session"] == row["id"]]
    why = f"oxide {got}, Aider's own records {own}, the server sent {u}"
    assert own == (u["prompt"] - u["cached"] - u["written"], u["output"], u["cached"], u["written"]), why
    [mine] = got
    assert (mine["input_tokens"], mine["output_tokens"], mine["cache_read_tokens"],
            mine["cache_write_tokens"]) == own, why
