"""The pre-commit checkpoint holds the worktree as it was when the hook ran, not as the background
drainer finds it later (issue 37, item 4)."""

from __future__ import annotations

import fcntl
import time
from pathlib import Path

from tests.conftest import git, make_ctx, oxide
from tests.hooks.test_hooks import common_dir, idle, make_session


def _pre_commit(repo: Path) -> dict[str, object]:
    ctx = make_ctx(repo)
    try:
        rows = ctx.index.query("SELECT id, tree, created_at, head FROM checkpoints WHERE kind='pre-commit'")
        assert len(rows) == 1, rows
        return dict(rows[0])
    finally:
        ctx.close()


def _file(repo: Path, tree: str, path: str) -> bytes | None:
    ctx = make_ctx(repo)
    try:
        t = ctx.repo.git[tree]
        try:
            return bytes(t[path].data)
        except KeyError:
            return None
    finally:
        ctx.close()


def test_edits_after_the_commit_returned_are_not_in_its_checkpoint(repo: Path) -> None:
    oxide(repo, "init", "--hooks")
    make_session(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("committed\n")
    (repo / "later.txt").write_text("untracked before the commit\n")
    (repo / "src" / "app.py").write_text("print('unstaged at the commit')\n")
    git(repo, "add", "README.md")
    with open(common_dir(repo) / "oxide" / "hooks.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the drainer waits: its jobs run after the edits below
        t0 = int(time.time() * 1000)
        git(repo, "commit", "-q", "-m", "readme")
        t1 = int(time.time() * 1000)
        time.sleep(0.02)  # past the file system's clock tick
        # an agent still at work as `git commit` returns
        (repo / "README.md").write_text("edited after the commit\n")
        (repo / "later.txt").write_text("changed after the commit\n")
        (repo / "new.txt").write_text("made after the commit\n")
        (repo / ".gitignore").unlink()
    idle(repo)
    cp = _pre_commit(repo)
    tree = str(cp["tree"])
    assert _file(repo, tree, "README.md") == b"committed\n"  # the committed content
    assert _file(repo, tree, "src/app.py") == b"print('unstaged at the commit')\n"  # read: not changed since
    assert _file(repo, tree, "later.txt") is None  # changed since: as the tree committed has it (not in it)
    assert _file(repo, tree, "new.txt") is None
    assert _file(repo, tree, ".gitignore") == b"*.log\nbuild/\n"
    assert t0 <= int(str(cp["created_at"])) <= t1  # dated when the hook ran
    assert cp["head"] == head
    assert not list((common_dir(repo) / "oxide" / "worktrees" / "main").glob("pre-commit.*"))  # marker gone
    note = git(repo, "notes", "--ref=oxide", "show", "HEAD")
    assert str(cp["id"]) in note


def test_without_a_current_session_no_tree_is_written(repo: Path) -> None:
    """No session to tie a checkpoint to: the shim runs no `git write-tree` and leaves no marker."""
    oxide(repo, "init", "--hooks")
    (repo / "README.md").write_text("committed\n")
    git(repo, "commit", "-q", "-am", "readme")
    idle(repo)
    assert not list((common_dir(repo) / "oxide" / "worktrees").glob("*/pre-commit.*"))
    queue = (common_dir(repo) / "oxide" / "hooks.queue").read_text()
    assert queue.splitlines()[0].endswith("\t")  # the tree's field is empty


def test_the_shims_read_head_from_its_ref_or_from_git(repo: Path) -> None:
    """The shims read HEAD's commit from its loose ref file, without a process; packed refs (and
    anything else: reftable, an unborn branch, a symbolic ref) go through `git rev-parse`."""
    oxide(repo, "init", "--hooks")
    make_session(repo)
    git(repo, "pack-refs", "--all")  # no loose ref for main: git says
    before = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")  # the commit writes a loose ref again
    one = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "--detach")
    git(repo, "commit", "-q", "--allow-empty", "-m", "detached")  # HEAD holds the commit itself
    two = git(repo, "rev-parse", "HEAD").strip()
    idle(repo)
    lines = [ln.split("\t") for ln in (common_dir(repo) / "oxide" / "hooks.queue").read_text().splitlines()]
    heads = [(f[0], f[3]) for f in lines if f[0] in ("pre-commit", "post-commit")]
    assert heads == [("pre-commit", before), ("post-commit", one), ("pre-commit", one), ("post-commit", two)]
    assert str(_first_pre_commit(repo)) in git(repo, "notes", "--ref=oxide", "show", one)


def _first_pre_commit(repo: Path) -> str:
    ctx = make_ctx(repo)
    try:
        return str(ctx.index.query("SELECT id FROM checkpoints WHERE kind='pre-commit' ORDER BY created_at")[0][0])
    finally:
        ctx.close()


def test_a_checkpoint_as_of_a_tree_and_a_moment(repo: Path) -> None:
    """``snapshots.take(as_of=...)`` when HEAD moved on since that moment: built from the tree
    then, a file changed since keeps that tree's version, one not changed since is read."""
    from oxide_git.store import snapshots

    (repo / "README.md").write_text("staged then\n")
    (repo / "src" / "app.py").write_text("print('then, unstaged')\n")
    git(repo, "add", "README.md")
    then = git(repo, "write-tree").strip()
    time.sleep(0.02)
    moment = time.time_ns()
    time.sleep(0.02)
    git(repo, "commit", "-q", "-m", "readme")
    (repo / "README.md").write_text("committed later\n")
    git(repo, "commit", "-q", "-am", "later")  # HEAD moved on: README.md differs from the tree then
    ctx = make_ctx(repo)
    try:
        cp = snapshots.take(ctx.repo, kind="pre-commit", now_ms=moment // 1_000_000, as_of=(then, moment))
    finally:
        ctx.close()
    assert _file(repo, cp.tree, "README.md") == b"staged then\n"
    assert _file(repo, cp.tree, "src/app.py") == b"print('then, unstaged')\n"


def test_a_queued_tree_without_its_mark_is_not_trusted(repo: Path) -> None:
    from oxide_git.hooks.impl import hook_moment

    oxide(repo, "init")
    wdir = common_dir(repo) / "oxide" / "worktrees" / "main"
    wdir.mkdir(parents=True, exist_ok=True)
    assert hook_moment(wdir, "a" * 40) is None  # no mark: the drainer's own moment, as before
    (wdir / "pre-commit.x").write_text("")
    assert hook_moment(wdir, "../x") is None and hook_moment(wdir, "x") is None  # only a tree id names a mark
    (wdir / f"pre-commit.{'b' * 40}").write_text("")
    assert hook_moment(wdir, "b" * 40)
