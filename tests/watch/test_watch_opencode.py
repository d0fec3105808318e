"""Live capture of OpenCode: it keeps its SQLite database open in WAL mode, so a turn lands in
``opencode.db-wal`` and the database file itself does not change until OpenCode checkpoints it
(at exit, or every 1,000 pages). The watch daemon must import on the write-ahead log's change."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.agents.test_opencode import REAL_DB, REAL_SES
from tests.conftest import make_ctx, oxide, oxide_process
from tests.watch.test_watch import wait_for


def _messages(repo: Path) -> int:
    rows = make_ctx(repo).index.query("SELECT message_count FROM sessions WHERE agent='opencode'")
    return rows[0][0] if rows else 0


@pytest.mark.process
def test_a_turn_written_only_to_the_wal_is_imported(repo: Path) -> None:
    oxide(repo, "init")
    data = Path(os.environ["XDG_DATA_HOME"]) / "opencode"
    data.mkdir(parents=True)
    db = data / "opencode.db"
    shutil.copy(REAL_DB, db)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE session SET directory=?", (str(repo),))
        conn.execute("UPDATE project SET worktree=?", (str(repo),))
    # OpenCode's way: one connection held open, WAL, no checkpoint while it runs (opened before
    # the daemon starts, so that switching the journal mode is not what the daemon sees)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    pid = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)["pid"]
    try:
        wait_for(lambda: _messages(repo) > 0)
        before = _messages(repo)
        size, mtime = db.stat().st_size, db.stat().st_mtime_ns
        mid, created, updated, body = conn.execute(
            "SELECT id, time_created, time_updated, data FROM message WHERE session_id=? "
            "ORDER BY time_created DESC LIMIT 1", (REAL_SES,)).fetchone()
        new_id = "msg_" + "f" * 26
        conn.execute("BEGIN")
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                     (new_id, REAL_SES, created + 1000, updated + 1000, body))
        conn.execute("INSERT INTO part SELECT 'prt_' || substr(id, 5) || 'x', ?, session_id, "
                     "time_created + 1000, time_updated + 1000, data FROM part WHERE message_id=?",
                     (new_id, mid))
        conn.execute("COMMIT")
        assert (db.stat().st_size, db.stat().st_mtime_ns) == (size, mtime)  # only the -wal moved
        wait_for(lambda: _messages(repo) > before, timeout=10)
    finally:
        conn.close()
        oxide(repo, "watch", "--stop", "--json")
    log = make_ctx(repo).repo.oxide_dir / "log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")
    with closing(sqlite3.connect(db)) as c:  # the agent's own database was only read
        assert c.execute("SELECT count(*) FROM message WHERE id=?", ("msg_" + "f" * 26,)).fetchone() == (1,)
    assert pid
