"""`git oxide doctor`: each inconsistency it knows is reported, `--fix` mends it, and then it is quiet."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.doctor import diagnose
from oxide_git.store import writes as store
from tests.conftest import git, make_ctx, oxide

SID = "0" * 12 + "d" * 20


def _messages(r: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(f["level"], f["message"]) for f in r["findings"]]


def test_a_healthy_store_has_no_findings(repo: Path) -> None:
    oxide(repo, "init")
    store.append(make_ctx(repo), Session(SID, "codex"), [Message("user", (Part.text("x"),))])
    out = oxide(repo, "doctor")
    assert "ok: the store is consistent" in out.stdout and "sessions: 1" in out.stdout
    assert json.loads(oxide(repo, "doctor", "--json").stdout)["findings"] == []


def test_not_initialised_says_init(repo: Path) -> None:
    r = json.loads(oxide(repo, "doctor", "--json").stdout)
    assert r["findings"][0]["message"] == "git oxide is not initialised here"
    assert "git oxide init" in r["findings"][0]["hint"]


def test_index_behind_git_is_reported_and_fixed(repo: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    store.append(ctx, Session(SID, "codex"), [Message("user", (Part.text("x"),))])
    cp = checkpoint(ctx, kind="manual")
    # git moves behind the index's back: a session ref gone, a checkpoint ref gone
    git(repo, "update-ref", "-d", refs.session_ref(SID))
    git(repo, "update-ref", "-d", next(n for n in git(repo, "for-each-ref", "--format=%(refname)",
                                                         "refs/oxide/checkpoints/").split() if cp.id in n))
    r = diagnose(make_ctx(repo))
    assert ("warning", "the index is behind git: 1 session(s), 1 checkpoint(s) differ") in _messages(r)
    out = oxide(repo, "doctor")
    assert out.returncode == 0 and "hint: run `git oxide reindex`" in out.stdout  # a warning, not an error
    fixed = diagnose(make_ctx(repo), fix=True)
    assert ("fixed", "the index is behind git: 1 session(s), 1 checkpoint(s) differ") in _messages(fixed)
    assert diagnose(make_ctx(repo))["findings"] == []
    assert json.loads(oxide(repo, "list", "--all", "--json").stdout) == []


def test_a_session_written_without_the_index_is_behind_too(repo: Path) -> None:
    from oxide_git.store import logwrite

    oxide(repo, "init")
    ctx = make_ctx(repo)
    store.append(ctx, Session(SID, "codex"), [Message("user", (Part.text("x"),))])
    other = Session("1" * 32, "claude")
    logwrite.commit(ctx.repo.objects, ctx.repo.common_dir, other, {}, now_ms=0, summary="x", base=None,
                    expected=None)
    assert ("warning", "the index is behind git: 1 session(s), 0 checkpoint(s) differ") in _messages(
        diagnose(make_ctx(repo)))


def test_stale_lock_is_reported_and_removed_a_fresh_one_is_not(repo: Path) -> None:
    oxide(repo, "init")
    store.append(make_ctx(repo), Session(SID, "codex"), [Message("user", (Part.text("x"),))])
    locks = repo / ".git" / "refs" / "oxide" / "sessions"
    stale, fresh = locks / "a.lock", locks / "b.lock"
    stale.write_text("")
    fresh.write_text("")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    r = _messages(diagnose(make_ctx(repo)))
    assert ("warning", "stale lock file refs/oxide/sessions/a.lock") in r
    assert not [m for _lvl, m in r if "b.lock" in m]
    diagnose(make_ctx(repo), fix=True)
    assert not stale.exists() and fresh.exists()


def test_state_of_a_removed_worktree_is_reported_and_removed(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    checkpoint(make_ctx(wt), kind="manual")
    state = [d for d in (repo / ".git" / "oxide" / "worktrees").iterdir() if d.name != "main"]
    assert len(state) == 1
    assert diagnose(make_ctx(repo))["findings"] == []  # the worktree is still there
    git(repo, "worktree", "remove", "--force", str(wt))
    r = _messages(diagnose(make_ctx(repo)))
    assert ("warning", f"oxide state for a removed worktree: {state[0].name}") in r
    diagnose(make_ctx(repo), fix=True)
    assert not state[0].exists()
    assert diagnose(make_ctx(repo))["findings"] == []


def test_unreadable_index_is_an_error_with_exit_1_until_fixed(repo: Path) -> None:
    oxide(repo, "init")
    store.append(make_ctx(repo), Session(SID, "codex"), [Message("user", (Part.text("x"),))])
    db = repo / ".git" / "oxide" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"not a database" * 200)
    r = oxide(repo, "doctor", check=False)
    assert r.returncode == 1 and "error: the index is unreadable" in r.stdout
    r = oxide(repo, "doctor", "--fix")
    assert "fixed: the index is unreadable" in r.stdout
    assert oxide(repo, "doctor").stdout.count("ok: the store is consistent") == 1


def test_format_drift_sums_every_file_and_skips_a_damaged_cursor(repo: Path) -> None:
    import sqlite3

    oxide(repo, "init")
    ctx = make_ctx(repo)
    with ctx.index.write() as conn:
        ctx.index.put_cursor(conn, "/a.jsonl", "claude", 1, 1, 1, {"unknown": [["hologram", "2.1.9", 2]]})
        ctx.index.put_cursor(conn, "/b.jsonl", "claude", 1, 1, 1, {"unknown": [["hologram", "2.1.9", 3]]})
        ctx.index.put_cursor(conn, "/c.jsonl", "codex", 1, 1, 1, {"unknown": [["whisper", None, 1]]})
    ctx.close()
    db = sqlite3.connect(repo / ".git" / "oxide" / "index.db")
    db.execute("INSERT INTO cursors VALUES ('/d.jsonl', 'claude', 1, 1, 1, 'not json')")
    db.commit()
    db.close()
    found = [m for _lvl, m in _messages(diagnose(make_ctx(repo))) if "unknown type" in m]
    assert found == ["5 claude record(s) of unknown type 'hologram' (written by 2.1.9) are kept as other parts",
                     "1 codex record(s) of unknown type 'whisper' are kept as other parts"]


def test_an_index_without_the_cursors_table_reports_no_drift_and_no_crash(repo: Path) -> None:
    import sqlite3

    oxide(repo, "init")
    store.append(make_ctx(repo), Session(SID, "codex"), [Message("user", (Part.text("x"),))])
    db = sqlite3.connect(repo / ".git" / "oxide" / "index.db")
    db.execute("DROP TABLE cursors")  # an index written before there were cursors
    db.commit()
    db.close()
    found = diagnose(make_ctx(repo))["findings"]
    assert not [f for f in found if "unknown type" in f["message"]]
    assert all(f["level"] != "error" for f in found)
