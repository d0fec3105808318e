"""OpenCode's SQLite store (``opencode.db``, 2026+), read-only, as the storage tree's objects.

Rows are rebuilt the way OpenCode does it: ``{...json(data), id, sessionID[, messageID]}``; the
session row becomes the Session.Info object (db-only totals go under ``totals``, ``todo`` rows under
``todo``). Columns are read with ``SELECT *`` so that schemas older or newer than formats.md 3.3
still parse. Each message and part also gets ``oxide_row`` (row times, JSON key order), so that
``opencode_rows`` writes back the very rows it read.

The ``event`` table (an append-only log: ``session.created.1``, ``message.updated.1``,
``message.part.updated.1``... per session ``seq``) is not read: every event's final state is in
the message and part rows, and OpenCode 1.18 continues a session from those rows alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Event, Problem, Unknown
from oxide_git.agents.opencode.messages import session_events
from oxide_git.agents.opencode.store import ROW_KEY, as_dict, as_int, as_str, loads_json

_SESSION_COLUMNS = frozenset({  # 1.18.33's, besides the totals (cost, tokens_*)
    "id", "project_id", "workspace_id", "parent_id", "slug", "directory", "path", "title", "version",
    "share_url", "summary_additions", "summary_deletions", "summary_files", "summary_diffs",
    "metadata", "revert", "permission", "agent", "model", "goal", "time_created", "time_updated",
    "time_compacting", "time_archived"})
_ROW_COLUMNS = frozenset({"id", "session_id", "message_id", "time_created", "time_updated", "data"})


def has_project(db: Path, env: AgentEnv) -> bool:
    """True when ``db`` holds at least one session of the project."""
    try:
        with closing(_connect(db)) as conn:
            rows = conn.execute("SELECT * FROM session").fetchall()
    except sqlite3.Error:
        return False
    return any(_db_matches(dict(r), env) for r in rows)


def _db_matches(row: Mapping[str, Any], env: AgentEnv) -> bool:
    pid = row.get("project_id")
    return (env.project_id is not None and pid == env.project_id) or env.belongs(
        as_str(row.get("directory"))
    )


def parse_db(path: Path, env: AgentEnv | None) -> Iterator[Event]:
    try:
        conn = _connect(path)
    except sqlite3.Error as e:
        yield Problem(None, f"{path}: cannot open database ({e})")
        return
    try:
        rows = [dict(r) for r in conn.execute("SELECT * FROM session")]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        created = {r.get("id"): as_int(r.get("time_created")) for r in rows}
        rows.sort(key=lambda r: (as_int(r.get("time_created")) or 0, str(r.get("id"))))
        for row in rows:
            if not isinstance(row.get("id"), str) or (env is not None and not _db_matches(row, env)):
                continue
            info = _session_from_row(row)
            todo = [dict(t) for t in conn.execute(
                "SELECT * FROM todo WHERE session_id = ? ORDER BY position", (row["id"],))
            ] if "todo" in tables else []
            if todo:
                info["todo"] = [{k: v for k, v in t.items() if k != "session_id"} for t in todo]
            entries: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
            parts_by_msg: dict[str, list[dict[str, Any]]] = {}
            for p in conn.execute(
                "SELECT * FROM part WHERE session_id = ? ORDER BY message_id, id", (row["id"],)
            ):
                data = loads_json(p["data"])
                if not isinstance(data, dict):
                    yield Problem(None, f"{path}: part {p['id']}: not JSON, skipped")
                    continue
                part = {**data, "id": p["id"], "sessionID": row["id"], "messageID": p["message_id"],
                        ROW_KEY: _row_meta(dict(p), data)}
                parts_by_msg.setdefault(str(p["message_id"]), []).append(part)
            for mrow in conn.execute(
                "SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id", (row["id"],)
            ):
                m = dict(mrow)
                data = loads_json(m.get("data"))
                if not isinstance(data, dict):
                    yield Problem(None, f"{path}: message {m['id']}: not JSON, skipped")
                    continue
                meta = _row_meta(m, data)
                t = as_dict(data.get("time"))
                if "created" not in t and as_int(m.get("time_created")) is not None:
                    data = {**data, "time": {**t, "created": m["time_created"]}}
                info_m = {**data, "id": m["id"], "sessionID": row["id"], ROW_KEY: meta}
                entries.append((info_m, parts_by_msg.get(str(m["id"]), [])))
            parent_created = created.get(row.get("parent_id"))
            source = {"format": "db", "path": str(path)}
            version = as_str(row.get("version"))
            drift = [f"session.{c}" for c in as_dict(info.get("columns"))]
            drift += [f"{kind}.{c}" for kind, items in (("message", [e[0] for e in entries]),
                                                       ("part", [p for e in entries for p in e[1]]))
                      for item in items for c in as_dict(as_dict(item.get(ROW_KEY)).get("columns"))]
            for kind in drift:  # a column 1.18 does not have: kept, written back, and said
                yield Unknown(kind, version)
            yield from session_events(info, entries, parent_created, source)
    except sqlite3.Error as e:
        yield Problem(None, f"{path}: database error ({e})")
    finally:
        conn.close()


def _session_from_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``session`` row as the Session.Info object OpenCode builds from it."""
    info: dict[str, Any] = {"id": row["id"], "slug": row.get("slug"), "projectID": row.get("project_id")}
    for col, key in (("workspace_id", "workspaceID"), ("parent_id", "parentID"), ("path", "path")):
        if row.get(col) is not None:
            info[key] = row[col]
    info.update(directory=row.get("directory"), title=row.get("title"), version=row.get("version"))
    summary = {k: row.get(f"summary_{k}") for k in ("additions", "deletions", "files", "diffs")}
    if any(v is not None for v in summary.values()):
        summary["diffs"] = loads_json(summary["diffs"]) if summary["diffs"] is not None else None
        info["summary"] = {k: v for k, v in summary.items() if v is not None}
    if row.get("share_url"):
        info["share"] = {"url": row["share_url"]}
    for col in ("revert", "permission", "model", "goal", "metadata"):
        if row.get(col) is not None:
            info[col] = loads_json(row[col])
    if row.get("agent") is not None:
        info["agent"] = row["agent"]
    t = {"created": row.get("time_created"), "updated": row.get("time_updated")}
    for col in ("compacting", "archived"):
        if row.get(f"time_{col}") is not None:
            t[col] = row[f"time_{col}"]
    info["time"] = t
    totals = {k: row[k] for k in row if k == "cost" or k.startswith("tokens_")}
    if totals:
        info["totals"] = totals  # db-only columns; not part of Session.Info
    columns = {k: v for k, v in row.items()
               if k not in _SESSION_COLUMNS and k not in totals and v is not None}
    if columns:
        info["columns"] = columns  # a newer schema's: kept as they are
    return info



def _row_meta(row: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """What a message or part row holds besides its JSON: the row times, and the JSON's key order
    (the export writes the same text back)."""
    meta: dict[str, Any] = {"time_updated": row.get("time_updated"), "order": list(data)}
    columns = {k: v for k, v in row.items() if k not in _ROW_COLUMNS and v is not None}
    if columns:
        meta["columns"] = columns  # a newer schema's: kept as they are
    if "message_id" in row:
        meta["time_created"] = row.get("time_created")
    state = data.get("state")
    if isinstance(state, dict):
        meta["state_order"] = list(state)
    return meta


def _connect(path: Path) -> sqlite3.Connection:
    """Read-only; falls back to ``immutable`` when the WAL side files cannot be created."""
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.OperationalError:
        conn = sqlite3.connect(f"{uri}?immutable=1", uri=True)
    conn.row_factory = sqlite3.Row
    return conn
