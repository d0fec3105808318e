"""The index's tables: created for a new index, migrated in place from versions 4 to 6, and an
older one dropped to be rebuilt from git (the index is a cache).

The schema is created with sqlite-utils, which is imported only then (~80 ms: more than a whole
checkpoint may take); everything else uses the stdlib ``sqlite3``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from oxide_git.store.index_list import INDEX, add_column, migrate_in_place
from oxide_git.store.search_index import EPOCH_KEY, LOG_SQL, new_epoch

SCHEMA_VERSION = 7  # an older index is dropped and rebuilt from git (a cache); 4 to 6 are migrated
# Partial indexes of the few rows two per-session questions need (a session's last compaction, its
# records that are not real messages): without them `show` of a 100,000-message session read every
# row of it twice before its first line (~190 ms). Each holds the rare rows only, so a write of
# ordinary messages pays for neither.
MESSAGE_INDEXES = (
    "CREATE INDEX IF NOT EXISTS idx_messages_compactions ON messages (session_id, seq) WHERE is_compaction=1",
    "CREATE INDEX IF NOT EXISTS idx_messages_unreal ON messages (session_id) WHERE real=0",
)

# The columns of ``sessions`` that are a Session's own fields, by the same names.
SESSION_COLS = (
    "id", "agent", "native_id", "title", "created_at", "updated_at", "parent_id",
    "fork_message_id", "fork_checkpoint", "project_id", "worktree", "branch", "cwd", "model",
)


def connect(path: Path) -> tuple[sqlite3.Connection, bool]:
    """The index at ``path`` opened with its schema at ``SCHEMA_VERSION`` (versions 4 to 6
    migrated in place, an older one deleted and made again), and whether it was created now (the
    caller then fills it from git). Raises what sqlite3 raises."""
    fresh = not path.exists()
    db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version in (4, 5, 6) and not fresh:
        if version == 4:
            add_column(db, 5)
        if version <= 5:
            _without_fts(db, 6)
        migrate_in_place(db, SCHEMA_VERSION, MESSAGE_INDEXES)
    elif fresh or version < SCHEMA_VERSION:
        db.close()
        if not fresh:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        create_schema(path)
        return sqlite3.connect(str(path), timeout=30, isolation_level=None), True
    return db, False


def create_schema(path: Path) -> None:
    import sqlite_utils

    db: Any = sqlite_utils.Database(str(path))  # partly typed: tables are Table | View
    db.enable_wal()
    db["sessions"].create(
        {**{c: str for c in SESSION_COLS}, "created_at": int, "updated_at": int,
         "message_count": int, "log_commit": str, "first_prompt": str, "last_message": str,
         "redactions": str, "source": str, "list_head": str},
        pk="id", if_not_exists=True,
    )
    db["messages"].create(
        {"session_id": str, "seq": int, "id": str, "role": str, "created_at": int,
         "native_id": str, "compacted": int, "is_compaction": int, "text": str, "model": str,
         "real": int},
        pk=("session_id", "seq"), if_not_exists=True,
    )
    db["parts"].create(
        {"session_id": str, "seq": int, "idx": int, "type": str, "call_id": str, "name": str,
         "is_error": int},
        pk=("session_id", "seq", "idx"), if_not_exists=True,
    )
    db["checkpoints"].create(
        {"id": str, "ref": str, "kind": str, "session_id": str, "message_id": str,
         "worktree": str, "worktree_path": str, "branch": str, "head": str, "tree": str,
         "files_changed": int, "created_at": int, "message": str, "skipped": str},
        pk="id", if_not_exists=True,
    )
    db["links"].create(
        {"commit_id": str, "session_id": str, "checkpoint_id": str},
        pk=("commit_id", "session_id", "checkpoint_id"), if_not_exists=True,
    )
    db["cursors"].create(
        {"path": str, "agent": str, "size": int, "mtime_ns": int, "offset": int, "state": str},
        pk="path", if_not_exists=True,
    )
    db["meta"].create({"key": str, "value": str}, pk="key", if_not_exists=True)
    db["sessions"].create_index(["native_id"], if_not_exists=True)
    db.execute(INDEX)  # the order of `list`
    db["messages"].create_index(["native_id"], if_not_exists=True)
    db["checkpoints"].create_index(["session_id"], if_not_exists=True)
    for sql in MESSAGE_INDEXES:
        db.execute(sql)
    for sql in LOG_SQL:  # the search index's log (search_index.py)
        db.execute(sql)
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (EPOCH_KEY, new_epoch()))
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    db.conn.commit()
    db.conn.close()


def _without_fts(db: sqlite3.Connection, to_version: int) -> None:
    """Index version 5 → 6 in place: FTS5 and its triggers dropped, the search index's log and
    triggers made (the search index is then built from the rows: search_index.py)."""
    migrate_in_place(db, to_version, (
        "DROP TRIGGER IF EXISTS messages_ai", "DROP TRIGGER IF EXISTS messages_ad",
        "DROP TABLE IF EXISTS messages_fts", *LOG_SQL,
        ("INSERT OR REPLACE INTO meta VALUES (?, ?)", (EPOCH_KEY, new_epoch()))))
