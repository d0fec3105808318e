"""Live capture of a Copilot CLI session: the `watch` daemon observes `$COPILOT_HOME/session-state`
(``copilot.watch_roots``), imports each events.jsonl as it grows and checkpoints each new prompt."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, git, make_ctx, oxide, oxide_process
from tests.watch.test_watch import wait_for

SID = "01fbf44d-0f39-4b67-aab1-efc7e7ef9294"


@pytest.mark.process
def test_watch_imports_a_copilot_session_as_it_grows(repo: Path) -> None:
    lines = (FIXTURES / "copilot" / SID / "events.jsonl").read_bytes().replace(
        b"/tmp/copilot/proj", str(repo).encode()).splitlines(keepends=True)
    second = next(i for i, ln in enumerate(lines) if b'"type":"session.resume"' in ln)
    oxide(repo, "init")
    res = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)
    try:
        events = Path(os.environ["COPILOT_HOME"]) / "session-state" / SID / "events.jsonl"
        events.parent.mkdir(parents=True)  # the store appears after the watcher started
        events.write_bytes(b"".join(lines[:second]))

        def count() -> int:
            rows = make_ctx(repo).index.query("SELECT message_count FROM sessions WHERE native_id=?", (SID,))
            return int(rows[0][0]) if rows else 0

        wait_for(lambda: count() == 10)
        (repo / "README.md").write_text("edited while copilot ran\n")
        with events.open("ab") as f:
            f.write(b"".join(lines[second:]))
        wait_for(lambda: count() == 13)
        [sid] = [r[0] for r in make_ctx(repo).index.query("SELECT id FROM sessions WHERE native_id=?", (SID,))]
        cps = wait_for(lambda: [c for c in make_ctx(repo).index.checkpoint_rows(sid) if c["kind"] == "prompt"
                                and "PROMPT-2" in (c["message"] or "")])
        assert git(repo, "show", f"{cps[0]['id']}:README.md") == "edited while copilot ran\n"
    finally:
        out = json.loads(oxide(repo, "watch", "--stop", "--json").stdout)
    assert out["stopped"] and out["pid"] == res["pid"]
    listed = json.loads(oxide(repo, "list", "--agent", "copilot", "--json").stdout)
    assert [r["native_id"] for r in listed] == [SID]
    assert json.loads(oxide(repo, "list", "--agent", "claude", "--json").stdout) == []


@pytest.mark.process
def test_watch_ties_a_prompt_checkpoint_a_hook_took_before_the_session_file_existed(repo: Path) -> None:
    """The hook's prompt came before events.jsonl; the agent was killed before its stop hook: the
    running `watch` that imports the file ties the waiting checkpoint to the session."""
    from tests.hooks.test_agent_hooks_copilot import _assert_tied, _prompt_before_the_file, _write_events

    (Path(os.environ["COPILOT_HOME"]) / "session-state").mkdir(parents=True)
    untied = _prompt_before_the_file(repo)
    started = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)
    try:
        _write_events(repo)
        wait_for(lambda: not (make_ctx(repo).repo.worktree_dir / "pending-prompts.json").exists())
    finally:
        out = json.loads(oxide(repo, "watch", "--stop", "--json").stdout)
    assert out["stopped"] and out["pid"] == started["pid"]
    _assert_tied(repo, untied)
