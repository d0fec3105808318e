"""The SQLite index at ``<git-common-dir>/oxide/index.db``: a cache of what is in git.

Deleting it loses nothing (``reindex`` rebuilds it). Reads and writes use the stdlib ``sqlite3``;
its tables are made and migrated by ``index_schema``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oxide_git.core.errors import CorruptIndex, DiskFull, OxideError
from oxide_git.store.index_ids import IdLookups, id_chunks
from oxide_git.store.index_list import CHECKPOINT_COUNT, FILL, ORDER, REAL_COUNT, document, table_query
from oxide_git.store.index_schema import SESSION_COLS, connect

if TYPE_CHECKING:  # the index is read on paths that must not import pygit2
    from oxide_git.core.model import Message, Session
    from oxide_git.store.index_rows import Rows
    from oxide_git.store.snapshots import Checkpoint

_SNIPPET = 200


class Index(IdLookups):
    """Queries and writes; returns plain dicts (JSON-ready) or model objects."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rebuilt = False  # made now (new, or an old version deleted and made again): filled from git
        try:
            self.db, self.rebuilt = connect(path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as e:
            denied = _permission_problem(path)
            if denied:
                raise denied from e
            if isinstance(e, sqlite3.OperationalError) and ("full" in str(e) or DiskFull.on(path.parent)):
                raise DiskFull(path.parent) from e
            if isinstance(e, sqlite3.OperationalError) and "I/O" in str(e):
                raise OxideError(f"cannot open the index {path}: {e}",
                                 hint="is the disk full? free some space and run the command again") from e
            raise CorruptIndex(
                f"the index {path} is corrupt: {e}", hint="run `git oxide reindex` to rebuild it"
            ) from e
        self.db.row_factory = sqlite3.Row

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction (BEGIN IMMEDIATE: writers queue on the busy timeout, never fail). Inside
        another, part of it: a batch of writes committed once (``import_batch``)."""
        if self.db.in_transaction:
            yield self.db
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            denied = _permission_problem(self.path)
            if denied:
                raise denied from e
            if isinstance(e, sqlite3.OperationalError) and "full" in str(e):
                raise DiskFull(self.path.parent, hint="free some space, then run `git oxide reindex` "
                               "to bring the index up to date with what git holds") from e
            raise CorruptIndex(f"index write failed: {e}", hint="run `git oxide reindex`") from e

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        try:
            return self.db.execute(sql, tuple(args)).fetchall()
        except sqlite3.DatabaseError as e:
            denied = _permission_problem(self.path)
            if denied:
                raise denied from e
            raise CorruptIndex(f"index read failed: {e}", hint="run `git oxide reindex`") from e

    # sessions --------------------------------------------------------------------------

    def put_session(
        self, conn: sqlite3.Connection, s: Session, *, log_commit: str, count: int
    ) -> None:
        import json  # here: a blame reads the index without it

        from oxide_git.core.titles import is_harness_text

        # The first prompt a person typed: harness blocks (<system-reminder>...) are skipped.
        first = next((r for r in conn.execute(
            "SELECT text FROM messages WHERE session_id=? AND role='user' AND text!='' "
            "ORDER BY seq LIMIT 20", (s.id,)) if not is_harness_text(r[0])), None)
        last = conn.execute(
            "SELECT text FROM messages WHERE session_id=? AND text!='' ORDER BY seq DESC LIMIT 1",
            (s.id,)).fetchone()
        row = {c: getattr(s, c) for c in SESSION_COLS}
        row.update(
            message_count=count, log_commit=log_commit,
            first_prompt=(first[0][:_SNIPPET] if first else None),
            last_message=(last[0][:_SNIPPET] if last else None),
            redactions=json.dumps(dict(s.redactions), sort_keys=True),
            source=json.dumps(dict(s.source), sort_keys=True, default=str),
        )
        cols = ",".join(row)
        conn.execute(
            f"INSERT OR REPLACE INTO sessions ({cols}) VALUES ({','.join('?' * len(row))})",
            tuple(row.values()),
        )
        conn.execute(f"{FILL} WHERE s.id=?", (s.id,))

    def put_messages(
        self, conn: sqlite3.Connection, session_id: str, puts: Mapping[int, Message],
        truncate_at: int | None = None,
    ) -> None:
        from oxide_git.store.index_rows import (
            message_rows,  # the write path's: a search imports neither it nor model
        )

        self.put_rows(conn, session_id, sorted(puts), message_rows(puts), truncate_at)

    def put_rows(
        self, conn: sqlite3.Connection, session_id: str, seqs: list[int], rows: Rows,
        truncate_at: int | None = None,
    ) -> None:
        """The rows of the messages at ``seqs`` (ascending; ``message_rows``), replacing theirs."""
        if truncate_at is not None:
            for table in ("messages", "parts"):
                conn.execute(f"DELETE FROM {table} WHERE session_id=? AND seq>=?",
                             (session_id, truncate_at))
        if not seqs:
            return
        for table in ("messages", "parts"):
            if seqs[-1] - seqs[0] + 1 == len(seqs):  # a run of seqs (an import batch): one range
                conn.execute(f"DELETE FROM {table} WHERE session_id=? AND seq BETWEEN ? AND ?",
                             (session_id, seqs[0], seqs[-1]))
            else:
                conn.executemany(f"DELETE FROM {table} WHERE session_id=? AND seq=?",
                                 [(session_id, q) for q in seqs])
        # All rows of a table in one statement (a JSON array walked by json_each): one call into
        # SQLite instead of one per row, which also keeps the GIL released for all of it.
        for table, (width, text) in zip(("messages", "parts"), rows, strict=True):
            if width:
                cols = ", ".join(f"value->>{i}" for i in range(width))
                conn.execute(f"INSERT INTO {table} SELECT ?, {cols} FROM json_each(?)", (session_id, text))

    def delete_session(self, conn: sqlite3.Connection, session_id: str) -> None:
        for table in ("messages", "parts"):
            conn.execute(f"DELETE FROM {table} WHERE session_id=?", (session_id,))
        conn.execute("DELETE FROM sessions WHERE id=?", (session_id,))

    def session_rows(
        self, *, project_id: str | None = None, worktree: str | None = None,
        agent: str | None = None, ids: Iterable[str] | None = None,
    ) -> list[dict[str, Any]]:
        cols = ", ".join(f"s.{c}" for c in (*SESSION_COLS, "message_count", "first_prompt",
                                                     "last_message", "redactions"))
        where, args = _session_filter(project_id, worktree, agent, ids)
        sql = f"SELECT {cols}, {CHECKPOINT_COUNT} AS checkpoint_count FROM sessions s {where} {ORDER}"
        return [_session_row(r) for r in self.query(sql, args)]

    def session_list_json(self, *, worktree: str | None = None, agent: str | None = None) -> bytes:
        """The whole `list --json` text, kept ready and joined by SQLite (``index_list``), in
        the fields and time format of ``LIST_FIELDS``/``to_iso``."""
        where, args = _session_filter(None, worktree, agent, None)
        got = self.query(document(where), args)[0][0]
        return b"[\n" + got + b"\n]\n" if got else b"[]\n"

    def session_table(self, *, worktree: str | None = None, agent: str | None = None) -> list[sqlite3.Row]:
        """`list`'s rows, newest first: the fields of ``index_list.TABLE_FIELDS``, by position."""
        where, args = _session_filter(None, worktree, agent, None)
        return self.query(table_query(where), args)

    def session_tips(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        """{session: the log commit its rows are of}: every session's, or those of ``ids``."""
        if ids is None:
            return {r[0]: r[1] for r in self.query("SELECT id, log_commit FROM sessions")}
        tips = {}
        for part, marks in id_chunks(list(ids)):
            tips.update({r[0]: r[1] for r in self.query(
                f"SELECT id, log_commit FROM sessions WHERE id IN ({marks})", part)})
        return tips

    def real_message_counts(self, ids: Iterable[str] | None = None) -> dict[str, int]:
        """Messages that hold more than records kept whole (``other`` parts: Claude Code's
        progress and hook events...), per session: what people count as the conversation
        (``real``, worked out as each message's row is made: ``is_real``)."""
        sql = f"SELECT s.id, {REAL_COUNT} FROM sessions s"
        args: list[Any] = []
        if ids is not None:
            id_list = list(ids)
            sql += f" WHERE s.id IN ({','.join('?' * len(id_list))})"
            args = id_list
        return {r[0]: int(r[1]) for r in self.query(sql, args) if r[1]}

    def session_count(self, *, agent: str | None = None) -> int:
        where, args = _session_filter(None, None, agent, None)
        return int(self.query(f"SELECT count(*) FROM sessions s {where}", args)[0][0])

    def keep_search_up(self, *, note: bool = True) -> None:
        """After a command that wrote many messages: the search index brought up to them now
        (``note``: said on stderr), not by the next search."""
        from oxide_git.store import search_index

        todo = search_index.pending(self.db, self.path)
        if todo is None:
            todo = int(self.query("SELECT coalesce(max(rowid), 0) FROM messages")[0][0])
        if todo >= search_index.EAGER:
            try:
                search_index.catch_up(self.db, self.path, note=note)
            except OSError:
                pass  # read-only: the next search works in memory

    # checkpoints -----------------------------------------------------------------------

    def put_checkpoint(self, conn: sqlite3.Connection, cp: Checkpoint) -> None:
        import json  # here: a blame reads the index without it

        d = cp.to_dict()
        d["skipped"] = json.dumps(d["skipped"], ensure_ascii=False)
        cols = ",".join(d)
        conn.execute(f"INSERT OR REPLACE INTO checkpoints ({cols}) VALUES ({','.join('?' * len(d))})",
                     tuple(d.values()))

    def checkpoint_rows(self, session_id: str | None = None) -> list[dict[str, Any]]:
        import json  # here: a blame reads the index without it

        sql, args = "SELECT * FROM checkpoints", tuple[str, ...]()
        if session_id:
            sql, args = sql + " WHERE session_id=?", (session_id,)
        rows = self.query(sql + " ORDER BY created_at DESC, id", args)
        return [{**dict(r), "skipped": json.loads(r["skipped"] or "[]")} for r in rows]

    def checkpoint_ids(self) -> set[str]:
        return {r[0] for r in self.query("SELECT id FROM checkpoints")}

    def meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key=?", (key,))
        return str(rows[0][0]) if rows else None

    def put_meta(self, conn: sqlite3.Connection, key: str, value: str | None) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (key, value))

    # import cursors --------------------------------------------------------------------

    def cursor(self, path: str) -> dict[str, Any] | None:
        import json  # here: a blame reads the index without it

        rows = self.query("SELECT * FROM cursors WHERE path=?", (path,))
        if not rows:
            return None
        d = dict(rows[0])
        d["state"] = json.loads(d["state"] or "{}")
        return d

    def put_cursor(self, conn: sqlite3.Connection, path: str, agent: str, size: int,
                   mtime_ns: int, offset: int, state: Mapping[str, Any]) -> None:
        import json  # here: a blame reads the index without it

        conn.execute("INSERT OR REPLACE INTO cursors VALUES (?,?,?,?,?,?)",
                     (path, agent, size, mtime_ns, offset, json.dumps(state, default=str)))


def _session_filter(
    project_id: str | None, worktree: str | None, agent: str | None, ids: Iterable[str] | None
) -> tuple[str, list[Any]]:
    sql, args = "WHERE 1=1", []
    for col, val in (("project_id", project_id), ("worktree", worktree), ("agent", agent)):
        if val is not None:
            sql += f" AND s.{col}=?"
            args.append(val)
    if ids is not None:
        id_list = list(ids)
        sql += f" AND s.id IN ({','.join('?' * len(id_list))})"
        args += id_list
    return sql, args


def _session_row(r: sqlite3.Row) -> dict[str, Any]:
    import json  # here: a blame reads the index without it

    d = dict(r)
    red = d.get("redactions")
    d["redactions"] = json.loads(red) if red and red != "{}" else {}
    return d


def open_index(oxide_dir: Path) -> Index:
    try:
        oxide_dir.mkdir(parents=True, exist_ok=True)
    except PermissionError as e:
        raise _denied(oxide_dir) from e
    return Index(oxide_dir / "index.db")


def _denied(path: Path) -> OxideError:
    return OxideError(f"permission denied: {path} is not writable by this user",
                      hint=f"git oxide keeps its index and journal there; check its owner and mode "
                           f"(`ls -ld {path}`)")


def _permission_problem(path: Path) -> OxideError | None:
    """The index's folder or files cannot be written (SQLite calls that "readonly database" or
    "unable to open"): say so, instead of calling the index corrupt."""
    import os

    for p in (path.parent, path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if p.exists() and not os.access(p, os.W_OK):
            return _denied(p)
    return None
