"""Crash safety: SIGKILL real `git oxide` processes and store writers at seeded random moments.

After every kill: `git fsck --full` is clean, `doctor --fix` leaves a consistent store, everything
acknowledged before the kill is still there, and rerunning the interrupted command finishes the job.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from oxide_git.git import refs
from oxide_git.git.repo import find_repo
from oxide_git.imports import importing
from oxide_git.store import sessionlog

from ..conftest import fsck_clean, git
from . import report
from .conftest import assert_clean_exit, doctor_heals, env, run_oxide, trials

pytestmark = pytest.mark.slow
DRIVER = str(Path(__file__).with_name("driver.py"))
SID = "0" * 12 + "c" * 20


def _init(root: Path, files: int = 0) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    for i in range(files):
        (root / "src" / f"d{i % 10}").mkdir(parents=True, exist_ok=True)
        (root / "src" / f"d{i % 10}" / f"f{i}.py").write_text(f"x = {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    r = run_oxide(root, "init")
    assert r.returncode == 0, r.stderr
    return root


def _kill_at(cmd: list[str], cwd: Path, delay: float) -> tuple[str, int | None]:
    """Start ``cmd``, SIGKILL it after ``delay`` seconds; its stdout so far and exit code (None: killed)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(),
                         text=True, start_new_session=True)
    try:
        p.wait(timeout=delay)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        killed = True
    out, _err = p.communicate()
    if killed:
        report.add("kills")
        _age_dead_locks(cwd)
    report.add("trials")
    return out, None if killed else p.returncode


def _timed(cmd: list[str], cwd: Path) -> float:
    t = time.monotonic()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env())
    assert r.returncode == 0, r.stderr
    return time.monotonic() - t


def _messages(root: Path, sid: str) -> list[str]:
    r = find_repo(root)
    log = sessionlog.load(r, sid)
    if log is None:
        return []
    return [m.text() for _s, m in sessionlog.iter_messages(r, log.commit.tree)]


def _counts(root: Path) -> dict[str, int]:
    r = find_repo(root)
    return {n: sessionlog.load_commit(r, o).count for n, o in refs.iter_refs(r.git, refs.SESSIONS)}


def _age_dead_locks(root: Path) -> int:
    """Ref locks a killed process left behind. A writer would wait for them and then fail with
    LockTimeout, and doctor --fix removes only locks older than doctor.STALE_LOCK_S (no pid check
    is possible: git lock files hold the new value, not an owner), so the test lets that time pass.
    """
    from oxide_git.ops.doctor import STALE_LOCK_S

    locks = list((root / ".git" / "refs" / "oxide").rglob("*.lock"))
    old = time.time() - STALE_LOCK_S - 60
    for lock in locks:
        os.utime(lock, (old, old))
    report.add("stale_locks", len(locks))
    if locks:
        doctor_heals(root)
        assert not list((root / ".git" / "refs" / "oxide").rglob("*.lock")), "doctor --fix left a lock"
    return len(locks)


def _check_store(root: Path) -> None:
    fsck_clean(root)
    doctor_heals(root)


def test_append_and_checkpoint_survive_sigkill(tmp_path: Path) -> None:
    """A store writer killed at random: every acked message and checkpoint is still there, once."""
    root = _init(tmp_path / "repo")
    rng = random.Random(8001)
    n_trials = trials(80, 10)
    full_run = _timed([sys.executable, DRIVER, str(root), SID, "warm", "20", "5"], root)
    acked_msgs: list[str] = [f"warm-{i}" for i in range(20)]
    acked_cps: list[tuple[str, str]] = []
    for t in range(n_trials):
        out, _rc = _kill_at([sys.executable, DRIVER, str(root), SID, f"t{t}", "20", "5"], root,
                           rng.uniform(0.05, full_run * 1.1))
        for line in out.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "M":
                acked_msgs.append(rest)
            elif kind == "C":
                ref, tree = rest.split()
                acked_cps.append((ref, tree))
        if t % 4 == 0 or t == n_trials - 1:  # the full check costs more than a trial
            _check_store(root)
        present = _messages(root, SID)
        missing = [m for m in acked_msgs if m not in set(present)]
        report.add("messages_lost", len(missing))
        assert not missing, f"trial {t}: acked messages lost: {missing[:5]}"
        dupes = {m for m in present if present.count(m) > 1}
        assert not dupes, f"trial {t}: duplicated messages {sorted(dupes)[:5]}"
        g = pygit2.Repository(str(root))
        lost = [r for r, tree in acked_cps if refs.read(g, r) is None or str(g[refs.read(g, r)].peel(pygit2.Commit).tree_id) != tree]
        report.add("checkpoints_lost", len(lost))
        assert not lost, f"trial {t}: acked checkpoints lost: {lost[:3]}"
        # in each writer's order
        for prefix in {m.rsplit("-", 1)[0] for m in present}:
            seqs = [int(m.rsplit("-", 1)[1]) for m in present if m.rsplit("-", 1)[0] == prefix]
            assert seqs == sorted(seqs) and seqs == list(range(len(seqs))), (prefix, seqs)
    report.add("messages_acked", len(acked_msgs))
    report.add("checkpoints_acked", len(acked_cps))
    # the store still works after all that: a full rerun completes
    r = subprocess.run([sys.executable, DRIVER, str(root), SID, "final", "3", "1"], cwd=root,
                       capture_output=True, text=True, env=env())
    assert r.returncode == 0, r.stderr
    _check_store(root)


def _claude_transcript(path: Path, sessions: int = 3, messages: int = 300, cwd: str = "/work/p",
                       tag: int = 0) -> None:
    lines = []
    for s in range(sessions):
        sid = f"4000000{s}-0000-4000-8000-{tag:012d}"
        parent = None
        for i in range(messages):
            uid = f"{s:04d}{tag:04d}-0000-4000-8000-{i:012d}"
            role = "user" if i % 2 == 0 else "assistant"
            msg: dict[str, object] = {"role": role, "content": f"s{s} message {i} " + "lorem " * 20}
            if role == "assistant":
                msg = {"model": "claude-opus-4-6", "id": f"msg_{s}_{i}", "type": "message", "role": role,
                       "content": [{"type": "text", "text": f"s{s} reply {i}"}], "stop_reason": "end_turn",
                       "usage": {"input_tokens": 1, "output_tokens": 1}}
            lines.append(json.dumps({
                "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": role,
                "message": msg, "uuid": uid,
                "timestamp": f"2026-02-01T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z"}))
            parent = uid
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("messages,n_trials", [(300, (30, 4)), (3500, (12, 2)), (9000, (8, 2))],
                         ids=["small", "index-thread", "worker"])  # over BACKGROUND_BYTES, WORKER_BYTES
def test_import_killed_then_rerun_finishes(tmp_path: Path, messages: int, n_trials: tuple[int, int]) -> None:
    transcript = tmp_path / "big.jsonl"
    _claude_transcript(transcript, messages=messages)
    if messages > 300:
        assert transcript.stat().st_size >= importing.BACKGROUND_BYTES
    if messages > 3500:
        assert transcript.stat().st_size >= importing.WORKER_BYTES
    _kill_and_rerun(tmp_path, ["git", "oxide", "import", "--agent", "claude", "-q", str(transcript)],
                    n_trials, 8002)


def test_a_batched_import_killed_then_rerun_finishes(tmp_path: Path) -> None:
    """Many small files: their objects one pack, then their refs, then the index (``import_batch``)."""
    files = []
    for k in range(8):
        files.append(tmp_path / f"t{k}.jsonl")
        _claude_transcript(files[-1], sessions=1, messages=300, tag=k)
    _kill_and_rerun(tmp_path, ["git", "oxide", "import", "--agent", "claude", "-q", *map(str, files)],
                    (24, 3), 8004)


def _kill_and_rerun(tmp_path: Path, cmd: list[str], n_trials: tuple[int, int], seed: int) -> None:
    """``cmd`` killed at a random moment, then run again: it finishes, and again changes nothing."""
    ref_root = _init(tmp_path / "reference")
    dur = _timed(cmd, ref_root)
    expected = _counts(ref_root)
    assert expected and all(expected.values())
    rng = random.Random(seed)
    for t in range(trials(*n_trials)):
        root = _init(tmp_path / f"r{t}")
        _kill_at(cmd, root, rng.uniform(0.05, dur * 1.1))
        _check_store(root)
        got = _counts(root)
        assert all(got.get(k, 0) <= v for k, v in expected.items()), (got, expected)
        r = run_oxide(root, *cmd[2:])
        assert_clean_exit(r, "import rerun")
        assert r.returncode == 0
        assert _counts(root) == expected, f"trial {t}: rerun did not finish the import"
        r = run_oxide(root, *cmd[2:])  # idempotent
        assert _counts(root) == expected
        report.add("messages_lost", sum(expected.values()) - sum(_counts(root).values()))
        _check_store(root)


def test_checkpoint_fork_reindex_killed(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo", files=300)
    transcript = tmp_path / "t.jsonl"
    _claude_transcript(transcript, sessions=1, messages=60)
    assert run_oxide(root, "import", "--agent", "claude", "-q", str(transcript)).returncode == 0
    sid = next(iter(_counts(root)))[len(refs.SESSIONS):]
    rng = random.Random(8003)
    cmds = {
        "checkpoint": ["git", "oxide", "checkpoint", "-m", "x"],
        "fork": ["git", "oxide", "fork", sid, "--at", "10"],
        "reindex": ["git", "oxide", "reindex", "--full"],
    }
    for name, cmd in cmds.items():
        dur = _timed(cmd, root)
        for t in range(trials(25, 3)):
            (root / "src" / "d1" / "f1.py").write_text(f"y = {t}\n")
            (root / f"new{t}.txt").write_text("n\n")
            before = set(_counts(root))
            out, rc = _kill_at(cmd, root, rng.uniform(0.02, dur * 1.2))
            if rc is not None:
                assert rc == 0, f"{name} failed on its own"
            _check_store(root)
            assert before <= set(_counts(root)), f"{name}: a session vanished"
            if name == "checkpoint" and out.startswith("Checkpoint "):
                report.add("checkpoints_acked")
                short = out.split()[1]
                r = run_oxide(root, "checkpoints", "--json")
                if short not in r.stdout:
                    report.add("checkpoints_lost")
                    raise AssertionError(f"acked checkpoint {short} lost")
            r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env())
            assert_clean_exit(r, f"{name} rerun")
            assert r.returncode == 0
            doctor_heals(root)


def _tree_of(root: Path, ref: str) -> str:
    return git(root, "rev-parse", f"{ref}^{{tree}}").strip()


def _write_state(root: Path, state: int, files: int) -> None:
    for i in range(files):
        (root / "src" / f"d{i % 10}" / f"f{i}.py").write_text(f"x = {i} state {state}\n" * 50)


def test_rewind_and_undo_killed(tmp_path: Path) -> None:
    """An interrupted rewind: the before-rewind checkpoint exists; it can be completed or undone."""
    files = 400
    root = _init(tmp_path / "repo", files=files)
    _write_state(root, 1, files)
    r = run_oxide(root, "checkpoint", "-m", "state 1", "--json")
    cp1 = json.loads(r.stdout)
    tree1 = cp1["tree"]
    _write_state(root, 2, files)
    tree2 = json.loads(run_oxide(root, "checkpoint", "-m", "state 2", "--json").stdout)["tree"]
    rewind = ["git", "oxide", "rewind", cp1["id"], "--code", "--yes"]
    dur = _timed(rewind, root)
    assert run_oxide(root, "undo", "--yes").returncode == 0
    rng = random.Random(8004)
    g = pygit2.Repository(str(root))

    def worktree_tree() -> str:
        cp = json.loads(run_oxide(root, "checkpoint", "-m", "probe", "--json").stdout)
        return str(cp["tree"])

    def before_rewinds() -> set[str]:
        return {str(g[o].peel(pygit2.Commit).tree_id) for n, o in refs.iter_refs(g, refs.CHECKPOINTS)
                if "Oxide-Kind: before-rewind" in g[o].peel(pygit2.Commit).message}

    for t in range(trials(30, 4)):
        _write_state(root, 2, files)
        _kill_at(rewind, root, rng.uniform(0.05, dur * 1.1))
        fsck_clean(root)
        doctor_heals(root)
        now = worktree_tree()
        if now != tree2:
            # files were written: the state before the rewind must be recoverable
            ok = tree2 in before_rewinds()
            report.add("checkpoints_lost", 0 if ok else 1)
            assert ok, f"trial {t}: rewind wrote files before its before-rewind checkpoint existed"
        if t % 2 == 0:
            r = run_oxide(root, "rewind", cp1["id"], "--code", "--yes")  # complete it
            assert_clean_exit(r, "rewind rerun")
            assert r.returncode == 0 and worktree_tree() == tree1
        else:  # or undo it: back to state 2 from the before-rewind checkpoint
            cps = json.loads(run_oxide(root, "checkpoints", "--json").stdout)
            back = next((c for c in cps if c["tree"] == tree2 and c["kind"] == "before-rewind"), None)
            if back is not None:
                r = run_oxide(root, "rewind", back["id"], "--code", "--yes")
                assert_clean_exit(r, "rewind back")
            else:
                _write_state(root, 2, files)
            assert worktree_tree() == tree2
    # undo killed: nothing lost (both states stay reachable from checkpoints)
    undo_cmd = ["git", "oxide", "undo", "--yes"]
    for _t in range(trials(10, 2)):
        _write_state(root, 2, files)
        assert run_oxide(root, "rewind", cp1["id"], "--code", "--yes").returncode == 0
        _kill_at(undo_cmd, root, rng.uniform(0.05, dur * 1.1))
        fsck_clean(root)
        doctor_heals(root)
        trees = {str(g[o].peel(pygit2.Commit).tree_id) for _n, o in refs.iter_refs(g, refs.CHECKPOINTS)}
        assert {tree1, tree2} <= trees
        r = run_oxide(root, "rewind", cp1["id"], "--code", "--yes")
        assert_clean_exit(r, "rewind after killed undo")


def _damage_cases(root: Path) -> dict[str, object]:
    oxide_dir = root / ".git" / "oxide"
    db = oxide_dir / "index.db"

    def delete_db() -> None:
        for s in ("", "-wal", "-shm"):
            Path(f"{db}{s}").unlink(missing_ok=True)

    def corrupt_db() -> None:
        data = bytearray(db.read_bytes())
        data[100:4096] = os.urandom(3996)
        db.write_bytes(bytes(data))

    def garbage_db() -> None:
        db.write_bytes(b"this is not sqlite" * 100)

    def truncate_db() -> None:
        db.write_bytes(db.read_bytes()[:1000])

    def delete_wal_shm() -> None:
        for s in ("-wal", "-shm"):
            Path(f"{db}{s}").unlink(missing_ok=True)

    def corrupt_wal() -> None:
        Path(f"{db}-wal").write_bytes(os.urandom(8192))
        Path(f"{db}-shm").write_bytes(os.urandom(32768))

    def stale_rows() -> None:
        c = sqlite3.connect(db)
        c.execute("DELETE FROM messages")
        c.execute("DELETE FROM checkpoints")
        c.commit()
        c.close()

    def stale_lock() -> None:
        lock = root / ".git" / "refs" / "oxide" / "sessions" / f"{SID}.lock"
        lock.write_text("0" * 40 + "\n")
        old = time.time() - 3600
        os.utime(lock, (old, old))

    return {"delete index.db": delete_db, "corrupt index.db": corrupt_db, "garbage index.db": garbage_db,
            "truncated index.db": truncate_db, "delete -wal/-shm": delete_wal_shm,
            "corrupt -wal/-shm": corrupt_wal, "index behind git": stale_rows,
            "stale ref lock of a dead process": stale_lock}


def test_index_and_lock_damage_is_repaired(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo")
    r = subprocess.run([sys.executable, DRIVER, str(root), SID, "d", "30", "10"], cwd=root,
                       capture_output=True, text=True, env=env())
    assert r.returncode == 0, r.stderr
    cps = [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("C ")]
    for name, damage in _damage_cases(root).items():
        damage()  # type: ignore[operator]
        report.add("hostile_tried")
        d = run_oxide(root, "doctor")
        assert_clean_exit(d, f"doctor on {name}")
        if "-wal" not in name:  # sqlite discards a missing or invalid WAL by design
            assert d.returncode == 1 or "warning" in d.stdout, f"{name} not detected:\n{d.stdout}"
        doctor_heals(root)
        report.add("repairs")
        report.add("hostile_refused")
        listing = json.loads(run_oxide(root, "show", SID[:14], "--json").stdout)
        texts = json.dumps(listing)
        missing = [f"d-{i}" for i in range(30) if f'"d-{i}"' not in texts]
        report.add("messages_lost", len(missing))
        assert not missing, f"{name}: messages lost from the index: {missing}"
        shown = run_oxide(root, "checkpoints", "--json").stdout
        lost = [c for c in cps if c.rsplit("/", 1)[1] not in shown]
        report.add("checkpoints_lost", len(lost))
        assert not lost, f"{name}: checkpoints lost {lost}"
        # and a write goes through afterwards
        w = subprocess.run([sys.executable, DRIVER, str(root), SID, f"after-{name[:3]}", "1", "1"],
                           cwd=root, capture_output=True, text=True, env=env())
        assert w.returncode == 0, f"{name}: write after repair failed: {w.stderr}"
    fsck_clean(root)
