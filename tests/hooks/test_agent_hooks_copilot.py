"""Copilot CLI's hooks: our own `.github/hooks/oxide.json`, or the per-machine settings.local.json
merged and restored, and what the hook commands do with Copilot's payloads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oxide_git.hooks import agent_hooks_copilot as hooks
from tests.conftest import FIXTURES, make_ctx, oxide

SID = "01fbf44d-0f39-4b67-aab1-efc7e7ef9294"


def test_portable_hooks_are_a_file_of_their_own(repo: Path) -> None:
    out = oxide(repo, "init", "--agent-hooks", "copilot")  # git-oxide is on the PATH `oxide` runs with
    path = repo / ".github" / "hooks" / "oxide.json"
    assert str(path) in out.stderr + out.stdout
    got = json.loads(path.read_text())
    assert got["version"] == 1
    assert {e: [h["bash"] for h in hs] for e, hs in got["hooks"].items()} == {
        "userPromptSubmitted": ["git oxide agent-hook copilot prompt"],
        "agentStop": ["git oxide agent-hook copilot stop"],
        "subagentStop": ["git oxide agent-hook copilot stop"],
        "sessionEnd": ["git oxide agent-hook copilot stop"]}
    oxide(repo, "init", "--agent-hooks", "copilot")  # idempotent
    assert json.loads(path.read_text()) == got
    oxide(repo, "init", "--agent-hooks", "copilot", "--remove")
    assert not path.exists()


def test_without_git_oxide_on_path_they_go_in_the_per_machine_settings(repo: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nowhere")
    local = repo / ".github" / "copilot" / "settings.local.json"
    local.parent.mkdir(parents=True)
    mine = {"model": "gpt-5.4", "hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}}
    local.write_text(json.dumps(mine))
    done = hooks.configure(repo)
    assert any("per-machine" in d for d in done)
    got = json.loads(local.read_text())
    assert got["model"] == "gpt-5.4"
    assert got["hooks"]["agentStop"][0] == mine["hooks"]["agentStop"][0]
    ours = got["hooks"]["userPromptSubmitted"][0]["bash"]
    assert ours.startswith(sys.executable) and ours.endswith("-m oxide_git.agent_hooks copilot prompt")
    assert not (repo / ".github" / "hooks" / "oxide.json").exists()  # never the shared folder
    hooks.configure(repo)
    assert json.loads(local.read_text()) == got
    hooks.configure(repo, remove=True)
    assert json.loads(local.read_text()) == mine


def test_broken_local_settings_are_refused_and_left_as_they_are(repo: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nowhere")
    local = repo / ".github" / "copilot" / "settings.local.json"
    local.parent.mkdir(parents=True)
    local.write_text("{not json")
    from oxide_git.core.errors import OxideError

    with pytest.raises(OxideError, match="not valid JSON"):
        hooks.configure(repo)
    assert local.read_text() == "{not json"


def _hook(cwd: Path, action: str, payload: dict) -> subprocess.CompletedProcess[str]:  # type: ignore[type-arg]
    return subprocess.run([sys.executable, "-m", "oxide_git.agent_hooks", "copilot", action], cwd=cwd,
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60)


def test_the_hooks_import_the_session_and_checkpoint_each_prompt(repo: Path) -> None:
    oxide(repo, "init")
    lines = (FIXTURES / "copilot" / SID / "events.jsonl").read_bytes().replace(
        b"/tmp/copilot/proj", str(repo).encode()).splitlines(keepends=True)
    events = Path(os.environ["COPILOT_HOME"]) / "session-state" / SID / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_bytes(lines[0])  # what Copilot has written when userPromptSubmitted runs
    (repo / "README.md").write_text("before the prompt\n")
    base = {"sessionId": SID, "timestamp": 1796162851900, "cwd": str(repo)}
    r = _hook(repo, "prompt", {**base, "prompt": "COPILOT-PROMPT-1: make shell.txt"})
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    [sid] = [x[0] for x in ctx.index.query("SELECT id FROM sessions WHERE native_id=?", (SID,))]
    cps = ctx.index.checkpoint_rows(sid)
    assert [c["kind"] for c in cps] == ["prompt"] and cps[0]["message"] == "COPILOT-PROMPT-1: make shell.txt"
    stop = {**base, "transcriptPath": str(events), "stopReason": "end_turn"}
    events.write_bytes(b"".join(lines) + _hook_start("agentStop", stop))
    r = _hook(repo, "stop", stop)
    assert r.returncode == 0 and r.stdout == ""
    ctx = make_ctx(repo)
    assert ctx.index.query("SELECT message_count FROM sessions WHERE id=?", (sid,))[0][0] == 13
    assert (ctx.repo.worktree_dir / "current-session").read_text().strip() == sid
    log = ctx.repo.oxide_dir / "log"
    assert "failed" not in (log.read_text() if log.exists() else "")


def _hook_start(hook_type: str, payload: dict) -> bytes:  # type: ignore[type-arg]
    """The line Copilot 1.0.102 writes to events.jsonl as it starts a hook (seen in its files)."""
    event = {"type": "hook.start", "data": {"hookInvocationId": "714af32e-0f85-4318-9b9c-1cbe1a0be230",
                                            "hookType": hook_type, "input": payload},
             "id": "97bd0361-2c36-4e1f-a5b8-8d5c6f6e2b10", "timestamp": "2026-12-07T18:13:12.587Z"}
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def test_the_stop_hook_waits_for_the_turn_to_reach_the_file(repo: Path) -> None:
    """Copilot appends events.jsonl in batches, after its agentStop hook has begun: the hook waits
    until its own hook.start is in the file, so the import holds the whole turn (not the one before)."""
    import threading
    import time

    oxide(repo, "init")
    lines = (FIXTURES / "copilot" / SID / "events.jsonl").read_bytes().replace(
        b"/tmp/copilot/proj", str(repo).encode()).splitlines(keepends=True)
    events = Path(os.environ["COPILOT_HOME"]) / "session-state" / SID / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_bytes(lines[0])  # what the file held when Copilot ran the hook
    stop = {"sessionId": SID, "timestamp": 1796162859000, "cwd": str(repo), "transcriptPath": str(events),
            "stopReason": "end_turn"}
    earlier = _hook_start("userPromptSubmitted", {**stop, "timestamp": 1796162851900})

    def flush() -> None:
        time.sleep(0.8)
        with events.open("ab") as f:
            f.write(earlier + b"".join(lines[1:6]))
            f.flush()
            time.sleep(0.3)
            f.write(b"".join(lines[6:]) + _hook_start("agentStop", stop)[:40])  # a line half written
            f.flush()
            time.sleep(0.3)
            f.write(_hook_start("agentStop", stop)[40:])

    writer = threading.Thread(target=flush)
    writer.start()
    r = _hook(repo, "stop", stop)
    writer.join()
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    assert ctx.index.query("SELECT message_count FROM sessions WHERE native_id=?", (SID,))[0][0] == 13
    log = ctx.repo.oxide_dir / "log"
    assert not log.exists() or "hook.start" not in log.read_text()


def test_the_wait_for_the_turn_is_bounded_and_keyed_to_its_own_hook(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    stop = {"sessionId": SID, "timestamp": 1796162859000, "cwd": str(tmp_path)}
    events.write_bytes(_hook_start("agentStop", {**stop, "timestamp": 1796162851900})  # an earlier turn's
                       + b'{"type":"user.message","data":{"content":"1796162859000"}}\n')
    assert hooks.await_own_start(events, stop, wait_s=0.2) is False
    assert hooks.await_own_start(tmp_path / "none.jsonl", stop, wait_s=0.1) is False
    assert hooks.await_own_start(events, {"sessionId": SID}, wait_s=0) is True  # nothing to know it by
    events.write_bytes(events.read_bytes() + _hook_start("sessionEnd", stop))
    assert hooks.await_own_start(events, stop, wait_s=0) is True


def _prompt_before_the_file(repo: Path) -> dict:  # type: ignore[type-arg]
    """The prompt hook of a session whose events.jsonl is not written yet, while an earlier session
    is current: the untied checkpoint's row."""
    oxide(repo, "init")
    ctx = make_ctx(repo)
    ctx.repo.worktree_dir.mkdir(parents=True, exist_ok=True)
    (ctx.repo.worktree_dir / "current-session").write_text("0" * 32 + "\n")  # an earlier session
    (repo / "README.md").write_text("before the prompt\n")
    r = _hook(repo, "prompt", {"sessionId": SID, "timestamp": 1796162851900, "cwd": str(repo),
                               "prompt": "COPILOT-PROMPT-1: make shell.txt"})
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    [untied] = ctx.index.checkpoint_rows()
    assert untied["session_id"] is None and untied["kind"] == "prompt"
    pending = json.loads((ctx.repo.worktree_dir / "pending-prompts.json").read_text())
    assert pending == {f"copilot:{SID}": [untied["id"]]}
    return untied


def _write_events(repo: Path) -> Path:
    """The session's events.jsonl, as Copilot writes it."""
    events = Path(os.environ["COPILOT_HOME"]) / "session-state" / SID / "events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    events.write_bytes((FIXTURES / "copilot" / SID / "events.jsonl").read_bytes().replace(
        b"/tmp/copilot/proj", str(repo).encode()))
    return events


def _assert_tied(repo: Path, untied: dict) -> None:  # type: ignore[type-arg]
    from oxide_git.git import refs

    ctx = make_ctx(repo)
    [sid] = [x[0] for x in ctx.index.query("SELECT id FROM sessions WHERE native_id=?", (SID,))]
    [tied] = [c for c in ctx.index.checkpoint_rows() if c["created_at"] == untied["created_at"]]
    assert tied["session_id"] == sid and tied["kind"] == "prompt" and tied["tree"] == untied["tree"]
    assert tied["head"] == untied["head"] and tied["created_at"] == untied["created_at"]
    assert tied["message"] == "COPILOT-PROMPT-1: make shell.txt" and tied["id"] != untied["id"]
    assert refs.read(ctx.repo.git, refs.checkpoint_ref(sid, tied["id"])) is not None
    assert refs.read(ctx.repo.git, refs.checkpoint_ref("manual", untied["id"])) is None
    assert not (ctx.repo.worktree_dir / "pending-prompts.json").exists()
    oxide(repo, "reindex")
    assert tied["id"] in [c["id"] for c in make_ctx(repo).index.checkpoint_rows(sid)]
    assert untied["id"] not in make_ctx(repo).index.checkpoint_ids()
    log = ctx.repo.oxide_dir / "log"
    assert "failed" not in (log.read_text() if log.exists() else "")


def test_a_prompt_before_the_session_file_exists_is_tied_to_it_when_it_is_imported(repo: Path) -> None:
    """Under load Copilot's userPromptSubmitted hook can run before events.jsonl is written: the
    prompt's checkpoint is taken on no session (not on whichever session was current), and the stop
    hook that imports the session ties it: same tree, under the session's ref, kept by a reindex."""
    untied = _prompt_before_the_file(repo)
    events = _write_events(repo)
    r = _hook(repo, "stop", {"sessionId": SID, "cwd": str(repo), "transcriptPath": str(events),
                             "stopReason": "end_turn"})
    assert r.returncode == 0 and r.stdout == "", r.stderr
    _assert_tied(repo, untied)
    ctx = make_ctx(repo)
    [sid] = [x[0] for x in ctx.index.query("SELECT id FROM sessions WHERE native_id=?", (SID,))]
    assert (ctx.repo.worktree_dir / "current-session").read_text().strip() == sid


def test_without_a_stop_hook_git_oxide_import_ties_the_waiting_checkpoint(repo: Path) -> None:
    """The agent was killed before its stop hook: the next `git oxide import` ties it."""
    untied = _prompt_before_the_file(repo)
    oxide(repo, "import", "--agent", "copilot", str(_write_events(repo)))
    _assert_tied(repo, untied)


def test_a_waiting_checkpoint_removed_meanwhile_is_not_tied_and_no_longer_waits(repo: Path) -> None:
    from oxide_git.git import refs
    from oxide_git.hooks import ties as hook_ties
    from tests.conftest import git

    untied = _prompt_before_the_file(repo)
    git(repo, "update-ref", "-d", refs.checkpoint_ref("manual", untied["id"]))  # gone meanwhile
    oxide(repo, "import", "--agent", "copilot", str(_write_events(repo)))
    ctx = make_ctx(repo)
    assert not (ctx.repo.worktree_dir / "pending-prompts.json").exists()
    assert not git(repo, "for-each-ref", "refs/oxide/checkpoints/").strip()  # nothing tied, nothing made
    assert hook_ties.tie_pending(ctx, "copilot", SID, "0" * 32) == 0  # nothing waits any more


def test_two_sessions_waiting_on_the_same_worktree_state_each_get_a_checkpoint_of_their_own(repo: Path) -> None:
    """Two agents' first prompts before either session file exists, nothing changed in between:
    each waits with its own checkpoint (the dedupe of an unchanged state would have given the second
    the first's, and the first session imported would have taken both)."""
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.hooks import ties as hook_ties
    from oxide_git.store import writes as store
    from tests.conftest import NOW_MS

    oxide(repo, "init")
    hook_ties.prompt_checkpoint(make_ctx(repo), "copilot", "native-a", None, "first of a")
    hook_ties.prompt_checkpoint(make_ctx(repo, NOW_MS + 10), "copilot", "native-b", None, "first of b")
    ctx = make_ctx(repo, NOW_MS + 20)
    pending = json.loads((ctx.repo.worktree_dir / hook_ties.FILE).read_text())
    [a], [b] = pending["copilot:native-a"], pending["copilot:native-b"]
    assert a != b
    sids = {}
    for n, native in enumerate(("native-a", "native-b")):
        s = Session(f"{n}" * 12 + "e" * 20, "copilot", native_id=native, cwd=str(repo), worktree="main")
        store.append(ctx, s, [Message("user", (Part.text(f"first of {native[-1]}"),))])
        sids[native] = s.id
    assert hook_ties.tie_pending(ctx, "copilot", "native-b", sids["native-b"]) == 1
    assert hook_ties.tie_pending(ctx, "copilot", "native-a", sids["native-a"]) == 1
    rows = make_ctx(repo, NOW_MS + 30).index.checkpoint_rows()
    assert sorted((r["session_id"], r["message"].split("\n")[0]) for r in rows) == sorted(
        [(sids["native-a"], "first of a"), (sids["native-b"], "first of b")])


MAIN, SUB = "ffaff6d1-9cc2-48fc-8143-f42a14a75dbd", "7d808882-fb2e-4999-bf60-a7a15f40fc4f"


def test_a_sub_agent_s_prompt_checkpoint_goes_to_the_sub_agent_s_session(repo: Path) -> None:
    """Copilot runs a sub-agent's own prompt hook with its agentId as sessionId (and its parent's as
    parentAgentId): the checkpoint waits for the session `<parent>/agent-<agentId>`, the one the
    import makes of it from the parent's events.jsonl, and subagentStop (the parent's sessionId, the
    sub-agent's agentId) ties it there. The parent stays the current session."""
    oxide(repo, "init")
    lines = (FIXTURES / "copilot" / MAIN / "events.jsonl").read_bytes().replace(
        b"/tmp/copilot/proj", str(repo).encode()).splitlines(keepends=True)
    events = Path(os.environ["COPILOT_HOME"]) / "session-state" / MAIN / "events.jsonl"
    events.parent.mkdir(parents=True)
    first_sub = next(i for i, line in enumerate(lines) if SUB.encode() in line)
    events.write_bytes(b"".join(lines[:first_sub]))  # the parent's turn so far, no sub-agent yet
    (repo / "README.md").write_text("before the sub-agent\n")
    r = _hook(repo, "prompt", {"sessionId": SUB, "agentId": SUB, "parentAgentId": MAIN, "cwd": str(repo),
                               "agentType": "general-purpose", "prompt": "SUBTASK-1 run echo"})
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    [main] = [x[0] for x in ctx.index.query("SELECT id FROM sessions WHERE native_id=?", (MAIN,))]
    [waiting] = ctx.index.checkpoint_rows()
    assert waiting["session_id"] is None and waiting["message"] == "SUBTASK-1 run echo"
    assert (ctx.repo.worktree_dir / "current-session").read_text().strip() == main
    events.write_bytes(b"".join(lines))
    r = _hook(repo, "stop", {"sessionId": MAIN, "agentId": SUB, "agentType": "general-purpose",
                             "transcriptPath": str(events), "cwd": str(repo)})
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    [sub] = [x[0] for x in ctx.index.query("SELECT id FROM sessions WHERE native_id=?", (f"{MAIN}/agent-{SUB}",))]
    [tied] = ctx.index.checkpoint_rows()
    assert tied["session_id"] == sub and tied["message"] == "SUBTASK-1 run echo"
    assert not (ctx.repo.worktree_dir / "pending-prompts.json").exists()
    assert (ctx.repo.worktree_dir / "current-session").read_text().strip() == main
