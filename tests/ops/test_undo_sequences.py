"""Random sequences of what users do, in a real repository, checking that nothing they had is lost.

A hypothesis state machine edits, creates, deletes, stages, commits, amends and switches branches
with the real git CLI, and runs git oxide's checkpoint, rewind --code/--both, undo (and undo
again), fork, rm, gc and pull from a second clone in this process (click's CliRunner: the real
commands, their real output). After every step:

- every version of a file the user had when they ran git oxide is still in the worktree, in the
  history of a branch (or HEAD's reflog), in the index, or in a checkpoint whose id an output
  named; an undo without --force must lose nothing even without its own checkpoint;
- a rewind or undo changed no path it did not list (and an undo none it listed as kept);
- git oxide changed nothing of the user's (HEAD, branches, index) and `doctor` finds nothing.

The fast suite runs a few short sequences; `make reliability` (-m slow) runs
``OXIDE_UNDO_SEQUENCES`` of them (default 100, about 5 minutes; 15 with OXIDE_RELIABILITY_QUICK).
A sequence that ever failed is kept below as a plain test that replays it step by step.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pygit2
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from oxide_git.cli import main
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, git, make_ctx, new_repo

PATHS = ["calc.py", "README.md", "d/x.txt", "d"]
Tree = dict[str, str]  # path -> blob id


def _worktree(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in files:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def _blobs(tree: pygit2.Tree, prefix: str = "") -> Tree:
    out: Tree = {}
    for e in tree:
        if e.type_str == "tree":
            out.update(_blobs(tree[e.name].peel(pygit2.Tree), prefix + e.name + "/"))
        else:
            out[prefix + str(e.name)] = str(e.id)
    return out


class UserSequences(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="oxide-seq-"))
        self.root = new_repo(self.tmp / "repo")
        (self.root / "calc.py").write_text("def add(a, b): return a + b\n")
        git(self.root, "add", "-A")
        git(self.root, "commit", "-qm", "calc")
        self.now = NOW_MS
        self.version = 0
        self.named: dict[str, None] = {}  # checkpoints whose ids an output named, in that order
        self.must_keep: set[tuple[str, str]] = set()  # (path, blob) the user had when oxide ran
        self.forks: list[str] = []
        self.log: list[str] = []
        self.trees: dict[str, Tree] = {}
        self.clone: Path | None = None
        self.session = Session(id="0" * 12 + "5" * 20, agent="claude", title="work", cwd=str(self.root),
                               worktree="main")
        ctx = make_ctx(self.root, self.now)
        store.append(ctx, self.session, [Message("user" if i % 2 == 0 else "assistant", (Part.text(f"m{i}"),),
                                                 created_at=1000 + i) for i in range(3)])
        store.set_current_session(ctx, self.session.id)
        self.cwd = os.getcwd()

    def teardown(self) -> None:
        os.chdir(self.cwd)
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- running git oxide, as a user does -------------------------------------------------
    def oxide(self, *args: str) -> tuple[int, Any, str]:
        """Run `git oxide ARGS` in this process; (exit code, parsed --json output or None, stderr)."""
        self.now += 1000
        os.chdir(self.root)
        try:
            r = CliRunner().invoke(main, list(args), env={"OXIDE_NOW": str(self.now)})
        finally:
            os.chdir(self.cwd)
        self.log.append(f"git oxide {' '.join(args)} -> {r.exit_code}")
        assert r.exit_code in (0, 1), (args, r.stdout, r.stderr, r.exception)
        assert "Traceback" not in r.stderr and "unexpected error" not in r.stderr, r.stderr
        out = json.loads(r.stdout) if r.exit_code == 0 and "--json" in args and r.stdout.strip() else None
        return r.exit_code, out, r.stderr

    def user_state(self) -> tuple[Any, ...]:
        g = pygit2.Repository(str(self.root))
        heads = {r: str(g.references[r].target) for r in g.references if r.startswith("refs/heads/")}
        path = self.root / ".git" / "index"
        index = path.read_bytes() if path.exists() else b""
        return (self.root / ".git" / "HEAD").read_text(), heads, index

    def before_oxide(self) -> tuple[dict[str, bytes], tuple[Any, ...]]:
        files = _worktree(self.root)
        self.must_keep |= {(p, str(pygit2.hash(data))) for p, data in files.items()}
        return files, self.user_state()

    def after_oxide(self, files: dict[str, bytes], state: tuple[Any, ...], said: set[str] | None = None,
                    kept: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        assert self.user_state() == state, "git oxide changed the user's HEAD, branches or index"
        now = _worktree(self.root)
        changed = {p for p in files.keys() | now.keys() if files.get(p) != now.get(p)}
        allowed = said if said is not None else set()
        assert changed <= allowed, f"changed paths it did not name: {sorted(changed - allowed)}"
        assert not changed & kept, f"changed paths it said it kept: {sorted(changed & kept)}"

    # --- what the user does with files and git ---------------------------------------------
    def _write(self, path: str, data: bytes | None) -> None:
        full = self.root / path
        try:
            old = full.read_bytes() if full.is_file() else None
            if data is None:
                full.unlink()
            else:
                full.parent.mkdir(parents=True, exist_ok=True)
                full.write_bytes(data)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, FileExistsError):
            return  # a user cannot do that here either (a file where a folder is, ...)
        if old is not None:  # the user replaced this version themselves
            self.must_keep.discard((path, str(pygit2.hash(old))))
        if data is None and full.parent != self.root:
            try:
                full.parent.rmdir()
            except OSError:
                pass

    @rule(path=st.sampled_from(PATHS), delete=st.booleans())
    def edit(self, path: str, delete: bool = False) -> None:
        """Edit or create a file (a new version each time), or delete it."""
        self.version += 1
        self._write(path, None if delete else f"{path} version {self.version}\n".encode())

    @rule(how=st.sampled_from(["stage", "commit", "commit -a", "amend"]))
    def commit(self, how: str) -> None:
        if how in ("stage", "amend"):
            git(self.root, "add", "-A")
        if how != "stage":
            git(self.root, "commit", "-q", *(["--amend", "--no-edit"] if how == "amend" else ["-m", how]),
                *(["-a"] if how == "commit -a" else []), check=False)

    @rule(branch=st.sampled_from(["main", "other"]))
    def switch(self, branch: str) -> None:
        exists = git(self.root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False).strip()
        git(self.root, "switch", "-q", *([] if exists else ["-c"]), branch, check=False)  # refused: no change

    def append_message(self) -> None:
        """The agent goes on talking (a session ref moves after an operation)."""
        ctx = make_ctx(self.root, self.now)
        sid = ([self.session.id, *self.forks])[self.version % (1 + len(self.forks))]
        from oxide_git.store import sessionlog

        log = sessionlog.load(ctx.repo, sid)
        if log is not None:
            self.version += 1
            store.append(ctx, log.session, [Message("user", (Part.text(f"said {self.version}"),))])

    # --- what the user does with git oxide -------------------------------------------------
    @rule()
    def checkpoint(self) -> None:
        files, state = self.before_oxide()
        code, out, _err = self.oxide("checkpoint", "--json")
        assert code == 0 and out["id"]
        self.named[out["id"]] = None
        self.after_oxide(files, state)

    @precondition(lambda self: self.named)
    @rule(data=st.data(), mode=st.sampled_from(["--code", "--both"]))
    def rewind(self, data: st.DataObject, mode: str) -> None:
        target = data.draw(st.sampled_from(list(self.named)))  # ids vary with the temporary path
        files, state = self.before_oxide()
        code, out, _err = self.oxide("rewind", target, mode, "--yes", "--json")
        if code == 0:
            self.named[out["before_checkpoint"]] = None  # the output names the state it replaced
            said = {p for k in ("added", "modified", "deleted") for p in out["files"][k]}
            self.after_oxide(files, state, said)
        else:
            self.after_oxide(files, state)

    @rule(force=st.booleans())
    def undo(self, force: bool) -> None:
        files, state = self.before_oxide()
        code, out, err = self.oxide("undo", "--yes", "--json", *(["--force"] if force else []))
        if code:
            assert err.startswith("error: "), err
            self.after_oxide(files, state)
            return
        said = {p for k in ("added", "modified", "deleted") for p in out["files"].get(k, [])}
        self.after_oxide(files, state, said, set(out["files"].get("kept", [])))
        if out["files"].get("overwritten"):
            assert force and out.get("checkpoint")
        if force and out.get("checkpoint"):  # what --force overwrote is in the checkpoint it names
            self.named[out["checkpoint"]] = None

    @rule(what=st.sampled_from(["talk", "fork", "rm", "gc", "pull"]), data=st.data())
    def sessions(self, what: str, data: st.DataObject) -> None:
        """The agent talks on, or the user forks, removes, collects garbage or pulls (one rule:
        the file operations above are where a loss can happen, so they get most of the steps)."""
        if what == "talk":
            self.append_message()
        elif what == "rm":
            if self.forks:
                self.rm(data.draw(st.sampled_from(self.forks)))
        else:
            getattr(self, what)()

    def fork(self) -> None:
        files, state = self.before_oxide()
        code, out, _err = self.oxide("fork", self.session.id, "--json")
        if code == 0:
            self.forks.append(out["id"])
        self.after_oxide(files, state)

    def rm(self, victim: str) -> None:
        files, state = self.before_oxide()
        code, _out, _err = self.oxide("rm", victim, "--recursive", "--yes", "--json")
        if code == 0:
            self.forks.remove(victim)
        self.after_oxide(files, state)

    def gc(self) -> None:
        files, state = self.before_oxide()
        code, _out, _err = self.oxide("gc")
        assert code == 0
        self.after_oxide(files, state)

    def pull(self) -> None:
        """A teammate's clone pushes a session; this repository pulls it."""
        from oxide_git.ops.share import push

        if self.clone is None:
            bare = self.tmp / "origin.git"
            git(self.tmp, "init", "-q", "--bare", str(bare))
            git(self.root, "remote", "add", "origin", str(bare))
            git(self.root, "push", "-q", "origin", "HEAD:refs/heads/main", check=False)
            git(self.tmp, "clone", "-q", str(bare), str(self.tmp / "clone"))
            self.clone = self.tmp / "clone"
        self.version += 1
        mate = Session(id="0" * 12 + "7" * 20, agent="claude", title="mate", cwd=str(self.clone),
                       worktree="main")
        ctx = make_ctx(self.clone, self.now)
        from oxide_git.store import sessionlog

        log = sessionlog.load(ctx.repo, mate.id)
        said = Message("user", (Part.text(f"mate {self.version}"),))
        store.append(ctx, log.session if log else mate, [said])
        push(ctx)
        files, state = self.before_oxide()
        code, _out, _err = self.oxide("pull", "--json")
        assert code == 0
        self.after_oxide(files, state)

    # --- after every step --------------------------------------------------------------------
    def _tree(self, oid: str) -> Tree:
        if oid not in self.trees:
            g = pygit2.Repository(str(self.root))
            obj = g.get(oid)
            self.trees[oid] = _blobs(obj.peel(pygit2.Tree)) if obj is not None else {}
        return self.trees[oid]

    @invariant()
    def nothing_is_lost(self) -> None:
        g = pygit2.Repository(str(self.root))
        places: set[tuple[str, str]] = {(p, str(pygit2.hash(d))) for p, d in _worktree(self.root).items()}
        places |= {(e.path, str(e.id)) for e in g.index}
        tips = [g.references[r].target for r in g.references if r.startswith("refs/heads/")]
        if not g.head_is_unborn:
            tips += [e.oid_new for e in g.references["HEAD"].log()]
        seen: set[str] = set()
        for tip in tips:
            for c in g.walk(tip):
                if str(c.id) in seen:
                    break
                seen.add(str(c.id))
                places |= set(self._tree(str(c.id)).items())
        for cp in self.named:
            places |= set(self._tree(cp).items())
        lost = self.must_keep - places
        assert not lost, f"lost {sorted(lost)} after:\n" + "\n".join(self.log[-8:])

    @invariant()
    def doctor_is_clean(self) -> None:
        from oxide_git.ops.doctor import diagnose

        found = [f for f in diagnose(make_ctx(self.root, self.now))["findings"] if f["level"] != "info"]
        assert not found, found


def _run(examples: int, steps: int) -> None:
    run_state_machine_as_test(UserSequences, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=True,
        suppress_health_check=list(HealthCheck)))


def test_short_random_sequences_lose_nothing() -> None:
    _run(5, 15)


@pytest.mark.slow
def test_long_random_sequences_lose_nothing() -> None:
    quick = os.environ.get("OXIDE_RELIABILITY_QUICK", "") not in ("", "0")
    _run(int(os.environ.get("OXIDE_UNDO_SEQUENCES", "15" if quick else "100")), 40)


def test_the_issue_sequence_loses_nothing() -> None:
    """Issue 38's reproduction: checkpoint, garbage, rewind --code, commit README, new work, undo."""
    m = UserSequences()
    try:
        m.checkpoint()
        m.edit("calc.py")
        m.edit("d/x.txt")
        [target] = m.named
        m.rewind(_Draw(target), "--code")  # type: ignore[arg-type]
        assert (m.root / "calc.py").read_text().startswith("def add")
        m.edit("README.md")
        m.commit("stage")
        m.commit("commit")
        m.edit("calc.py")
        m.nothing_is_lost()
        m.undo(False)  # without its own checkpoint counted: the new calc.py must still be there
        m.nothing_is_lost()
        assert (m.root / "calc.py").read_text().startswith("calc.py version 4")
        m.undo(False)  # again: a redo
        m.undo(True)
        m.nothing_is_lost()
        m.doctor_is_clean()
    finally:
        m.teardown()


def test_found_undo_of_a_rewind_that_changed_nothing_keeps_an_edit_made_since() -> None:
    """Found by the machine on main: a rewind that wrote nothing, an edit, an undo: the undo put
    back the state before the rewind over the edit."""
    m = UserSequences()
    try:
        m.checkpoint()
        m.rewind(_Draw(next(iter(m.named))), "--code")  # type: ignore[arg-type]
        m.edit("calc.py")
        m.undo(False)
        m.nothing_is_lost()
        m.doctor_is_clean()
    finally:
        m.teardown()


class _Draw:
    """Stands for hypothesis's ``data`` in a replayed step: draws the value given."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def draw(self, _strategy: Any) -> Any:
        return self.value
