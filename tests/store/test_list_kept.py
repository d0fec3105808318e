"""`list --json` from the JSON rows the index keeps ready (``index_list``): the same objects as
the Python rows, kept current by every write, built on the fly for a row an older release
wrote, and an index of the previous version migrated in place (not rebuilt)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.ops.browse import list_sessions, list_sessions_json
from oxide_git.store import writes as store
from oxide_git.store.index_schema import SCHEMA_VERSION
from oxide_git.store.snapshots import Checkpoint
from tests.conftest import make_ctx, oxide

A = "0" * 12 + "a" * 20
B = "1" * 12 + "b" * 20


def _msg(text: str, role: str = "user") -> Message:
    return Message(role, (Part.text(text),))


def _two_sessions(repo: Path):  # type: ignore[no-untyped-def]
    ctx = make_ctx(repo)
    store.append(ctx, Session(id=A, agent="claude", title="fix the parser", worktree="main",
                              created_at=1_767_225_600_123, updated_at=1_767_225_601_999),
                 [_msg("refactor the parser")])
    store.append(ctx, Session(id=B, agent="codex", title="ünïcode ✓ \"quoted\"", worktree="main"),
                 [_msg("hello"), _msg("done", "assistant")])
    return ctx


def _checkpoint(ctx, session_id: str, n: int) -> None:  # type: ignore[no-untyped-def]
    with ctx.index.write() as conn:
        ctx.index.put_checkpoint(conn, Checkpoint(
            id=f"{n:040x}", ref=f"refs/oxide/checkpoints/main/{n}", kind="prompt",
            session_id=session_id, message_id=None, worktree="main", worktree_path="/x",
            branch="main", head=None, tree="4b825dc642cb6eb9a060e54bf8d69288fbee4904",
            files_changed=0, created_at=1_767_225_602_000 + n))


def _db(repo: Path) -> sqlite3.Connection:
    return sqlite3.connect(repo / ".git" / "oxide" / "index.db", isolation_level=None)


def _cli_rows(repo: Path) -> list[dict[str, object]]:
    return json.loads(oxide(repo, "list", "--json", "--all").stdout)


def test_kept_rows_are_the_python_rows_with_counts_and_updates(repo: Path) -> None:
    ctx = _two_sessions(repo)
    _checkpoint(ctx, A, 1)
    _checkpoint(ctx, A, 2)
    _checkpoint(ctx, B, 3)
    kept = json.loads(list_sessions_json(ctx, all_worktrees=True))
    assert kept == list_sessions(ctx, all_worktrees=True)
    by_id = {r["id"]: r for r in kept}
    assert (by_id[A]["checkpoint_count"], by_id[B]["checkpoint_count"]) == (2, 1)
    assert by_id[A]["created_at"] == "2026-01-01T00:00:00.123Z"
    assert by_id[B]["title"] == "ünïcode ✓ \"quoted\""
    # the field order of `list --json`, the count last
    assert list(kept[0]) == ["id", "agent", "native_id", "title", "message_count", "parent_id",
                             "fork_message_id", "worktree", "branch", "cwd", "created_at",
                             "updated_at", "first_prompt", "last_message", "redactions", "model",
                             "checkpoint_count"]
    # a later write is in the kept row: the count of messages and the last message
    store.append(ctx, Session(id=B, agent="codex", title="ünïcode ✓ \"quoted\"", worktree="main"),
                 [_msg("one more thing", "assistant")])
    row = next(r for r in json.loads(list_sessions_json(ctx, all_worktrees=True)) if r["id"] == B)
    assert (row["message_count"], row["last_message"]) == (3, "one more thing")
    assert _cli_rows(repo) == list_sessions(ctx, all_worktrees=True)


def test_a_row_without_its_kept_json_is_built_at_listing(repo: Path) -> None:
    ctx = _two_sessions(repo)
    _checkpoint(ctx, B, 1)
    before = _cli_rows(repo)
    db = _db(repo)
    db.execute("UPDATE sessions SET list_head = NULL WHERE id=?", (B,))  # as an older release writes
    assert _cli_rows(repo) == before
    assert db.execute("SELECT list_head FROM sessions WHERE id=?", (B,)).fetchone()[0] is None


def _as_version(repo: Path, version: int) -> None:
    """The index as release ``version`` left it: 6 had no partial message indexes, 5 also searched
    with FTS5, 4 also had no kept rows."""
    db = _db(repo)
    for name in ("idx_messages_compactions", "idx_messages_unreal"):
        db.execute(f"DROP INDEX {name}")
    if version == 6:
        db.execute("INSERT OR REPLACE INTO meta VALUES ('marker', 'kept')")
        db.execute(f"PRAGMA user_version = {version}")
        db.commit()
        db.close()
        return
    for name in ("messages_search_ai", "messages_search_ad", "messages_search_au"):
        db.execute(f"DROP TRIGGER {name}")
    db.execute("DROP TABLE search_log")
    db.execute("DELETE FROM meta WHERE key='search_epoch'")
    db.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='messages', "
               "content_rowid='rowid', tokenize='unicode61')")
    db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    db.execute("CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN "
               "INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text); END")
    db.execute("CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN "
               "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text); END")
    if version == 4:
        db.execute("ALTER TABLE sessions DROP COLUMN list_head")
        db.execute("DROP INDEX idx_sessions_updated_at_id")
        db.execute("CREATE INDEX idx_sessions_updated_at ON sessions (updated_at)")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('marker', 'kept')")  # gone if rebuilt
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()


@pytest.mark.parametrize("version", [4, 5, 6])
@pytest.mark.process
def test_a_previous_index_version_is_migrated_in_place(repo: Path, version: int) -> None:
    ctx = _two_sessions(repo)
    _checkpoint(ctx, A, 1)
    before = _cli_rows(repo)
    ctx.close()
    _as_version(repo, version)
    # two processes open the old index at once: one migrates it, both list the same rows
    env_cmd = [sys.executable, "-m", "oxide_git", "list", "--json", "--all"]
    procs = [subprocess.Popen(env_cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert [json.loads(o[0]) for o in outs] == [before, before]
    db = _db(repo)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT value FROM meta WHERE key='marker'").fetchone() == ("kept",)
    assert db.execute("SELECT count(*) FROM sessions WHERE list_head IS NULL").fetchone()[0] == 0
    plan = " ".join(r[3] for r in db.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM sessions s ORDER BY s.updated_at DESC, s.id"))
    assert "idx_sessions_updated_at_id" in plan and "TEMP B-TREE" not in plan, plan
    for question in ("SELECT max(seq) FROM messages WHERE session_id=? AND is_compaction=1",
                     "SELECT count(*) FROM messages WHERE session_id=? AND real=0"):  # no row of A read
        plan = " ".join(r[3] for r in db.execute(f"EXPLAIN QUERY PLAN {question}", (A,)))
        assert "idx_messages_compactions" in plan or "idx_messages_unreal" in plan, plan
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_fts%' "
                      "OR name IN ('messages_ai', 'messages_ad')").fetchone()[0] == 0
    db.close()
    found = json.loads(oxide(repo, "search", "parser", "--json").stdout)  # searched as before
    assert [(h["session_id"], h["snippet"]) for h in found] == [(A, "refactor the [parser]")]


def test_no_session_is_an_empty_list(repo: Path) -> None:
    assert oxide(repo, "list", "--json").stdout == "[]\n"
    assert oxide(repo, "list", "--json", "--agent", "codex").stdout == "[]\n"
