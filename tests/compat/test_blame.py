"""`git oxide blame` on what real agents did (issue 16): an agent writes and edits a file over two
turns, the user edits it between the two turns and adds a file of their own, the second turn moves
a line; every line must be attributed right, in the worktree, once committed (the git hooks' note)
and after an amend.

Each agent is captured the way its users capture it: Claude Code by its own hooks
(`init --agent-hooks claude`: a prompt checkpoint as each prompt is submitted), Codex by `watch`
(which sees a prompt only once Codex has written it, so its checkpoint can come after the turn's
first edits: the tool calls' times say which interval they ran in). The exactness table goes to
the compatibility results (``python -m tests.compat.report``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from . import checks
from .conftest import make_driver
from .driver import Driver
from .modelserver import ModelServer, Turn

AGENTS = ("claude", "codex")
PROMPT2 = "BLAME-2: move alpha to the end of notes.txt."
FIRST = "alpha\nbeta\ngamma\n"
MOVED_OLD = "alpha\nBETA\ngamma\nhuman line\n"
MOVED_NEW = "BETA\ngamma\nhuman line\nalpha\n"


def _script(d: Driver) -> dict[str, list[Turn]]:
    notes = d.repo / "notes.txt"
    if d.name == "codex":
        def patch(body: str) -> Turn:
            return Turn.tool("apply_patch", {"input": f"*** Begin Patch\n{body}*** End Patch\n"})
        one = [patch("*** Add File: notes.txt\n" + "".join(f"+{x}\n" for x in FIRST.splitlines())),
               patch("*** Update File: notes.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n")]
        two = [patch("*** Update File: notes.txt\n@@\n-alpha\n BETA\n gamma\n human line\n+alpha\n")]
    else:
        one = [Turn.write(str(notes), FIRST), Turn.edit(str(notes), "beta", "BETA")]
        # Claude Code edits only a file it has read since it last changed (the user changed it)
        two = [Turn.tool("Read", {"file_path": str(notes)}), Turn.edit(str(notes), MOVED_OLD, MOVED_NEW)]
    return {d.marker: [Turn.shell("echo from-shell | tee shell.txt"), *one, Turn.say("Done with one.")],
            "BLAME-2": [*two, Turn.say("Done with two.")]}


def wait_for(what: str, ok: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def prompt_checkpoints(repo: Path) -> list[dict[str, Any]]:
    return [c for c in checks.oxide_json(repo, "checkpoints") if c.get("kind") == "prompt"]


def prompt_ids(repo: Path, sid: str, markers: tuple[str, ...] = ("PROMPT-1", "BLAME-2")) -> list[str]:
    """The ids of the session's user messages that hold one of ``markers`` (the scripted prompts)."""
    shown = checks.show(repo, sid)
    return [m["id"] for m in shown["messages"] if m["role"] == "user"
            and any(k in "\n".join(checks.texts(m, "text")) for k in markers)]


def blame_lines(repo: Path, rel: str, *extra: str) -> list[dict[str, Any]]:
    return list(json.loads(checks.oxide(repo, "blame", rel, "--json", *extra).stdout)["lines"])


def score(agent: str, version: str, case: str, got: list[dict[str, Any]],
           want: list[tuple[str, str, str | None]], session: str, prompts: list[str]) -> list[str]:
    """Each line against what it should be (text, who, which prompt); returns the misses."""
    misses = []
    for ln, (text, who, prompt) in zip(got, want, strict=False):
        expect_msg = prompts[0] if prompt == "1" else prompts[1] if prompt == "2" else None
        fine = (ln["text"] == text and ln["who"] == who
                and (who != "agent" or (session.startswith(ln["session_id"] or "-") and ln["agent"] == agent
                                        and ln["message_id"] == expect_msg)))
        if not fine:
            misses.append(f"{case}: line {ln['number']} {ln['text']!r} is {ln['who']} "
                          f"({ln['session_id']}, {ln['message_id']}), expected {who} of prompt {prompt}")
    if len(got) != len(want):
        misses.append(f"{case}: {len(got)} lines, expected {len(want)}")
    correct = len(want) - len(misses) if len(got) == len(want) else 0
    checks.record({"check": "blame", "agent": agent, "version": version, "case": case,
                   "lines": len(want), "correct": max(correct, 0)})
    return misses


NOTES = [("BETA", "agent", "1"), ("gamma", "agent", "1"), ("human line", "human", None), ("alpha", "agent", "2")]
SHELL = [("from-shell", "agent", "1")]
MINE = [("typed by the user", "human", None)]


def two_turns(agent: str, repo: Path, server: ModelServer) -> tuple[Driver, str, list[str]]:
    """The scenario: the agent's first turn writes notes.txt (and shell.txt), the user adds a line
    to it and writes mine.txt, the second turn moves a line; captured as its users capture it,
    then imported. (the driver, oxide's session id, the ids of the two prompts)."""
    d = make_driver(agent, repo, server)
    server.script.update(_script(d))
    watching = agent != "claude"
    if watching:
        checks.oxide(repo, "init")
        checks.oxide(repo, "checkpoint", "-m", "the worktree before this session")  # an earlier state
        checks.oxide(repo, "watch", "--daemon")
        wait_for("watch to start", lambda: (repo / ".git" / "oxide" / "watch.pid").exists())
    else:
        checks.oxide(repo, "init", "--agent-hooks", "claude")
    try:
        first = d.run().check()
        native = first.native_id
        assert native, first.stdout[-2000:]
        if watching:
            wait_for("watch's checkpoint of the first prompt", lambda: len(prompt_checkpoints(repo)) >= 1)
        assert (repo / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
        time.sleep(0.05)  # the user edits after the turn (a later millisecond than its last call)
        with open(repo / "notes.txt", "a") as f:
            f.write("human line\n")
        (repo / "mine.txt").write_text("typed by the user\n")
        d.resume(native, PROMPT2).check()
        if watching:
            wait_for("watch's checkpoint of the second prompt", lambda: len(prompt_checkpoints(repo)) >= 2)
    finally:
        if watching:
            checks.oxide(repo, "watch", "--stop", check=False)
    assert (repo / "notes.txt").read_text() == MOVED_NEW
    checks.oxide(repo, "import")
    [row] = [r for r in checks.oxide_json(repo, "list", "--all") if r["agent"] == agent]
    sid = row["id"]
    prompts = prompt_ids(repo, sid)
    assert len(prompts) == 2, prompts
    return d, sid, prompts


def commit_with_hooks(repo: Path, sid: str, message: str) -> None:
    """The three files committed with oxide's git hooks installed (a pre-commit checkpoint, the
    commit's note), on the session ``sid``; returns once the hooks' background work is done."""
    checks.oxide(repo, "hooks", "install")
    checks.oxide(repo, "switch", sid)
    git(repo, "add", "notes.txt", "shell.txt", "mine.txt")
    git(repo, "commit", "-q", "-m", message)
    idle(repo)


@pytest.mark.parametrize("agent", AGENTS)
def test_every_line_is_attributed_right(agent: str, compat_repo: Path, model_server) -> None:
    d, sid, prompts = two_turns(agent, compat_repo, model_server)
    version = d.pin.version
    misses: list[str] = []
    for case, rel, want in (("worktree notes.txt", "notes.txt", NOTES), ("worktree shell.txt", "shell.txt", SHELL),
                            ("worktree mine.txt", "mine.txt", MINE)):
        misses += score(agent, version, case, blame_lines(compat_repo, rel), want, sid, prompts)
    # committed with the git hooks (a pre-commit checkpoint and a note), then amended
    commit_with_hooks(compat_repo, sid, "the agent's work and mine")
    misses += score(agent, version, "committed notes.txt", blame_lines(compat_repo, "notes.txt"), NOTES, sid, prompts)
    git(compat_repo, "commit", "-q", "--amend", "-m", "the agent's work and mine (amended)")
    idle(compat_repo)
    misses += score(agent, version, "amended notes.txt", blame_lines(compat_repo, "notes.txt", "--rev", "HEAD"),
                     NOTES, sid, prompts)
    misses += score(agent, version, "amended shell.txt", blame_lines(compat_repo, "shell.txt"), SHELL, sid, prompts)
    assert not misses, "\n".join(misses) + "\n" + diagnosis(compat_repo, sid)


def diagnosis(repo: Path, sid: str, rel: str = "notes.txt", *extra: str) -> str:
    """What blame went by, for a failure's message: the checkpoints and the calls, with times."""
    out = ["checkpoints:"]
    for c in sorted(checks.oxide_json(repo, "checkpoints"), key=lambda c: str(c.get("created_at"))):
        out.append(f"  {c.get('created_at')} {c.get('kind')} {str(c.get('id'))[:8]} {c.get('message')}")
    out.append("messages:")
    for m in checks.show(repo, sid)["messages"]:
        tools = [p.get("name") or p.get("call_id") for p in m["parts"] if p["type"] in ("tool_call", "tool_result")]
        out.append(f"  {m['created_at']} {m['role']} {tools}")
    out.append(checks.oxide(repo, "blame", "--porcelain", rel, *extra).stdout)
    return "\n".join(out)


def git(repo: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def idle(repo: Path) -> None:
    from oxide_git.hooks.queue import wait_idle

    assert wait_idle(repo / ".git", 60)
