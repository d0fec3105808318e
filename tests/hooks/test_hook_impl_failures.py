"""The hooks' Python side when things go wrong around it: a drain pointed at no repository, a push
slower than its budget, a damaged notes ref, a rewrite job that fails last, rewritten commits
without notes; and the pre-commit framework's post-checkout. It never fails git and leaves a word
where someone will look."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from oxide_git.hooks import queue as hook_queue
from oxide_git.hooks.queue import wait_idle
from tests.conftest import git, oxide
from tests.hooks.test_hook_impl import hook_impl


def test_a_drain_of_a_folder_that_is_no_repository_is_silent(tmp_path: Path) -> None:
    r = hook_impl(tmp_path, "drain", str(tmp_path / "nowhere"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")  # nowhere to log, nothing to say
    assert not (tmp_path / "nowhere").exists()


def test_a_push_slower_than_its_budget_says_so(repo: Path) -> None:
    oxide(repo, "init")
    oxide(repo, "checkpoint", "-m", "cp")
    git(repo, "config", "core.sshCommand", "sleep 5;")  # a remote that never answers
    git(repo, "config", "oxide.pushTimeout", "0.5")
    t0 = time.monotonic()
    r = hook_impl(repo, "push", str(repo), "ssh://example.invalid/shared.git")
    assert r.returncode == 0 and time.monotonic() - t0 < 4.5
    err = (repo / ".git" / "oxide" / "push-error").read_text()
    assert err == "git push ssh://example.invalid/shared.git took longer than 0.5 s (oxide.pushTimeout)\n"


def test_a_damaged_notes_ref_never_deletes_the_remotes_notes(repo: Path, tmp_path: Path) -> None:
    # git pushes a broken ref as a deletion: the team's notes on the remote would be gone
    oxide(repo, "init")
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "notes", "--ref", "oxide", "add", "-m", "s-note-1")
    git(repo, "push", "-q", str(bare), "refs/notes/oxide:refs/notes/oxide")
    on_remote = git(bare, "rev-parse", "refs/notes/oxide").strip()
    oxide(repo, "checkpoint", "-m", "cp")
    (repo / ".git" / "refs" / "notes" / "oxide").write_text("this is no object id\n")
    git(repo, "config", "oxide.pushCheckpoints", "true")
    r = hook_impl(repo, "push", str(repo), str(bare))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")  # a push that worked, no earlier error to clear
    assert git(bare, "rev-parse", "refs/notes/oxide").strip() == on_remote
    assert any(n.startswith("refs/oxide/checkpoints/") for n in git(bare, "for-each-ref", "--format=%(refname)").split())
    logged = (repo / ".git" / "oxide" / "log").read_text()
    assert "background push left refs/notes/oxide out: refs/notes/oxide does not point at an object id" in logged
    assert not (repo / ".git" / "oxide" / "push-error").exists()  # the rest was pushed


def test_a_rewrite_job_that_fails_last_is_logged(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    ox = repo / ".git" / "oxide"
    head = git(repo, "rev-parse", "HEAD").strip()
    (ox / "hooks.queue").write_text(f"rewrite\t{tmp_path / 'gone'}\tamend\t{head}\t{head}\n")
    assert hook_impl(repo, "drain", str(repo / ".git")).returncode == 0
    assert "rewrite jobs failed" in (ox / "log").read_text()
    assert hook_queue.pending(ox) == 0


def test_rewritten_commits_without_notes_get_none(repo: Path) -> None:
    oxide(repo, "init")
    ox = repo / ".git" / "oxide"
    old = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-q", "--amend", "-m", "amended")
    new = git(repo, "rev-parse", "HEAD").strip()
    (ox / "hooks.queue").write_text(f"rewrite\t{repo}\tamend\t{old}\t{new}\n")
    hook_impl(repo, "drain", str(repo / ".git"))
    assert git(repo, "notes", "--ref", "oxide", "list").strip() == ""
    assert not (ox / "log").exists()


def test_the_frameworks_post_checkout_records_the_switch(repo: Path) -> None:
    oxide(repo, "init")
    before = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "commit", "-q", "--allow-empty", "-m", "on feature")
    after = git(repo, "rev-parse", "HEAD").strip()
    env = {"PRE_COMMIT_CHECKOUT_TYPE": "1", "PRE_COMMIT_FROM_REF": before, "PRE_COMMIT_TO_REF": after}
    assert hook_impl(repo, "--hook-type", "post-checkout", env=env).returncode == 0
    assert wait_idle(repo / ".git")
    [line] = (repo / ".git" / "oxide" / "worktrees" / "main" / "checkouts.jsonl").read_text().splitlines()
    rec = json.loads(line)
    assert (rec["from"], rec["to"], rec["branch"]) == (before, after, "feature")


def test_waiting_for_the_hooks_of_a_repository_without_oxide_is_immediate(repo: Path) -> None:
    t0 = time.monotonic()
    assert wait_idle(repo / ".git", timeout=5) and time.monotonic() - t0 < 1


def test_a_cherry_pick_carries_the_picked_commits_note_and_a_commit_is_dated_now(repo: Path) -> None:
    from tests.hooks.test_hooks import make_session, note

    oxide(repo, "hooks", "install")
    sid = make_session(repo)
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "picked.txt").write_text("p")
    git(repo, "add", "picked.txt")
    before = int(time.time() * 1000)
    git(repo, "commit", "-q", "-m", "on side")
    picked = git(repo, "rev-parse", "HEAD").strip()
    side_note = note(repo, picked)
    assert side_note["sessions"] == [sid]
    from tests.conftest import make_ctx

    [cp] = [c for c in make_ctx(repo).index.checkpoint_rows() if c["kind"] == "pre-commit"]
    assert before <= cp["created_at"] <= int(time.time() * 1000)  # the checkpoint is taken now
    git(repo, "checkout", "-q", "main")
    (repo / ".git" / "oxide" / "worktrees" / "main" / "current-session").unlink()  # no session now
    git(repo, "cherry-pick", picked)
    carried = note(repo, "HEAD")
    assert carried["sessions"] == [sid] and set(side_note["checkpoints"]) <= set(carried["checkpoints"])



def test_a_cherry_pick_is_noted_with_the_picked_commits_sessions_then_the_current_one(repo: Path) -> None:
    """git names the picked commit in CHERRY_PICK_HEAD while the pick commits: its note's sessions
    come first, the session current now after them."""
    from tests.hooks.test_hooks import idle, make_session, note

    oxide(repo, "hooks", "install")
    sid = make_session(repo)
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "picked.txt").write_text("p")
    git(repo, "add", "picked.txt")
    git(repo, "commit", "-q", "-m", "on side")
    picked = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    idle(repo)  # the checkout's own job is done: it makes no session current after ours
    later = make_session(repo, 2)
    (repo / "main.txt").write_text("m")
    git(repo, "add", "main.txt")
    git(repo, "commit", "-q", "-m", "on main")  # else the pick would be the very same commit object
    git(repo, "cherry-pick", picked)
    assert git(repo, "rev-parse", "HEAD").strip() != picked
    carried = note(repo, "HEAD")
    assert carried["sessions"] == [sid, later]
    assert set(note(repo, picked)["checkpoints"]) <= set(carried["checkpoints"])


@pytest.mark.parametrize("finish", ["commit", "continue", "continue -x", "edited subject"])
def test_a_cherry_pick_that_stopped_on_a_conflict_carries_the_picked_commits_note(repo: Path, finish: str) -> None:
    """git names the picked commit only while a pick goes through: one that stopped on a conflict
    and was finished by `git commit` or `--continue` reaches post-commit as a plain commit. The
    reflog says it was a pick, and the picked commit is found by its author line and subject (or
    by -x's line); a subject changed while resolving finds nothing, and nothing is guessed."""
    from tests.hooks.test_hooks import idle, make_session, note

    oxide(repo, "hooks", "install")
    sid = make_session(repo)
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "README.md").write_text("the agent's version\n")
    git(repo, "commit", "-q", "-am", "agent's change")
    picked = git(repo, "rev-parse", "HEAD").strip()
    assert note(repo, picked)["sessions"] == [sid]
    git(repo, "checkout", "-q", "main")
    idle(repo)
    (repo / ".git" / "oxide" / "worktrees" / "main" / "current-session").unlink()  # no session now
    (repo / "README.md").write_text("yours\n")
    git(repo, "commit", "-q", "-am", "your change")
    idle(repo)
    x = ["-x"] if finish.endswith("-x") else []
    r = subprocess.run(["git", "cherry-pick", *x, picked], cwd=repo, capture_output=True, text=True)
    assert r.returncode != 0 and "conflict" in (r.stdout + r.stderr).lower()
    (repo / "README.md").write_text("both\n")
    git(repo, "add", "README.md")
    if finish == "commit":
        git(repo, "commit", "-q", "--no-edit")  # keeps "# Conflicts:" in the message
    elif finish == "edited subject":
        git(repo, "commit", "-q", "-m", "merged by hand")
    else:
        subprocess.run(["git", "cherry-pick", "--continue"], cwd=repo, check=True, capture_output=True,
                       env={**os.environ, "GIT_EDITOR": "true"})
    head = git(repo, "rev-parse", "HEAD").strip()
    assert head != picked and git(repo, "show", "-s", "--format=%an", "HEAD").strip()
    carried = note(repo, "HEAD")
    if finish == "edited subject":
        assert carried == {}  # nothing says which commit it was: no note is made up
    else:
        assert carried["sessions"] == [sid]
        assert set(note(repo, picked)["checkpoints"]) <= set(carried["checkpoints"])


def test_a_pre_commit_checkpoint_of_a_commit_that_never_happened_is_not_given_to_another(repo: Path) -> None:
    """A commit aborted after its pre-commit hook (an empty message) leaves its checkpoint pending;
    a later commit elsewhere (another branch, pre-commit skipped by --no-verify) is not its commit:
    its note does not get that checkpoint."""
    from tests.hooks.test_hooks import idle, make_session, note

    base = git(repo, "rev-parse", "HEAD").strip()
    oxide(repo, "hooks", "install")
    make_session(repo)
    for n in (1, 2):
        (repo / f"m{n}.txt").write_text("m")
        git(repo, "add", f"m{n}.txt")
        git(repo, "commit", "-q", "-m", f"main {n}")
    (repo / "aborted.txt").write_text("a")
    git(repo, "add", "aborted.txt")
    assert "empty commit message" in subprocess.run(["git", "commit", "-m", ""], cwd=repo, capture_output=True,
                                                    text=True).stderr
    idle(repo)
    pending = repo / ".git" / "oxide" / "worktrees" / "main" / "pre-commit.json"
    stale = json.loads(pending.read_text())["checkpoint"]
    git(repo, "rm", "-q", "--cached", "aborted.txt")  # the other branch's commit does not carry it
    (repo / "aborted.txt").unlink()
    git(repo, "checkout", "-q", "-b", "other", base)
    (repo / "o.txt").write_text("o")
    git(repo, "add", "o.txt")
    git(repo, "commit", "-q", "--no-verify", "-m", "on other")
    got = note(repo, "HEAD")
    assert got["checkpoints"] == [] and stale not in json.dumps(got)
    assert not pending.exists()  # read once: no later commit gets it either


def test_a_commit_remembers_its_session_for_the_branch_and_one_without_a_session_logs_nothing(repo: Path) -> None:
    """The session of a branch's last commit is the one made current when the branch is checked
    out again, even when no session was current as the branch was left; a commit made while no
    session is current is noted with none, and no job fails."""
    from oxide_git.store import writes as store
    from tests.conftest import make_ctx
    from tests.hooks.test_hooks import idle, make_session, note

    oxide(repo, "hooks", "install")
    current = repo / ".git" / "oxide" / "worktrees" / "main" / "current-session"
    git(repo, "checkout", "-q", "-b", "side")
    idle(repo)
    sid = make_session(repo)
    (repo / "s.txt").write_text("s")
    git(repo, "add", "s.txt")
    git(repo, "commit", "-q", "-m", "on side")
    idle(repo)
    current.unlink()  # no session current as the branch is left
    git(repo, "checkout", "-q", "main")
    idle(repo)
    (repo / "m.txt").write_text("m")
    git(repo, "add", "m.txt")
    git(repo, "commit", "-q", "-m", "no session")
    assert note(repo).get("sessions", []) == []  # no session, no checkpoint: nothing to note
    git(repo, "checkout", "-q", "side")
    idle(repo)
    assert store.current_session(make_ctx(repo)) == sid
    assert (repo / ".git" / "oxide" / "log").read_text() == ""  # the hooks' stderr goes there: no job failed


def test_the_first_commit_of_an_orphan_branch_is_noted_with_its_checkpoint(repo: Path) -> None:
    """A root commit (no parent) is a plain commit like any other: its pending checkpoint is its."""
    from tests.hooks.test_hooks import make_session, note

    oxide(repo, "hooks", "install")
    sid = make_session(repo)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    (repo / "root.txt").write_text("r")
    git(repo, "add", "root.txt")
    git(repo, "commit", "-q", "-m", "root")
    got = note(repo)
    assert got["sessions"] == [sid] and len(got["checkpoints"]) == 1
    assert (repo / ".git" / "oxide" / "log").read_text() == ""


def test_a_branchs_session_removed_since_is_not_made_current_again(repo: Path) -> None:
    from oxide_git.store import writes as store
    from tests.conftest import make_ctx
    from tests.hooks.test_hooks import idle, make_session

    oxide(repo, "hooks", "install")
    git(repo, "checkout", "-q", "-b", "side")
    idle(repo)
    gone = make_session(repo)
    git(repo, "checkout", "-q", "main")  # side -> gone is remembered
    idle(repo)
    kept = make_session(repo, 2)
    oxide(repo, "rm", gone, "--yes")
    git(repo, "checkout", "-q", "side")
    idle(repo)
    assert store.current_session(make_ctx(repo)) == kept


def test_waiting_for_a_drainer_that_holds_the_lock_gives_up_at_the_timeout(repo: Path) -> None:
    import fcntl

    oxide(repo, "init")
    with open(repo / ".git" / "oxide" / "hooks.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a drainer at work
        t0 = time.monotonic()
        assert wait_idle(repo / ".git", timeout=0.3) is False
        assert 0.3 <= time.monotonic() - t0 < 5
    assert wait_idle(repo / ".git", timeout=5) is True  # done: idle at once


def test_work_a_drainer_left_unfinished_is_not_idle(repo: Path) -> None:
    """A drainer that died mid-way leaves its jobs in hooks.queue.work (the next drainer takes
    them up): until then the hooks are not idle, though no drainer holds the lock."""
    oxide(repo, "init")
    work = repo / ".git" / "oxide" / "hooks.queue.work"
    work.write_text(f"pre-commit\t{repo}\t\t\n")
    assert wait_idle(repo / ".git", timeout=0.3) is False
    work.unlink()
    assert wait_idle(repo / ".git", timeout=5) is True


def test_a_damaged_pending_checkpoint_is_passed_over_and_the_commit_still_noted(repo: Path) -> None:
    """pre-commit.json that is no JSON, or names no commit as its HEAD, ties no checkpoint to the
    commit; the commit is noted with the current session all the same, and no job fails."""
    from tests.hooks.test_hooks import make_session, note

    oxide(repo, "hooks", "install")
    sid = make_session(repo)
    pending = repo / ".git" / "oxide" / "worktrees" / "main" / "pre-commit.json"
    for n, damaged in enumerate(("{not json", json.dumps({"head": "not-a-commit", "checkpoint": "x" * 40,
                                                          "sessions": [sid]}))):
        (repo / f"d{n}.txt").write_text("d")
        git(repo, "add", f"d{n}.txt")
        pending.write_text(damaged)
        git(repo, "commit", "-q", "--no-verify", "-m", f"d{n}")  # no pre-commit: the damaged file is read
        got = note(repo)
        assert got["sessions"] == [sid] and got["checkpoints"] == [], got
    assert (repo / ".git" / "oxide" / "log").read_text() == ""
