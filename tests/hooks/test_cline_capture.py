"""Cline captured live: its hook scripts (written beside the user's own, run for real by the hook
command) and the watch daemon on a session file Cline rewrites whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oxide_git.agents import js_json
from oxide_git.hooks import agent_hooks_cline
from tests.conftest import make_ctx, oxide, oxide_process
from tests.watch.test_watch import wait_for

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "cline"
SID = "1796162970748_d4qjp"


def cline_session(repo: Path, messages: int | None = None) -> Path:
    """The fixture session in this HOME's Cline store, recorded in ``repo``; its messages file."""
    folder = Path(os.environ["HOME"]) / ".cline" / "data" / "sessions" / SID
    folder.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((FIX / SID / f"{SID}.json").read_text())
    manifest.update(cwd=str(repo), workspace_root=str(repo),
                    messages_path=str(folder / f"{SID}.messages.json"))
    doc = json.loads((FIX / SID / f"{SID}.messages.json").read_text())
    doc["messages"] = doc["messages"][:messages]
    (folder / f"{SID}.json").write_text(js_json.dumps(manifest) + "\n")
    path = folder / f"{SID}.messages.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(js_json.dumps(doc) + "\n")
    tmp.replace(path)  # Cline writes atomically too
    return path


def hooks(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def test_hooks_go_beside_the_users_own_and_come_out_again(repo: Path) -> None:
    shared = repo / ".clinerules" / "hooks"
    shared.mkdir(parents=True)
    (shared / "TaskComplete.sh").write_text("#!/bin/sh\necho mine\n")
    (shared / "PostToolUse").write_text("#!/bin/sh\necho mine too\n")
    oxide(repo, "init", "--agent-hooks", "cline")
    oxide(repo, "init", "--agent-hooks", "cline")  # idempotent
    got = hooks(shared)
    assert sorted(got) == ["PostToolUse", "PostToolUse.sh", "TaskCancel.sh", "TaskComplete.bash",
                           "TaskComplete.sh", "TaskError.sh", "TaskStart.sh"]
    assert got["TaskComplete.sh"] == "#!/bin/sh\necho mine\n"
    assert got["TaskComplete.bash"].splitlines()[-1] == "exec git oxide agent-hook cline stop"
    assert got["TaskStart.sh"].splitlines()[-1] == "exec git oxide agent-hook cline prompt"
    assert got["PostToolUse.sh"].splitlines()[-1] == "exec git oxide agent-hook cline tool"
    assert os.access(shared / "TaskStart.sh", os.X_OK)
    oxide(repo, "init", "--agent-hooks", "cline", "--remove")
    assert hooks(shared) == {"TaskComplete.sh": "#!/bin/sh\necho mine\n", "PostToolUse": "#!/bin/sh\necho mine too\n"}


def test_without_git_oxide_on_path_they_name_this_python_in_the_worktrees_own_folder(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".clinerules" / "hooks").mkdir(parents=True)
    done = agent_hooks_cline.configure(repo, python="/opt/py/bin/python3")
    assert "this machine's Python" in done[-1]
    local = hooks(repo / ".cline" / "hooks")
    assert local["TaskStart.sh"].splitlines()[-1] == "exec /opt/py/bin/python3 -m oxide_git.agent_hooks cline prompt"
    assert hooks(repo / ".clinerules" / "hooks") == {}
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    agent_hooks_cline.configure(repo)  # on PATH now: the shared folder, and the local ones go
    assert hooks(repo / ".cline" / "hooks") == {} and len(hooks(repo / ".clinerules" / "hooks")) == 5


def test_both_names_taken_is_refused_and_nothing_is_written(repo: Path) -> None:
    shared = repo / ".clinerules" / "hooks"
    shared.mkdir(parents=True)
    for name in ("TaskStart.sh", "TaskStart.bash"):
        (shared / name).write_text("#!/bin/sh\n")
    r = oxide(repo, "init", "--agent-hooks", "cline", check=False)
    assert r.returncode == 1 and "error:" in r.stderr and "hint:" in r.stderr
    assert sorted(hooks(shared)) == ["TaskStart.bash", "TaskStart.sh"]


def run_hook(repo: Path, action: str, payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "oxide_git.agent_hooks", "cline", action], cwd=repo,
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60)


def payload(repo: Path, hook: str) -> dict[str, object]:
    """What Cline 3.0.65 gives a hook on stdin (fields as it wrote them)."""
    return {"clineVersion": "", "timestamp": "2026-12-01T22:26:36.445Z", "taskId": "conv_1",
            "sessionContext": {"rootSessionId": SID}, "workspaceRoots": [str(repo)],
            "workspaceInfo": {"rootPath": str(repo), "hint": "repo"}, "userId": "unknown",
            "agent_id": "agent_1", "parent_agent_id": None, "hookName": hook}


def test_the_hook_imports_the_session_and_checkpoints_a_new_task(repo: Path) -> None:
    from oxide_git.store import writes as store

    oxide(repo, "init")
    cline_session(repo, messages=1)
    (repo / "README.md").write_text("changed before the task\n")
    r = run_hook(repo, "prompt", payload(repo, "agent_start"))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    ctx = make_ctx(repo)
    sid = store.current_session(ctx)
    assert sid and tuple(ctx.index.query("SELECT native_id, message_count FROM sessions WHERE id=?",
                                         (sid,))[0]) == (SID, 1)
    [cp] = ctx.index.checkpoint_rows(sid)
    assert cp["kind"] == "prompt" and cp["message"].startswith("CLINE-PROMPT-1")
    cline_session(repo)  # Cline went on and rewrote the file whole
    r = run_hook(repo, "tool", payload(repo, "tool_result"))
    assert r.returncode == 0 and r.stdout == ""
    assert make_ctx(repo).index.query("SELECT message_count FROM sessions WHERE id=?", (sid,))[0][0] == 12
    log = repo / ".git" / "oxide" / "log"
    assert "failed" not in (log.read_text() if log.exists() else "")


@pytest.mark.parametrize("bad", ["{not json", json.dumps({"sessionContext": {"rootSessionId": "../x"}}),
                                 json.dumps({"workspaceRoots": ["/nowhere"]})])
def test_a_bad_payload_changes_nothing_and_says_nothing(repo: Path, bad: str) -> None:
    oxide(repo, "init")
    r = subprocess.run([sys.executable, "-m", "oxide_git.agent_hooks", "cline", "stop"], cwd=repo,
                       input=bad, capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, "")
    assert make_ctx(repo).index.query("SELECT count(*) FROM sessions")[0][0] == 0


@pytest.mark.process
def test_watch_imports_a_session_cline_rewrites_whole(repo: Path) -> None:
    oxide(repo, "init")
    pid = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)["pid"]
    try:
        cline_session(repo, messages=3)  # the store appears after the watcher started

        def count() -> int:
            rows = make_ctx(repo).index.query("SELECT message_count FROM sessions WHERE native_id=?", (SID,))
            return int(rows[0][0]) if rows else 0

        wait_for(lambda: count() == 3)
        cline_session(repo)
        wait_for(lambda: count() == 12)
        rows = oxide(repo, "list", "--agent", "cline", "--json").stdout
        assert [r["native_id"] for r in json.loads(rows)] == [SID]
    finally:
        out = json.loads(oxide(repo, "watch", "--stop", "--json").stdout)
    assert out["stopped"] and out["pid"] == pid


def test_import_of_a_folder_finds_the_messages_files(repo: Path) -> None:
    oxide(repo, "init")
    path = cline_session(repo)
    out = json.loads(oxide(repo, "import", "--agent", "cline", str(path.parent.parent), "--json").stdout)
    assert [Path(f["path"]).name for f in out["files"]] == [path.name]  # not the manifest
    assert out["files"][0]["messages"] == 12
    again = json.loads(oxide(repo, "import", "--agent", "cline", str(path), "--json").stdout)
    assert again["files"][0]["state"] == "unchanged"
