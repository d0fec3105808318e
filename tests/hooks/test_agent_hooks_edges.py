"""Agent hooks at their edges: Claude settings in a fresh repository and a second time (the user's
file untouched), Codex's config when CODEX_HOME is not set and when a notify string holds a
bracket, the chained notify's exact arguments, which session a notify makes current, the time a
prompt checkpoint is taken, and an agent's hook called without its event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from oxide_git.hooks.agent_hooks import configure_codex
from tests.conftest import FIXTURES, make_ctx, oxide
from tests.hooks.test_agent_hooks import hook_log, run_hook
from tests.hooks.test_hooks import SID_NATIVE, claude_line

EVENTS = "UserPromptSubmit, Stop, SubagentStop"


def test_claude_hooks_in_a_fresh_repository_go_in_the_shared_settings_only(repo: Path) -> None:
    out = oxide(repo, "init", "--agent-hooks", "claude")
    shared, local = repo / ".claude" / "settings.json", repo / ".claude" / "settings.local.json"
    assert shared.is_file() and not local.exists()
    said = (out.stderr + out.stdout).splitlines()
    assert f"set Claude Code {EVENTS} hooks in {shared}" in said  # the whole line: portable, no note
    assert not [ln for ln in said if "removed" in ln]
    ours = {"hooks": {  # as Claude Code reads them: a 10 s timeout
        event: [{"hooks": [{"type": "command", "timeout": 10, "command": f"git oxide agent-hook claude {action}"}]}]
        for event, action in (("UserPromptSubmit", "prompt"), ("Stop", "stop"), ("SubagentStop", "stop"))}}
    assert shared.read_text() == json.dumps(ours, indent=2) + "\n"  # a committed file: its layout must not change
    out = oxide(repo, "init", "--agent-hooks", "claude", "--remove")
    said = (out.stderr + out.stdout).splitlines()
    assert f"removed git oxide's Claude Code hooks from {shared}" in said
    assert not [ln for ln in said if ln.startswith("set Claude Code")]


def test_configuring_claude_again_leaves_the_users_file_as_it_is(repo: Path) -> None:
    oxide(repo, "init", "--agent-hooks", "claude")
    shared = repo / ".claude" / "settings.json"
    compact = json.dumps(json.loads(shared.read_text()), separators=(",", ":"))  # the user reformatted it
    shared.write_text(compact)
    oxide(repo, "init", "--agent-hooks", "claude")
    assert shared.read_text() == compact  # nothing to change: not rewritten


def test_codex_config_without_codex_home_is_the_users_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = configure_codex({}, home)
    config = home / ".codex" / "config.toml"
    assert done == [f"set Codex notify in {config}"] and "notify" in tomllib.loads(config.read_text())


def test_a_bracket_inside_a_notify_string_does_not_swallow_the_rest_of_the_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    original = 'notify = ["say", "done ["]\nmodel = "o3"\n\n[profiles.x]\nmodel = "o4"\n'
    config.write_text(original)
    assert configure_codex({}, home) == [f"set Codex notify in {config} (chaining say)"]
    got = tomllib.loads(config.read_text())
    assert got["model"] == "o3" and got["profiles"] == {"x": {"model": "o4"}}
    assert got["notify"][-3:] == ["--", "say", "done ["]
    assert configure_codex({}, home, remove=True) == [f"removed Codex notify in {config}"]
    assert tomllib.loads(config.read_text()) == tomllib.loads(original)


def _notify(repo: Path, payload: dict, tmp_path: Path,  # type: ignore[type-arg]
            chained: list[str] | None = None) -> list[str]:
    """Run the notify command Codex would run; what the chained command wrote (by default its
    arguments, one per line) to ``tmp_path / "chained.out"``."""
    out = tmp_path / "chained.out"
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    if chained is None:
        config.write_text(f'notify = ["sh", "-c", "printf \'%s\\\\n\' \\"$@\\" > {out}", "sh"]\n')
    else:
        config.write_text(f"notify = {json.dumps(chained)}\n")
    oxide(repo, "init", "--agent-hooks", "codex")
    notify = tomllib.loads(config.read_text())["notify"]
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    r = subprocess.run([*notify, json.dumps(payload)], cwd=repo, capture_output=True, text=True, timeout=60,
                       env=env)
    assert r.returncode == 0 and r.stdout == "", r.stderr
    deadline = time.monotonic() + 20
    while not (out.exists() and out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return out.read_text().splitlines()


def _rollout(n: int, repo: Path) -> str:
    native = f"019c0000-0000-7000-8000-00000000000{n}"
    day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "03" / "01"
    day.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / "codex" / "turns.jsonl").read_text().replace("/work/proj", str(repo)).replace(
        "019c0000-0000-7000-8000-000000000001", native)  # each its own thread
    (day / f"rollout-2026-03-01T1{n}-00-00-{native}.jsonl").write_text(text)
    return native


def _current(repo: Path) -> str:
    ctx = make_ctx(repo)
    sid = (ctx.repo.worktree_dir / "current-session").read_text().split()[0]
    return str(ctx.index.query("SELECT native_id FROM sessions WHERE id=?", (sid,))[0][0])


def test_the_chained_notify_gets_the_json_once(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    payload = {"type": "agent-turn-complete", "cwd": str(repo)}
    assert _notify(repo, payload, tmp_path) == [json.dumps(payload)]


def test_the_chained_notify_runs_in_a_session_of_its_own(repo: Path, tmp_path: Path) -> None:
    """The user's own notify (a sound, a desktop notice) is started detached, in a session of its
    own: the hangup or signal that ends the agent's terminal and process group, or the hook, does
    not take it down half-way."""
    oxide(repo, "init")
    out = tmp_path / "chained.out"
    probe = "import os, sys; open(sys.argv[1], 'w').write(f'{os.getsid(0) == os.getpid()} {sys.argv[2:]}')"
    payload = {"type": "agent-turn-complete", "cwd": str(repo)}
    got = _notify(repo, payload, tmp_path, [sys.executable, "-c", probe, str(out)])
    assert got == [f"True {[json.dumps(payload)]}"]  # its own session's leader, given the JSON


def test_notify_makes_the_threads_session_current_over_others_that_grew(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    natives = [_rollout(n, repo) for n in (1, 2, 3)]
    _notify(repo, {"type": "agent-turn-complete", "thread-id": natives[0], "cwd": str(repo)}, tmp_path)
    assert _current(repo) == natives[0]


def test_notify_without_a_thread_makes_the_last_grown_session_current(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    natives = [_rollout(n, repo) for n in (1, 2, 3)]
    _notify(repo, {"type": "agent-turn-complete", "cwd": str(repo)}, tmp_path)
    assert _current(repo) == natives[-1]


def test_a_prompt_checkpoint_is_taken_now(repo: Path) -> None:
    oxide(repo, "init")
    transcript = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p" / "t.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(claude_line(repo, 5, "first prompt"))
    payload = {"session_id": SID_NATIVE.format(5), "transcript_path": str(transcript), "cwd": str(repo),
               "hook_event_name": "UserPromptSubmit", "prompt": "second prompt"}
    before = int(time.time() * 1000)
    assert run_hook(repo, ["claude", "prompt"], json.dumps(payload)).returncode == 0
    after = int(time.time() * 1000)
    [cp] = make_ctx(repo).index.checkpoint_rows()
    assert before <= cp["created_at"] <= after


def test_an_agents_hook_called_without_its_event_does_nothing_and_logs_nothing(repo: Path) -> None:
    oxide(repo, "init")
    r = run_hook(repo, ["copilot"], json.dumps({"cwd": str(repo)}))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert hook_log(repo) == ""


def test_codex_notify_says_set_then_removed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    assert configure_codex({}, home) == [f"set Codex notify in {config}"]
    assert configure_codex({}, home, remove=True) == [f"removed Codex notify in {config}"]


def test_configure_reaches_an_agents_own_hooks_module_and_refuses_an_agent_without_hooks(repo: Path) -> None:
    import pytest

    from oxide_git.core.errors import OxideError
    from oxide_git.hooks.agent_hooks import configure, hooked_agents

    oxide(repo, "init")
    ctx = make_ctx(repo)
    assert "copilot" in hooked_agents() and configure(ctx, "copilot")  # agent_hooks_copilot's own
    with pytest.raises(OxideError) as e:
        configure(ctx, "aider")
    assert e.value.message == "no agent hooks for aider"
    assert e.value.hint == f"agents with hooks: {', '.join(hooked_agents())}"


def test_claude_hooks_without_git_oxide_on_path_stay_on_this_machine_and_move_when_it_is(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `git-oxide` on PATH the hooks name this machine's Python and go in the per-machine
    settings.local.json only; `--remove` takes them out there; once `git-oxide` is on PATH, the
    portable hooks go in settings.json and this machine's entries leave settings.local.json."""
    from oxide_git.hooks.agent_hooks import configure_claude

    shared, local = repo / ".claude" / "settings.json", repo / ".claude" / "settings.local.json"
    monkeypatch.setenv("PATH", "/nowhere")
    [said] = configure_claude(repo, remove=False)
    assert said.startswith(f"set Claude Code {EVENTS} hooks in {local} (git-oxide is not on PATH")
    assert not shared.exists()
    [cmd] = [h["command"] for e in json.loads(local.read_text())["hooks"]["Stop"] for h in e["hooks"]]
    assert cmd.endswith("-m oxide_git.agent_hooks claude stop") and cmd.startswith(sys.executable)
    assert configure_claude(repo, remove=True) == [f"removed git oxide's Claude Code hooks from {local}"]
    assert json.loads(local.read_text()) == {} and not shared.exists()
    configure_claude(repo, remove=False)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # where the console script is
    assert configure_claude(repo, remove=False) == [
        f"removed git oxide's Claude Code hooks from {local}", f"set Claude Code {EVENTS} hooks in {shared}"]
    assert json.loads(local.read_text()) == {} and "Stop" in json.loads(shared.read_text())["hooks"]


def test_the_hook_finds_the_repository_by_the_payloads_cwd_else_its_own(repo: Path, tmp_path: Path) -> None:
    """Claude Code says the session's folder in the payload (``cwd``); the hook may itself run
    elsewhere. Without ``cwd`` the hook's own folder is the one."""
    oxide(repo, "init")
    transcript = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p" / "t.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(claude_line(repo, 5, "first prompt"))
    payload = {"session_id": SID_NATIVE.format(5), "transcript_path": str(transcript), "prompt": "from the payload"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run_hook(elsewhere, ["claude", "prompt"], json.dumps({**payload, "cwd": str(repo)})).returncode == 0
    (repo / "README.md").write_text("changed\n")  # a checkpoint of an unchanged worktree is no new one
    assert run_hook(repo, ["claude", "prompt"], json.dumps({**payload, "prompt": "no cwd"})).returncode == 0
    assert hook_log(repo) == ""
    assert sorted(c["message"] for c in make_ctx(repo).index.checkpoint_rows()) == ["from the payload", "no cwd"]


def test_hooks_called_with_too_little_do_nothing_wrong_and_log_nothing(repo: Path) -> None:
    """`agent-hook` with no arguments does nothing; Codex's notify without its JSON argument
    still imports the Codex sessions (as a turn complete)."""
    oxide(repo, "init")
    native = _rollout(1, repo)
    r = run_hook(repo, [], "")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert make_ctx(repo).index.query("SELECT count(*) FROM sessions")[0][0] == 0
    r = run_hook(repo, ["codex", "notify"], "")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert hook_log(repo) == "" and _current(repo) == native


def test_a_prompt_checkpoint_is_named_by_the_prompts_first_200_characters(repo: Path) -> None:
    oxide(repo, "init")
    long = "fix the parser " * 20  # 300 characters
    for i, prompt in enumerate((f"  \n{long}", " \n ")):
        (repo / "README.md").write_text(f"change {i}\n")
        assert run_hook(repo, ["claude", "prompt"], json.dumps({"cwd": str(repo), "prompt": prompt})).returncode == 0
    got = sorted(c["message"] for c in make_ctx(repo).index.checkpoint_rows())
    assert got == sorted([long[:200], "prompt"])  # stripped, cut at 200; an empty one says "prompt"


def test_a_hook_run_with_another_repositorys_git_variables_works_on_the_payloads(repo: Path, tmp_path: Path) -> None:
    """An agent started from a git hook or alias passes GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE
    on to its hooks: ours checkpoint the payload's repository all the same, and leave the other
    repository as it was."""
    from tests.conftest import git, new_repo

    oxide(repo, "init")
    other = new_repo(tmp_path / "other")
    before = git(other, "for-each-ref"), (other / ".git" / "index").read_bytes()
    (repo / "README.md").write_text("changed\n")
    env = {**os.environ, "GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other),
           "GIT_INDEX_FILE": str(other / ".git" / "index")}
    r = subprocess.run([sys.executable, "-m", "oxide_git.agent_hooks", "claude", "prompt"], cwd=repo, env=env,
                       input=json.dumps({"cwd": str(repo), "prompt": "p"}), capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert hook_log(repo) == ""
    [cp] = make_ctx(repo).index.checkpoint_rows()
    assert cp["message"] == "p" and git(repo, "show", f"{cp['id']}:README.md") == "changed\n"
    assert (git(other, "for-each-ref"), (other / ".git" / "index").read_bytes()) == before
