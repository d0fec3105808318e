"""Crash safety of what runs beside the user: SIGKILL of `push`, of the `watch` daemon in the middle
of an import and of a checkpoint, and of `git gc` / `git oxide gc` in the middle of a repack while
a writer appends. After each kill nothing acknowledged is lost, `git fsck --strict` is clean,
`doctor` is clean, and the interrupted work can be redone.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from oxide_git.git import refs
from oxide_git.git.repo import find_repo
from oxide_git.store import sessionlog

from ..conftest import fsck_clean, git, wait_for
from ..gitlocks import clear_killed_gc_locks
from . import report
from .conftest import assert_clean_exit, doctor_heals, env, run_oxide, trials
from .test_crash import (
    DRIVER,
    SID,
    _check_store,
    _claude_transcript,
    _counts,
    _init,
    _kill_at,
    _messages,
    _timed,
)

pytestmark = pytest.mark.slow


def _texts(root: Path) -> dict[str, list[str]]:
    """Every session's messages, in order (by agent id, which is the same in every repository)."""
    r = find_repo(root)
    out = {}
    for _n, oid in refs.iter_refs(r.git, refs.SESSIONS):
        log = sessionlog.load_commit(r, oid)
        out[log.session.native_id or log.session.id] = [m.text() for _q, m in sessionlog.iter_messages(r, log.commit.tree)]
    return out


def _oxide_refs(root: Path) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide/sessions/",
              "refs/oxide/checkpoints/", "refs/notes/oxide")
    return dict(line.split() for line in out.splitlines())


# ---------------------------------------------------------------- push


def test_push_killed_then_rerun_finishes(tmp_path: Path) -> None:
    """A push killed at random: the remote stays a valid repository whose refs are each all or
    nothing, the local store is untouched, and pushing again sends the rest."""
    root = _init(tmp_path / "repo", files=200)
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript, sessions=3, messages=1500)
    assert run_oxide(root, "import", "--agent", "claude", "-q", str(transcript)).returncode == 0
    for i in range(3):
        (root / f"cp{i}.txt").write_text(f"state {i}\n" * 1000)
        assert run_oxide(root, "checkpoint", "-m", f"state {i}").returncode == 0
    local = _oxide_refs(root)
    probe = tmp_path / "probe.git"
    git(tmp_path, "init", "-q", "--bare", str(probe))
    dur = _timed(["git", "oxide", "push", "--checkpoints", str(probe)], root)
    rng = random.Random(8101)
    for t in range(trials(12, 2)):
        bare = tmp_path / f"shared{t}.git"
        git(tmp_path, "init", "-q", "--bare", str(bare))
        _out, rc = _kill_at(["git", "oxide", "push", "--checkpoints", str(bare)], root,
                            rng.uniform(0.02, dur * 1.1))
        if rc is not None:
            assert rc == 0, "push failed on its own"
        fsck_clean(bare)
        for lock in bare.rglob("*.lock"):  # a local remote's receive-pack died with it (a server's would not)
            lock.unlink()
        remote = _oxide_refs(bare)
        report.add("half_done", int(rc is None and remote != local))
        assert all(local.get(n) == oid for n, oid in remote.items()), "the remote holds a ref we never had"
        assert _oxide_refs(root) == local, "push changed the local store"
        _check_store(root)
        r = run_oxide(root, "push", "--checkpoints", str(bare))
        assert_clean_exit(r, "push rerun")
        assert r.returncode == 0, r.stderr
        assert _oxide_refs(bare) == local, "the rerun did not finish the push"
        fsck_clean(bare)
    # what was pushed is whole: a fresh clone pulls every message of every session
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(tmp_path / "shared0.git"), str(clone))
    assert run_oxide(clone, "init").returncode == 0
    r = run_oxide(clone, "pull", "--checkpoints")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert _texts(clone) == _texts(root)
    report.add("messages_acked", sum(_counts(root).values()))


# ---------------------------------------------------------------- the watch daemon


def _start_watch(root: Path) -> int:
    """Start the daemon; a killed one (even a zombie nobody reaped) must not pass for running."""
    r = run_oxide(root, "watch", "--daemon", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(r.stdout)
    assert res["started"], res["message"]
    return int(res["pid"])


def _kill_watch(root: Path, pid: int) -> None:
    """SIGKILL the daemon and what it started (its import worker): its own process group."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # gone, or a zombie nobody reaps (a container's pid 1)
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.01)
    report.add("kills")
    r = run_oxide(root, "watch", "--stop", "--json")  # dead, even when nobody reaped it yet
    assert r.returncode == 0 and not json.loads(r.stdout)["stopped"], r.stdout


def _stop_watch(root: Path) -> None:
    r = run_oxide(root, "watch", "--stop", "--json")
    assert r.returncode == 0, r.stderr


def test_watch_killed_mid_import_then_restarted_finishes(tmp_path: Path) -> None:
    """The daemon imports a transcript big enough for the forked parser and is killed at random;
    restarted, it finishes: every line of the transcript is in the store once, in order."""
    store = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p"
    store.mkdir(parents=True, exist_ok=True)
    ref_root = _init(tmp_path / "reference")
    made = tmp_path / "made.jsonl"
    _claude_transcript(made, sessions=1, messages=9000, cwd=str(ref_root))
    t0 = time.monotonic()
    assert run_oxide(ref_root, "import", "--agent", "claude", "-q", str(made)).returncode == 0
    dur = time.monotonic() - t0
    expected = _texts(ref_root)
    rng = random.Random(8102)
    for t in range(trials(8, 2)):
        root = _init(tmp_path / f"r{t}")
        pid = _start_watch(root)
        transcript = store / f"40000000-0000-4000-8000-{t + 1:012d}.jsonl"
        _claude_transcript(transcript, sessions=1, messages=9000, cwd=str(root), tag=t + 1)
        time.sleep(rng.uniform(0.1, dur + 0.5))  # the daemon sees the file within ~0.3 s
        _kill_watch(root, pid)
        _check_store(root)
        got = _texts(root)
        want = {k.replace("000000000000", f"{t + 1:012d}"): v for k, v in expected.items()}
        report.add("half_done", int(got != want))
        assert all(v == want[k][:len(v)] for k, v in got.items()), f"trial {t}: a prefix is wrong"
        pid = _start_watch(root)
        try:
            wait_for(lambda: _texts(root) == want, 180)  # noqa: B023
        except AssertionError:
            log = (root / ".git" / "oxide" / "log").read_text()[-3000:]
            have = {k: len(v) for k, v in _texts(root).items()}
            raise AssertionError(f"trial {t}: the restarted daemon did not finish: {have} of "
                                 f"{ {k: len(v) for k, v in want.items()} }\n{log}") from None
        finally:
            _stop_watch(root)
        _check_store(root)
        assert run_oxide(root, "import", "--agent", "claude", "-q", str(transcript)).returncode == 0
        assert _texts(root) == want, f"trial {t}: a re-import changed the store"
        report.add("messages_acked", sum(len(v) for v in want.values()))
        transcript.unlink()


def _worktree_tree(root: Path, tmp: Path) -> str:
    """The tree of what is on disk (tracked and untracked, as a checkpoint takes it)."""
    e = {**env(), "GIT_INDEX_FILE": str(tmp / "scratch-index")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=root, env=e, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, env=e, check=True)
    return subprocess.run(["git", "write-tree"], cwd=root, env=e, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_watch_killed_mid_checkpoint(tmp_path: Path) -> None:
    """`git oxide checkpoint` answered by the daemon, which is killed while it works: an
    acknowledged checkpoint exists with the tree that was on disk; the command falls back to
    checkpointing itself, so the user's checkpoint is never lost."""
    files = 1500
    root = _init(tmp_path / "repo", files=files)
    pid = _start_watch(root)
    time.sleep(1.0)
    cmd = ["git", "oxide", "checkpoint", "-m", "x", "--json"]
    dur = _timed(cmd, root)
    rng = random.Random(8103)
    acked: list[tuple[str, str]] = []
    try:
        for t in range(trials(16, 2)):
            for i in range(0, files, 3):
                (root / "src" / f"d{i % 10}" / f"f{i}.py").write_text(f"x = {i} at {t}\n" * 20)
            (root / f"new{t}.txt").write_text("new\n")
            time.sleep(0.3)  # the daemon's journal has the changes
            want = _worktree_tree(root, tmp_path)
            p = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env())
            time.sleep(rng.uniform(0.0, dur))
            _kill_watch(root, pid)
            out, err = p.communicate(timeout=120)
            assert_clean_exit(subprocess.CompletedProcess(cmd, p.returncode, out, err), "checkpoint")
            if p.returncode == 0:
                cp = json.loads(out)
                acked.append((cp["id"], cp["tree"]))
                assert cp["tree"] == want, f"trial {t}: the checkpoint is not what was on disk"
            _check_store(root)
            pid = _start_watch(root)
            time.sleep(0.5)
    finally:
        _stop_watch(root)
    g = pygit2.Repository(str(root))
    listed = {c["id"]: c for c in json.loads(run_oxide(root, "checkpoints", "--json").stdout)}
    lost = [c for c, tree in acked if c not in listed or str(g[c].peel(pygit2.Commit).tree_id) != tree]
    report.add("checkpoints_acked", len(acked))
    report.add("checkpoints_lost", len(lost))
    assert not lost and acked, (lost, acked)
    fsck_clean(root)


# ---------------------------------------------------------------- gc


def test_gc_killed_mid_repack_while_a_writer_appends(tmp_path: Path) -> None:
    """`git gc`, `git repack -a -d` and `git oxide gc` killed at random while a store writer
    appends and checkpoints: every acknowledged message and checkpoint survives the packs being
    rewritten under the writer, and the gc can be run again."""
    root = _init(tmp_path / "repo", files=300)
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript, sessions=3, messages=2000)
    assert run_oxide(root, "import", "--agent", "claude", "-q", str(transcript)).returncode == 0
    r = subprocess.run([sys.executable, DRIVER, str(root), SID, "warm", "40", "4"], cwd=root,
                       capture_output=True, text=True, env=env())
    assert r.returncode == 0, r.stderr
    before = _texts(root)
    cps = set(_oxide_refs(root))
    cmds = [["git", "gc", "--quiet"], ["git", "repack", "-a", "-d", "-f", "-q"], ["git", "oxide", "gc"]]
    durs = [_timed(c, root) for c in cmds]
    rng = random.Random(8104)
    acked: list[str] = [f"warm-{i}" for i in range(40)]
    acked_cps: list[tuple[str, str]] = []
    for t in range(trials(18, 3)):  # quick: one of each of git gc, repack, git oxide gc
        which = t % len(cmds)
        writer = subprocess.Popen([sys.executable, DRIVER, str(root), SID, f"g{t}", "30", "6"], cwd=root,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        _out, rc = _kill_at(cmds[which], root, rng.uniform(0.02, durs[which] * 1.1))
        report.add("half_done", int(rc is None))
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, f"trial {t}: the writer failed beside a killed gc: {err}"
        for line in out.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "M":
                acked.append(rest)
            elif kind == "C":
                ref, tree = rest.split()
                acked_cps.append((ref, tree))
        clear_killed_gc_locks(root / ".git")  # before this trial runs git again
        _check_store(root)
        present = _messages(root, SID)
        missing = [m for m in acked if m not in set(present)]
        report.add("messages_lost", len(missing))
        assert not missing, f"trial {t}: acked messages lost: {missing[:5]}"
        assert len(present) == len(set(present)), f"trial {t}: duplicated messages"
        now = _texts(root)
        assert all(now[k] == v for k, v in before.items() if k != "n-" + SID[-6:]), "an imported session changed"
        assert cps <= set(_oxide_refs(root)), "a checkpoint or session ref vanished"
        g = pygit2.Repository(str(root))
        lost = [r for r, tree in acked_cps if refs.read(g, r) is None
                or str(g[refs.read(g, r)].peel(pygit2.Commit).tree_id) != tree]
        report.add("checkpoints_lost", len(lost))
        assert not lost, f"trial {t}: acked checkpoints lost: {lost}"
        r = subprocess.run(cmds[which], cwd=root, capture_output=True, text=True, env=env())
        assert r.returncode == 0, f"trial {t}: {' '.join(cmds[which])} rerun failed: {r.stderr}"
    report.add("messages_acked", len(acked))
    report.add("checkpoints_acked", len(acked_cps))
    r = subprocess.run(["git", "gc", "--aggressive", "--prune=now", "--quiet"], cwd=root, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    _check_store(root)
    assert _messages(root, SID)[:len(acked)] == _messages(root, SID)[:len(acked)]
    doctor_heals(root)
