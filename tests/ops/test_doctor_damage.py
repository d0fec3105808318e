"""`git oxide doctor` on an index damaged in ways that do not stop sqlite from opening it: a table
gone (hand-edited, half-written), pages whose cells point nowhere (quick_check lists them), and a
lock file that is a dangling link. Each is reported, `--fix` rebuilds from git with every session
intact, and then doctor is quiet."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store
from tests.conftest import make_ctx, oxide

SID = "0" * 12 + "e" * 20


def _store_with_a_session(repo: Path) -> Path:
    oxide(repo, "init")
    store.append(make_ctx(repo), Session(SID, "codex", title="kept"), [Message("user", (Part.text("x"),))])
    return repo / ".git" / "oxide" / "index.db"


def _doctor(repo: Path, *args: str) -> tuple[int, list[tuple[str, str]]]:
    """The exit status of `doctor` (1 while an error stands) and its findings (from `--json`)."""
    found = [(f["level"], f["message"])
             for f in json.loads(oxide(repo, "doctor", "--json", *args).stdout)["findings"]]
    return oxide(repo, "doctor", check=False).returncode, found


def _listed(repo: Path) -> list[str]:
    return [s["id"] for s in json.loads(oxide(repo, "list", "--all", "--json").stdout)]


@pytest.mark.parametrize("table", ["sessions", "checkpoints"])
def test_an_index_missing_a_table_is_unreadable_and_fix_rebuilds_it(repo: Path, table: str) -> None:
    db_path = _store_with_a_session(repo)
    db = sqlite3.connect(db_path)
    db.execute(f"DROP TABLE {table}")
    db.commit()
    db.close()
    code, found = _doctor(repo)
    assert code == 1 and found == [("error", f"the index is unreadable: no such table: {table}")]
    code, found = _doctor(repo, "--fix")
    assert found == [("fixed", f"the index is unreadable: no such table: {table}")] and code == 0
    assert _doctor(repo) == (0, [])
    assert _listed(repo) == [SID]


def test_an_index_whose_pages_point_nowhere_is_rebuilt(repo: Path) -> None:
    db_path = _store_with_a_session(repo)
    data = bytearray(db_path.read_bytes())
    for page in range(1, len(data) // 4096):  # every b-tree page but the schema's: cell pointers
        data[page * 4096 + 8:page * 4096 + 48] = b"\xff" * 40
    db_path.write_bytes(data)
    code, found = _doctor(repo)
    assert code == 1 and [lv for lv, _m in found] == ["error"]
    # SQLite says it as it meets it: at open ("disk image is malformed") or in its check ("***")
    assert found[0][1].startswith(("the index is unreadable: *** in database main ***",
                                   "the index is unreadable: database disk image is malformed")), found
    assert _doctor(repo, "--fix")[0] == 0
    assert _doctor(repo) == (0, []) and _listed(repo) == [SID]


def test_a_lock_that_is_a_dangling_link_is_no_finding(repo: Path) -> None:
    _store_with_a_session(repo)
    lock = repo / ".git" / "refs" / "oxide" / "sessions" / "gone.lock"
    os.symlink(repo / "nowhere", lock)
    old = 1_000_000_000
    os.utime(lock, (old, old), follow_symlinks=False)  # the link itself is old: its target is gone
    assert _doctor(repo) == (0, [])
    assert lock.is_symlink()  # doctor --fix removes only the locks it reports
    assert _doctor(repo, "--fix") == (0, []) and lock.is_symlink()


def test_a_damaged_import_cursor_first_does_not_hide_the_others(repo: Path) -> None:
    from oxide_git.ops.doctor import diagnose

    _store_with_a_session(repo)
    db = sqlite3.connect(repo / ".git" / "oxide" / "index.db")
    db.execute("INSERT INTO cursors VALUES ('/0-damaged.jsonl', 'claude', 1, 1, 1, 'not json')")
    db.commit()
    db.close()
    ctx = make_ctx(repo)
    with ctx.index.write() as conn:
        ctx.index.put_cursor(conn, "/a.jsonl", "claude", 1, 1, 1, {"unknown": [["hologram", "2.1.9", 2]]})
    ctx.close()
    found = [f["message"] for f in diagnose(make_ctx(repo))["findings"]]
    assert found == ["2 claude record(s) of unknown type 'hologram' (written by 2.1.9) are kept as other parts"]


def test_doctor_without_the_worktrees_folder_and_the_index_size_it_reports(repo: Path) -> None:
    import shutil

    db_path = _store_with_a_session(repo)
    shutil.rmtree(repo / ".git" / "oxide" / "worktrees")  # removed by hand: nothing per worktree yet
    r = json.loads(oxide(repo, "doctor", "--json").stdout)
    assert r["findings"] == []
    assert r["usage"]["index size"] == f"{db_path.stat().st_size} bytes" != "0 bytes"


def test_doctor_counts_each_family_of_refs_it_keeps(repo: Path) -> None:
    from oxide_git.git import refs
    from tests.conftest import git

    _store_with_a_session(repo)
    other = "0" * 12 + "f" * 20
    store.append(make_ctx(repo), Session(other, "codex"), [Message("user", (Part.text("y"),))])
    oxide(repo, "rm", other, "--yes")
    head = git(repo, "rev-parse", "HEAD").strip()
    for i in range(3):
        git(repo, "update-ref", f"{refs.OPLOG}main/{i:04d}", head)
    usage = json.loads(oxide(repo, "doctor", "--json").stdout)["usage"]
    assert (usage["sessions"], usage["trash"], usage["oplog snapshots"], usage["checkpoints"]) == (1, 1, 3, 0)


def test_format_drift_is_listed_by_agent_then_record_type(repo: Path) -> None:
    from oxide_git.ops.doctor import diagnose

    _store_with_a_session(repo)
    ctx = make_ctx(repo)
    with ctx.index.write() as conn:  # written in another order than listed
        ctx.index.put_cursor(conn, "/z.jsonl", "codex", 1, 1, 1, {"unknown": [["beta", "0.9", 1]]})
        ctx.index.put_cursor(conn, "/y.jsonl", "claude", 1, 1, 1, {"unknown": [["zeta", "1.0", 1]]})
        ctx.index.put_cursor(conn, "/x.jsonl", "claude", 1, 1, 1, {"unknown": [["alpha", "2.0", 1]]})
    ctx.close()
    found = [f["message"].split(" are kept")[0] for f in diagnose(make_ctx(repo))["findings"]]
    assert found == ["1 claude record(s) of unknown type 'alpha' (written by 2.0)",
                     "1 claude record(s) of unknown type 'zeta' (written by 1.0)",
                     "1 codex record(s) of unknown type 'beta' (written by 0.9)"]


def test_an_index_deleted_by_hand_is_reported_with_no_size(repo: Path) -> None:
    db_path = _store_with_a_session(repo)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    r = json.loads(oxide(repo, "doctor", "--json").stdout)
    assert [f["level"] for f in r["findings"]] == ["error"] and "unreadable" in r["findings"][0]["message"]
    assert r["usage"]["index size"] == "0 bytes"
