"""`list --json`'s rows, kept ready in the index's ``sessions.list_head`` column.

Each session's JSON object (every field of ``LIST_FIELDS`` but its checkpoint count, which
changes without the session's row) is built by SQLite when the row is written (``FILL``) and
kept open, without its closing brace, so listing 10,000 sessions reads one text column and
appends one count to each (``ROW``), and SQLite joins them into the whole document (``DOCUMENT``):
one bytes value, no Python object per row. Building the 10,000 objects at each listing (two
``strftime`` and a ``json_object`` a row) was two thirds of the query. A row without it (written
by an older release still running) is built at listing time, the same text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

CHECKPOINT_COUNT = "(SELECT count(*) FROM checkpoints c WHERE c.session_id=s.id)"
# the fields of `list --json`, in their order (the checkpoint count last: it is spliced in)
LIST_FIELDS = ("id", "agent", "native_id", "title", "message_count", "parent_id",
               "fork_message_id", "worktree", "branch", "cwd", "created_at", "updated_at",
               "first_prompt", "last_message", "redactions", "model", "checkpoint_count")
KEPT_FIELDS = LIST_FIELDS[:-1]


def _field(c: str) -> str:
    if c in ("created_at", "updated_at"):  # model.to_iso's form: 2025-10-09T08:53:20.000Z
        return (f"CASE WHEN s.{c} IS NULL THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%S', "
                f"s.{c} / 1000, 'unixepoch') || printf('.%03dZ', s.{c} % 1000) END")
    if c == "checkpoint_count":
        return CHECKPOINT_COUNT
    if c == "redactions":
        return "json(coalesce(s.redactions, '{}'))"
    return f"s.{c}"


def _object(fields: tuple[str, ...]) -> str:
    return "json_object(" + ", ".join(f"'{c}', {_field(c)}" for c in fields) + ")"


_KEPT = _object(KEPT_FIELDS)
FILL = f"UPDATE sessions AS s SET list_head = substr({_KEPT}, 1, length({_KEPT}) - 1)"  # + a WHERE
ROW = (f"CASE WHEN s.list_head IS NULL THEN {_object(LIST_FIELDS)} ELSE "
       f"s.list_head || ',\"checkpoint_count\":' || {CHECKPOINT_COUNT} || '}}' END")
# the conversation's messages: the records less those kept whole only (``real``=0: Claude Code's
# progress and hook events...), from an index of the rare ones (``MESSAGE_INDEXES``)
REAL_COUNT = "s.message_count - (SELECT count(*) FROM messages m WHERE m.session_id=s.id AND m.real=0)"
# the table of `list`, a row each: what it shows and what it orders them by
TABLE_FIELDS = ("id", "agent", "real_count", "worktree", "branch", "updated_at", "title",
                "first_prompt", "parent_id", "native_id")
_TABLE_COLUMNS = {  # what a field is worked out from, where it is not the column of its name
    "real_count": f"coalesce({REAL_COUNT}, 0)",
    "first_prompt": "CASE WHEN s.title IS NULL OR s.title = '' THEN s.first_prompt END",  # shown if no title
}
INDEX = "CREATE INDEX IF NOT EXISTS idx_sessions_updated_at_id ON sessions (updated_at DESC, id)"
ORDER = "ORDER BY s.updated_at DESC, s.id"  # newest first (the index on both: no sort)


def table_query(where: str) -> str:
    """The query of `list`'s table rows (``TABLE_FIELDS``), newest first."""
    cols = ", ".join(f"{_TABLE_COLUMNS.get(c, f's.{c}')} AS {c}" for c in TABLE_FIELDS)
    return f"SELECT {cols} FROM sessions s {where} {ORDER}"


def document(where: str) -> str:
    """The query of the whole `list --json` text (NULL when no session matches): the rows
    joined by SQLite in the order of ``ORDER`` (an aggregate over an ordered subquery, which
    SQLite does not flatten), as bytes."""
    return (f"SELECT CAST(group_concat(j, ',' || char(10)) AS BLOB) FROM "
            f"(SELECT {ROW} AS j FROM sessions s {where} {ORDER})")


def add_column(db: sqlite3.Connection, to_version: int) -> None:
    """Index version 4 → 5 in place: the column added and filled (10,000 sessions in
    milliseconds), where any older index is rebuilt from git."""
    migrate_in_place(db, to_version, ("ALTER TABLE sessions ADD COLUMN list_head TEXT", FILL, INDEX,
                                      "DROP INDEX IF EXISTS idx_sessions_updated_at"))  # the new one leads


def migrate_in_place(db: sqlite3.Connection, to_version: int,
                     statements: Iterable[str | tuple[str, tuple[Any, ...]]]) -> None:
    """Index version ``to_version - 1`` → ``to_version`` in place by ``statements`` (SQL, or SQL
    and its arguments). One transaction, the version read again inside it: two processes opening
    the old index at once migrate it once."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] == to_version - 1:
            for sql in statements:
                if isinstance(sql, str):
                    db.execute(sql)
                else:
                    db.execute(*sql)
            db.execute(f"PRAGMA user_version = {to_version}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
