"""Writing a session's rows into ``opencode.db``: the one place git oxide writes OpenCode's database.

One ``BEGIN IMMEDIATE`` transaction under SQLite's own locking (a 30 s busy timeout, so a running
OpenCode holding the write lock is waited for, never overridden), in the database's journal mode
(OpenCode uses WAL). Only columns the table has are written, so an older or newer schema takes the
rows as far as it can; anything else fails the transaction and leaves the database as it was.

A data folder with no database gets one with OpenCode 1.18.33's own schema and migration list
(``opencode_schema``), which OpenCode then opens as its own.

The rule for a session that is already there is ``keep_theirs`` (one function, for the rewind case).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from oxide_git.agents.opencode.rows import DbRows
from oxide_git.core.errors import OxideError

BUSY_TIMEOUT_S = 30.0


def keep_theirs(theirs: Sequence[str], ours: Sequence[str], *, rewound: bool = False) -> bool:
    """Whether the session already in the database (message ids ``theirs``) stays as it is instead
    of becoming ours (``ours``): it does when OpenCode went on with it since we imported it (it
    has more messages than ours, or any message we do not have), unless the user rewound ours."""
    if rewound:
        return False
    return len(theirs) > len(ours) or bool(set(theirs) - set(ours))


def write_database(path: Path, rows: DbRows, *, rewound: bool = False) -> str:
    """Write ``rows`` into the database at ``path`` (created when missing).

    Returns ``"written"``, ``"unchanged"`` (the rows are there already) or ``"kept"`` (the session
    there went on without us: see ``keep_theirs``).
    """
    try:
        return _write(path, rows, rewound)
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "busy" in str(e):
            raise OxideError(f"{path} stayed locked for {BUSY_TIMEOUT_S:g} s; nothing was written",
                             hint="another process (a running OpenCode?) holds it: try again") from e
        raise OxideError(f"cannot write the session into {path} ({e}); nothing was written",
                         hint="check the database with `opencode session list`") from e
    except sqlite3.Error as e:
        raise OxideError(f"cannot write the session into {path} ({e}); nothing was written",
                         hint="its schema may be newer than git oxide knows (OpenCode 1.18.33)") from e


def _write(path: Path, rows: DbRows, rewound: bool) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if not _has_table(conn, "session"):
            _create(conn, int(rows.session.get("time_created") or 0))
        conn.execute("BEGIN IMMEDIATE")
        try:
            outcome = _apply(conn, rows, rewound)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT" if outcome == "written" else "ROLLBACK")
        return outcome


def _apply(conn: sqlite3.Connection, rows: DbRows, rewound: bool) -> str:
    sid = rows.session_id
    theirs = [r[0] for r in conn.execute("SELECT id FROM message WHERE session_id = ?", (sid,))]
    if keep_theirs(theirs, [str(m["id"]) for m in rows.messages], rewound=rewound):
        return "kept"
    if _same(conn, rows):
        return "unchanged"
    conn.execute("DELETE FROM part WHERE session_id = ?", (sid,))
    conn.execute("DELETE FROM message WHERE session_id = ?", (sid,))
    if rows.project.get("id") is not None:
        _insert(conn, "project", [rows.project], "OR IGNORE")
    _insert(conn, "session", [rows.session], "OR REPLACE")
    _insert(conn, "message", rows.messages)
    _insert(conn, "part", rows.parts)
    if rows.todo and _has_table(conn, "todo"):
        conn.execute("DELETE FROM todo WHERE session_id = ?", (sid,))
        _insert(conn, "todo", rows.todo)
    return "written"


def _same(conn: sqlite3.Connection, rows: DbRows) -> bool:
    sid = rows.session_id
    have = read_rows(conn, sid)
    want = {"session": [dict(rows.session)], "message": [dict(r) for r in rows.messages],
            "part": [dict(r) for r in rows.parts]}
    for table, wanted in want.items():
        cols = _columns(conn, table)
        if sorted(_project(r, cols) for r in have[table]) != sorted(_project(r, cols) for r in wanted):
            return False
    return True


def read_rows(conn: sqlite3.Connection, sid: str) -> dict[str, list[dict[str, Any]]]:
    """The session, message and part rows of ``sid`` (for comparisons)."""
    conn.row_factory = sqlite3.Row
    try:
        return {
            "session": [dict(r) for r in conn.execute("SELECT * FROM session WHERE id = ?", (sid,))],
            "message": [dict(r) for r in conn.execute(
                "SELECT * FROM message WHERE session_id = ? ORDER BY id", (sid,))],
            "part": [dict(r) for r in conn.execute(
                "SELECT * FROM part WHERE session_id = ? ORDER BY id", (sid,))],
        }
    finally:
        conn.row_factory = None


def _project(row: Mapping[str, Any], cols: Sequence[str]) -> tuple[str, ...]:
    return tuple(repr(row.get(c)) for c in cols if c in row)


def _insert(conn: sqlite3.Connection, table: str, rows: Sequence[Mapping[str, Any]],
            verb: str = "") -> None:
    cols = _columns(conn, table)
    for row in rows:
        use = [c for c in cols if c in row and row[c] is not None]
        names = ", ".join(f'"{c}"' for c in use)
        marks = ", ".join("?" for _ in use)
        conn.execute(f'INSERT {verb} INTO "{table}" ({names}) VALUES ({marks})',
                     [row[c] for c in use])


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (table,)).fetchone() is not None


def _create(conn: sqlite3.Connection, now: int) -> None:
    """OpenCode 1.18.33's schema, in WAL mode as OpenCode keeps it, in one transaction."""
    from oxide_git.agents.opencode.schema import MIGRATIONS, SCHEMA

    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _has_table(conn, "session"):  # someone may have created it meanwhile
            for stmt in SCHEMA.split(";\n"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.executemany('INSERT INTO "migration" (id, time_completed) VALUES (?, ?)',
                             [(m, now) for m in MIGRATIONS])
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
