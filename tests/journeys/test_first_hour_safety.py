"""Issue 14, "the first hour of a real user": safety and honest errors (items 7, 9, 10, 11, 13, 14,
17), each test doing what the user did."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oxide_git.cli.history import singular
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import journal
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, configure_opencode_model, git, make_ctx, oxide

CODEX_FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "codex" / "turns.jsonl"


def _session(repo: Path, sid: str = "8" * 32, agent: str = "codex") -> str:
    ctx = make_ctx(repo)
    store.append(ctx, Session(id=sid, agent=agent, native_id="n-" + sid[:4], worktree=ctx.repo.worktree_id),
                 [Message("user", (Part.text("make it faster"),)),
                  Message("assistant", (Part("reasoning", {"text": "think"}), Part.text("done"),
                                        Part("other", {"kind": "turn_context", "raw": {"a": 1}})))])
    ctx.close()
    return sid


def _objects(repo: Path) -> set[str]:
    """Every object id in the repository (loose and packed)."""
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


# item 9 ---------------------------------------------------------------------------------------


def test_rewind_leaves_the_aider_history_alone_and_says_so(repo: Path) -> None:
    """`.aider.chat.history.md` not ignored: `rewind --dry-run` listed `modify` on it."""
    oxide(repo, "init")
    history = repo / ".aider.chat.history.md"
    inputs = repo / ".aider.input.history"
    history.write_text("# aider chat started at 2026-01-01 10:00:00\n\n#### first prompt\n")
    inputs.write_text("\n# 2026-01-01 10:00:00.000000\n+first prompt\n")
    cp = oxide(repo, "checkpoint", "-m", "before").stdout.strip()
    with history.open("a") as f:
        f.write("\n#### a later prompt\n\nthe later answer\n")
    with inputs.open("a") as f:
        f.write("\n# 2026-01-01 10:05:00.000000\n+a later prompt\n")
    (repo / "README.md").write_text("broken by the agent\n")
    later_history, later_inputs = history.read_text(), inputs.read_text()
    dry = oxide(repo, "rewind", cp[:12], "--code", "--dry-run")
    assert "modify README.md" in dry.stdout
    assert "modify .aider.chat.history.md" not in dry.stdout
    assert "leave  .aider.chat.history.md (an agent's own session file: never rewound)" in dry.stdout
    assert "leave  .aider.input.history" in dry.stdout
    r = oxide(repo, "rewind", cp[:12], "--code", "--yes")
    assert "Left 2 agent session file(s) as they are" in r.stderr
    assert (repo / "README.md").read_text() == "hello\n"  # the code went back...
    assert history.read_text() == later_history and inputs.read_text() == later_inputs  # ...the chat did not
    oxide(repo, "undo", "--yes")
    assert history.read_text() == later_history and (repo / "README.md").read_text() == "broken by the agent\n"


def test_the_agents_session_files_come_from_the_importers() -> None:
    from oxide_git.agents.aider.agent import HISTORY
    from oxide_git.agents.aider.input import INPUT_HISTORY
    from oxide_git.core.agent_files import is_session_file, session_files

    names = session_files({"AIDER_CHAT_HISTORY_FILE": "docs/chat.md"})
    assert {HISTORY, INPUT_HISTORY, ".aider.llm.history", "docs/chat.md"} <= names
    assert is_session_file("sub/.aider.chat.history.md", names) and not is_session_file("README.md", names)


# item 10 --------------------------------------------------------------------------------------


def _as_unprivileged() -> list[str]:
    """A prefix that makes this user subject to file modes (root bypasses them)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes cannot be enforced")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run([*_as_unprivileged(), "git", "oxide", *args], cwd=repo, capture_output=True,
                          text=True, env=env)


def _read_only(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        p.chmod(p.stat().st_mode & ~0o222)


def _writable(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)


def test_a_read_only_oxide_folder_says_permission_denied(repo: Path) -> None:
    """Every command said the index "is corrupt" and hinted `reindex`, which repeated it."""
    oxide(repo, "init")
    _session(repo)
    oxide_dir = repo / ".git" / "oxide"
    for suffix in ("-wal", "-shm"):  # as after a clean close: SQLite must write to open it
        Path(f"{oxide_dir / 'index.db'}{suffix}").unlink(missing_ok=True)
    _read_only(oxide_dir)
    try:
        r = _run(repo, "list")
        assert r.returncode == 1 and "permission denied" in r.stderr and str(oxide_dir) in r.stderr
        assert "corrupt" not in r.stderr and "reindex" not in r.stderr
        d = _run(repo, "doctor")
        assert d.returncode == 1, d.stdout  # something is wrong: doctor says so in its exit code
        assert f"error: permission denied: {oxide_dir} is not writable" in d.stdout
    finally:
        _writable(oxide_dir)


def test_an_undo_that_cannot_be_journaled_changes_nothing(repo: Path) -> None:
    """`undo` moved a session ref back, then failed writing its journal: exit 3, no hint, no log."""
    oxide(repo, "init")
    sid = _session(repo)
    cp = oxide(repo, "checkpoint", "--session", sid[:8]).stdout.strip()
    ctx = make_ctx(repo)
    store.append(ctx, Session(id=sid, agent="codex"), [Message("user", (Part.text("more"),))])
    ctx.close()
    oxide(repo, "rewind", cp[:12], "--conversation", "--yes")
    refs_before = git(repo, "for-each-ref", "refs/oxide/")
    files_before = (repo / "README.md").read_text()
    wt = repo / ".git" / "oxide" / "worktrees" / "main"
    _read_only(wt)
    try:
        r = _run(repo, "undo", "--yes")
        assert r.returncode == 1, r.stderr
        assert "permission denied: cannot write the undo journal" in r.stderr and str(wt) in r.stderr
        assert "nothing was changed" in r.stderr
        assert git(repo, "for-each-ref", "refs/oxide/") == refs_before  # no ref moved
        assert (repo / "README.md").read_text() == files_before
    finally:
        _writable(wt)
    assert "Undid: rewind to" in oxide(repo, "undo", "--yes").stderr  # writable again: it works


def test_an_unexpected_error_without_a_log_prints_the_traceback_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from oxide_git.git import failure

    monkeypatch.chdir(tmp_path)  # not a repository: the log would go to $TMPDIR...
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))  # ...which cannot be written

    def boom() -> None:
        raise RuntimeError("the index exploded")

    assert failure.guarded(boom) == failure.UNEXPECTED
    err = capsys.readouterr().err
    assert "RuntimeError: the index exploded" in err and "in boom" in err
    assert "the log could not be written" in err


# item 11 --------------------------------------------------------------------------------------


def _rewound(repo: Path) -> str:
    oxide(repo, "init")
    cp = oxide(repo, "checkpoint", "-m", "good").stdout.strip()
    (repo / "README.md").write_text("later work\n")
    oxide(repo, "rewind", cp[:12], "--code", "--yes")
    return cp


def _at(repo: Path, minutes: int, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["OXIDE_NOW"] = str(NOW_MS + minutes * 60_000)
    r = subprocess.run(["git", "oxide", *args], cwd=repo, capture_output=True, text=True, env=env)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def test_undo_names_what_and_when_and_asks(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`undo` after a failed command undid an older, unrelated rewind without a word."""
    monkeypatch.setenv("OXIDE_NOW", str(NOW_MS))
    cp = _rewound(repo)
    r = _at(repo, 125, "undo", check=False)  # not a terminal, no --yes: it asks for consent
    assert r.returncode == 1 and "refusing to undo without confirmation" in r.stderr and "--yes" in r.stderr
    assert (repo / "README.md").read_text() == "hello\n"  # nothing was undone
    dry = _at(repo, 125, "undo", "--dry-run")
    assert f"Would undo: rewind to {cp[:12]} (made 2h ago)" in dry.stderr
    done = _at(repo, 125, "undo", "--yes")
    assert f"Undid: rewind to {cp[:12]} (made 2h ago)" in done.stderr
    assert (repo / "README.md").read_text() == "later work\n"
    again = _at(repo, 126, "undo", "--yes")
    assert f"Redid: rewind to {cp[:12]} (made 1m ago)" in again.stderr  # not "Undid: undo rewind"
    assert "undo undo" not in again.stderr


def test_undo_refuses_an_entry_older_than_a_later_gc(repo: Path) -> None:
    _rewound(repo)
    ctx = make_ctx(repo)
    journal.record(ctx, journal.Entry("gc", NOW_MS + 1, "git oxide gc (removed 3 ref(s))", undoable=False))
    r = oxide(repo, "undo", "--yes", check=False)
    assert r.returncode == 1 and "is older than `git oxide gc (removed 3 ref(s))`" in r.stderr
    assert "--force" in r.stderr and (repo / "README.md").read_text() == "hello\n"
    oxide(repo, "undo", "--yes", "--force")
    assert (repo / "README.md").read_text() == "later work\n"


def test_gc_that_removed_something_is_journaled_as_a_mark(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OXIDE_NOW", str(NOW_MS))
    _rewound(repo)
    git(repo, "config", "oxide.checkpointTTL", "1s")
    r = _at(repo, 60 * 24 * 40, "gc")  # 40 days later: the checkpoints expired
    assert "removed checkpoint" in r.stdout, r.stdout + r.stderr
    marks = [e for e in journal.entries(make_ctx(repo)) if not e.undoable]
    assert [m.op for m in marks] == ["gc"]


# item 13 --------------------------------------------------------------------------------------


def test_claude_hooks_in_the_shared_settings_call_git_oxide_from_path(repo: Path) -> None:
    """`.claude/settings.json` (committed) got this machine's absolute path to Python."""
    oxide(repo, "init", "--agent-hooks", "claude")
    shared = (repo / ".claude" / "settings.json").read_text()
    assert sys.executable not in shared and "/" not in "".join(
        h["command"] for e in json.loads(shared)["hooks"].values() for x in e for h in x["hooks"])
    cmd = json.loads(shared)["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert cmd == "git oxide agent-hook claude prompt"
    assert not (repo / ".claude" / "settings.local.json").exists()
    # the hook works as Claude Code runs it: through a shell, from PATH, the payload on stdin
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    payload = json.dumps({"cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": "go"})
    r = subprocess.run(["sh", "-c", cmd], cwd=repo, input=payload, capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout == ""
    assert [c["kind"] for c in json.loads(oxide(repo, "checkpoints", "--json").stdout)] == ["prompt"]


@pytest.mark.process
def test_without_git_oxide_on_path_the_machine_path_goes_to_the_local_settings(repo: Path) -> None:
    oxide(repo, "init")
    shared = repo / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}))
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = "/usr/bin:/bin"  # git, but no git-oxide
    r = subprocess.run([sys.executable, "-m", "oxide_git", "init", "--agent-hooks", "claude"], cwd=repo,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "settings.local.json" in r.stderr
    assert json.loads(shared.read_text()) == {"permissions": {"allow": ["Bash(ls)"]}}  # untouched
    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert sys.executable in local["hooks"]["Stop"][0]["hooks"][0]["command"]
    oxide(repo, "init", "--agent-hooks", "claude", "--remove")
    assert "hooks" not in json.loads((repo / ".claude" / "settings.local.json").read_text())


# item 14 --------------------------------------------------------------------------------------


@pytest.mark.process
def test_resume_exec_into_an_agent_that_is_not_installed_writes_nothing(repo: Path) -> None:
    oxide(repo, "init")
    sid = _session(repo)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + "/usr/bin:/bin"  # no codex
    assert shutil.which("codex", path=env["PATH"]) is None
    r = subprocess.run(["git", "oxide", "resume", sid[:8], "--into", "codex", "--exec"], cwd=repo,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "codex: it is not installed" in r.stderr and "nothing was written" in r.stderr
    codex_home = Path(os.environ["CODEX_HOME"])
    assert not codex_home.exists() or not any(codex_home.rglob("*.jsonl"))


# item 7 ---------------------------------------------------------------------------------------


def test_wording_rm_import_and_resume(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    sid = _session(repo)
    r = oxide(repo, "rm", sid[:8], check=False)
    assert r.returncode == 1 and "refusing to remove sessions without confirmation" in r.stderr
    assert "change files" not in r.stderr
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(CODEX_FIXTURE.read_text().replace("/work/proj", str(repo)))
    oxide(repo, "import", "--agent", "codex", str(rollout))
    again = oxide(repo, "import", "--agent", "codex", str(rollout))
    assert "1 file(s) unchanged since the last import" in again.stderr and "or failed" not in again.stderr
    configure_opencode_model()
    for target in ("opencode", "claude", "aider"):
        out = oxide(repo, "resume", sid[:8], "--into", target).stderr
        assert sum(line.startswith("wrote ") for line in out.splitlines()) <= 3, out
        warnings = [line for line in out.splitlines() if line.startswith("warning:")]
        assert len(warnings) == len(set(warnings)), out  # each warning once
        assert not any(line.startswith("warning: 1 ") and " parts " in line for line in warnings), out


def test_one_of_a_kind_is_singular() -> None:
    assert singular("1 other parts (progress) were left out") == "1 other part (progress) was left out"
    assert singular("1 tool result parts became plain text") == "1 tool result part became plain text"
    assert singular("2 other parts were left out") == "2 other parts were left out"


# item 17 --------------------------------------------------------------------------------------


def test_a_dry_run_writes_no_object(repo: Path) -> None:
    """The demo's closing `git fsck` printed "dangling commit": `rewind --dry-run` wrote one."""
    oxide(repo, "init")
    cp = oxide(repo, "checkpoint").stdout.strip()
    (repo / "README.md").write_text("a state no checkpoint holds\n")
    (repo / "new.txt").write_text("new and untracked\n")
    before = _objects(repo)
    dry = oxide(repo, "rewind", cp[:12], "--code", "--dry-run")
    assert "modify README.md" in dry.stdout and "delete new.txt" in dry.stdout
    assert "Dry run: nothing was written" in dry.stderr
    oxide(repo, "rewind", cp[:12], "--code", "--yes")
    oxide(repo, "undo", "--dry-run")
    after_undo_dry = _objects(repo)
    assert "dangling" not in subprocess.run(["git", "fsck", "--full"], cwd=repo, capture_output=True,
                                            text=True).stdout
    assert not (_objects(repo) - after_undo_dry)
    # the dry run itself added nothing (the real rewind after it wrote its own before-rewind state)
    assert before <= _objects(repo)
    # and the stat cache holds no blob the repository lacks: the next checkpoint is whole
    (repo / "README.md").write_text("a state no checkpoint holds\n")
    nxt = oxide(repo, "checkpoint").stdout.strip()
    assert subprocess.run(["git", "fsck", "--full", "--strict"], cwd=repo, capture_output=True).returncode == 0
    assert git(repo, "show", f"{nxt}:README.md") == "a state no checkpoint holds\n"


# items 16, 18 ---------------------------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_remedy_for_git_log_all_works(repo: Path) -> None:
    """`git log --all` went from 3 to 63 commits; the README says so and gives the remedy."""
    text = README.read_text()
    remedy = "git log --exclude='refs/oxide/*' --all"
    assert remedy in text and "log.excludeDecoration" in text
    oxide(repo, "init")
    _session(repo)
    oxide(repo, "checkpoint", "-m", "x")
    assert len(git(repo, "log", "--all", "--oneline").splitlines()) > 1  # oxide's commits show...
    assert git(repo, "log", "--exclude=refs/oxide/*", "--all", "--oneline").splitlines() == \
        git(repo, "log", "--oneline").splitlines()  # ...and the remedy leaves only the user's
    assert git(repo, "config", "--get", "log.excludeDecoration", check=False) == ""  # never set for you


def test_the_readme_names_no_fixture_path_that_a_clone_lacks() -> None:
    text = README.read_text()
    assert "../shared/fixtures/real" not in text and "shared/fixtures" not in text
