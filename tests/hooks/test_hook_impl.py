"""The hooks' Python side, run as the shims run it (`python -m oxide_git.hooks.impl ...`): it never
fails the user's git command, and says what went wrong where someone will look."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from oxide_git.hooks import queue as hook_queue
from tests.conftest import git, make_ctx, oxide


def hook_impl(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "oxide_git.hooks.impl", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})})


def test_an_unknown_command_exits_0_and_says_why_on_stderr(repo: Path) -> None:
    r = hook_impl(repo, "no-such-command")
    assert r.returncode == 0 and "unknown hook command 'no-such-command'" in r.stderr
    r = hook_impl(repo, "no-such-command", "pre-commit")  # with arguments too: not the framework's entry
    assert r.returncode == 0 and "unknown hook command 'no-such-command'" in r.stderr
    r = hook_impl(repo, "--hook-type")  # the framework's entry without its hook type
    assert r.returncode == 0 and "unknown hook command '--hook-type'" in r.stderr
    r = hook_impl(repo, "install-hook", "post-commit", str(repo))
    assert r.returncode == 0 and "post-commit is not installed on demand" in r.stderr


def test_a_failing_drain_job_is_logged_and_the_rest_run(repo: Path) -> None:
    oxide(repo, "init")
    ox = repo / ".git" / "oxide"
    head = git(repo, "rev-parse", "HEAD").strip()
    (ox / "hooks.queue").write_text(f"post-commit\t{repo}\ts-abcdef\tnot-a-commit-id\t\t\n"  # a damaged line
                                    f"pre-commit\t{repo}\ts-abcdef\t{head}\n")
    r = hook_impl(repo, "drain", str(repo / ".git"))
    assert r.returncode == 0 and r.stdout == ""
    assert hook_queue.pending(ox) == 0
    logged = (ox / "log").read_text()
    assert logged.count("failed") == 1 and "hook job 'post-commit" in logged
    kinds = [c["kind"] for c in make_ctx(repo).index.checkpoint_rows()]
    assert kinds == ["pre-commit"]  # the job after the failed one ran


def test_prepare_commit_msg_without_a_current_session_leaves_the_message(repo: Path) -> None:
    oxide(repo, "init")
    msg = repo / "MSG"
    msg.write_text("subject\n")
    r = hook_impl(repo, "prepare-commit-msg", str(repo), str(msg))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")  # no session file yet: nothing to add, no failure
    assert msg.read_text() == "subject\n"
    wt = repo / ".git" / "oxide" / "worktrees" / "main"
    wt.mkdir(parents=True, exist_ok=True)
    (wt / "current-session").write_text("\n")  # empty: no session
    hook_impl(repo, "prepare-commit-msg", str(repo), str(msg))
    assert msg.read_text() == "subject\n"
    (wt / "current-session").write_text("019c18a520e8aaaabbbbccccddddeeee\n")
    hook_impl(repo, "prepare-commit-msg", str(repo), str(msg))
    assert "Oxide-Session: 019c18a520e8aaaabbbbccccddddeeee" in msg.read_text()


def test_background_push_records_its_failure_and_clears_it_when_it_works(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    err = repo / ".git" / "oxide" / "push-error"
    hook_impl(repo, "push", str(repo), str(tmp_path / "missing.git"))
    assert err.exists() and err.read_text().strip()
    assert "background push to" in (repo / ".git" / "oxide" / "log").read_text()
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "notes", "--ref", "oxide", "add", "-m", "s-note-1")
    git(repo, "config", "oxide.pushCheckpoints", "true")
    oxide(repo, "checkpoint", "-m", "cp")
    hook_impl(repo, "push", str(repo), str(bare))
    assert not err.exists()
    pushed = git(bare, "for-each-ref", "--format=%(refname)").split()
    assert "refs/notes/oxide" in pushed and any(n.startswith("refs/oxide/checkpoints/") for n in pushed)


def test_the_pre_commit_framework_entry_does_nothing_when_it_should_not(repo: Path) -> None:
    ox = repo / ".git" / "oxide"
    assert hook_impl(repo, "--hook-type", "post-commit").returncode == 0  # not initialised
    assert not ox.exists()
    oxide(repo, "init")
    git(repo, "config", "oxide.enabled", "false")
    hook_impl(repo, "--hook-type", "post-commit")
    assert not (ox / "hooks.queue").exists()
    git(repo, "config", "--unset", "oxide.enabled")
    (repo / ".git" / "MERGE_HEAD").write_text(git(repo, "rev-parse", "HEAD"))  # in the middle of a merge
    hook_impl(repo, "--hook-type", "post-commit")
    assert not (ox / "hooks.queue").exists()
    (repo / ".git" / "MERGE_HEAD").unlink()
    hook_impl(repo, "--hook-type", "post-checkout", env={"PRE_COMMIT_CHECKOUT_TYPE": "0"})  # a file checkout
    hook_impl(repo, "--hook-type", "pre-push")  # not a hook the framework entry handles
    assert not (ox / "hooks.queue").exists() and not (ox / "log").exists()


def test_a_trailer_git_cannot_write_is_reported_once_by_the_hook_which_exits_0(repo: Path) -> None:
    """`git interpret-trailers` failing (here the message "file" is a folder) is not silent: the
    hook says so on stderr (the shim sends it to the oxide log), as its own report, exit 0."""
    oxide(repo, "init")
    wt = repo / ".git" / "oxide" / "worktrees" / "main"
    (wt / "current-session").write_text("019c18a520e8aaaabbbbccccddddeeee\n")
    folder = repo / "MSG"
    folder.mkdir()
    r = hook_impl(repo, "prepare-commit-msg", str(repo), str(folder))
    assert (r.returncode, r.stdout) == (0, "")
    assert r.stderr.startswith("hook-impl ['prepare-commit-msg'") and "failed" in r.stderr
    assert "CalledProcessError" in r.stderr and "interpret-trailers" in r.stderr


def test_a_commit_is_noted_on_the_branch_it_was_made_on_when_a_checkout_came_first(repo: Path) -> None:
    """The post-commit line carries HEAD as the hook read it: a job that runs after the user
    already switched branches still notes (and remembers the session for) the commit's branch."""
    import json

    from oxide_git.store.notes import read_note
    from tests.hooks.test_hooks import make_session

    oxide(repo, "init")
    sid = make_session(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "elsewhere")  # what the job finds checked out
    ox = repo / ".git" / "oxide"
    (ox / "hooks.queue").write_text(f"post-commit\t{repo}\t{sid}\t{head}\t\t\tref: refs/heads/feature\n")
    assert hook_impl(repo, "drain", str(repo / ".git")).returncode == 0
    assert read_note(make_ctx(repo).repo.git, head)["branch"] == "feature"
    remembered = json.loads((make_ctx(repo).repo.worktree_dir / "branch-sessions.json").read_text())
    assert remembered == {"feature": sid}


def test_the_post_commit_hook_hands_over_the_head_it_committed_to(repo: Path, tmp_path: Path) -> None:
    from tests.hooks.test_hooks import idle

    oxide(repo, "hooks", "install")
    git(repo, "checkout", "-q", "-b", "feature")
    idle(repo)  # the checkout's own drain is done: it would take the commit's line too
    fake = tmp_path / "fake" / "oxide_git"  # a drain that does nothing: the queue stays to be read
    (fake / "hooks").mkdir(parents=True)
    for module in ("__init__.py", "hooks/__init__.py", "hooks/impl.py"):  # what the shim runs
        (fake / module).write_text("")
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "f.txt")
    env = {**os.environ, "PYTHONPATH": str(fake.parent), "OXIDE_HOOK_SYNC": "1"}
    subprocess.run(["git", "commit", "-q", "-m", "f"], cwd=repo, env=env, check=True)
    lines = (repo / ".git" / "oxide" / "hooks.queue").read_text().splitlines()
    [post] = [ln.split("\t") for ln in lines if ln.startswith("post-commit\t")]
    assert post[3] == git(repo, "rev-parse", "HEAD").strip()
    assert post[6] == "ref: refs/heads/feature"


def test_the_framework_entry_takes_its_hook_from_the_first_argument_and_jobs_forget_gits_variables(
        repo: Path, tmp_path: Path) -> None:
    """A config's ``args:`` after the hook type are not the hook; and the drain the entry starts
    forgets the GIT_* variables of its caller (here another repository's): its jobs open this one."""
    from tests.hooks.test_hooks import idle, make_session, note

    oxide(repo, "init")
    sid = make_session(repo)
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    elsewhere = {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other),
                 "GIT_INDEX_FILE": str(other / ".git" / "index")}
    (repo / "p").write_text("p")
    git(repo, "add", "p")
    assert hook_impl(repo, "--hook-type", "pre-commit", "--", "--verbose", env=elsewhere).returncode == 0
    idle(repo)
    git(repo, "commit", "-q", "-m", "p")
    assert hook_impl(repo, "--hook-type", "post-commit", "--", "x", env=elsewhere).returncode == 0
    n = note(repo)
    assert n["sessions"] == [sid] and len(n["checkpoints"]) == 1
    assert not (repo / ".git" / "oxide" / "log").exists() or "failed" not in (
        repo / ".git" / "oxide" / "log").read_text()
