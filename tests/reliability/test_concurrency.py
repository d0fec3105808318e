"""Concurrency: many writers on one session, checkpoints, `git gc` beside them, two worktrees."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from oxide_git.git import refs

from ..conftest import fsck_clean, git
from . import report
from .conftest import doctor_heals, env, run_oxide, trials
from .test_crash import DRIVER, SID, _init, _messages

pytestmark = pytest.mark.slow


def _raw_lock_errors(text: str) -> list[str]:
    return [ln for ln in text.splitlines()
            if "database is locked" in ln or "Traceback" in ln or "failed to lock" in ln.lower()]


def test_writers_and_gc_on_one_session(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo")
    writers, n_msgs, every = trials(8, 4), trials(200, 30), trials(4, 6)  # 50 checkpoints / 5
    procs = [subprocess.Popen([sys.executable, DRIVER, str(root), SID, f"w{w}", str(n_msgs), str(every)],
                              cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
             for w in range(writers)]
    gcs = 0
    while any(p.poll() is None for p in procs):
        r = subprocess.run(["git", "gc", "--quiet"], cwd=root, capture_output=True, text=True)
        assert r.returncode == 0 or "lock" in r.stderr, r.stderr
        gcs += 1
        time.sleep(0.2)
    outs = [p.communicate() for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert not _raw_lock_errors(err), err
        assert p.returncode == 0, err
    present = _messages(root, SID)
    report.add("concurrent_messages", len(present))
    expected = {f"w{w}-{i}" for w in range(writers) for i in range(n_msgs)}
    lost = expected - set(present)
    report.add("messages_lost", len(lost))
    assert not lost, sorted(lost)[:10]
    assert len(present) == len(set(present)) == len(expected), "duplicates"
    for w in range(writers):
        seqs = [int(m.split("-")[1]) for m in present if m.startswith(f"w{w}-")]
        assert seqs == list(range(n_msgs)), f"writer {w} out of order"
    g = pygit2.Repository(str(root))
    cps = [ln.split()[1:] for out, _ in outs for ln in out.splitlines() if ln.startswith("C ")]
    report.add("concurrent_checkpoints", len(cps))
    assert len(cps) == writers * (n_msgs // every)
    bad = [r for r, tree in cps if (o := refs.read(g, r)) is None or str(g[o].peel(pygit2.Commit).tree_id) != tree]
    report.add("checkpoints_lost", len(bad))
    assert not bad
    fsck_clean(root)
    doctor_heals(root)
    assert gcs > 0


def test_two_worktrees_checkpoint_at_once_never_mix(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo")
    other = tmp_path / "other"
    git(root, "worktree", "add", "-q", "-b", "other", str(other))
    n = trials(40, 8)
    script = (
        "import sys, json, subprocess, pathlib\n"
        "root, tag, n = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])\n"
        "for i in range(n):\n"
        "    (root / f'{tag}.txt').write_text(f'{tag} {i}\\n')\n"
        "    (root / 'shared.txt').write_text(f'{tag} {i}\\n')\n"
        "    r = subprocess.run(['git', 'oxide', 'checkpoint', '--json', '-m', f'{tag} {i}'], cwd=root,\n"
        "                       capture_output=True, text=True)\n"
        "    if r.returncode:\n"
        "        print('FAIL', r.stderr.replace('\\n', ' '), flush=True)\n"
        "    else:\n"
        "        print('C', i, json.loads(r.stdout)['id'], flush=True)\n"
    )
    procs = {tag: subprocess.Popen([sys.executable, "-c", script, str(wt), tag, str(n)], cwd=wt,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
             for tag, wt in (("main", root), ("other", other))}
    g = pygit2.Repository(str(root))
    for tag, p in procs.items():
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0 and "FAIL" not in out, out + err
        mine, theirs = f"{tag}.txt", ("other" if tag == "main" else "main") + ".txt"
        for ln in out.splitlines():
            _c, i, cid = ln.split()
            tree = g[cid].peel(pygit2.Commit).tree
            report.add("concurrent_checkpoints")
            assert mine in tree and theirs not in tree, f"{tag} checkpoint {i} mixed worktrees"
            shared = g[tree["shared.txt"].id].data.decode()
            assert shared.startswith(tag), f"{tag} checkpoint {i} has the other worktree's file: {shared!r}"
            own = g[tree[mine].id].data.decode()
            assert own.split()[0] == tag
    for wt in (root, other):
        r = run_oxide(wt, "doctor")
        assert r.returncode == 0, r.stdout + r.stderr
    fsck_clean(root)
