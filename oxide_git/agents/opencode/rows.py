"""A session's OpenCode objects as the rows of ``opencode.db`` (1.18): pure, nothing is written here.

OpenCode keeps a message as ``message(id, session_id, time_created, time_updated, data)`` where
``data`` is the message info without ``id``/``sessionID``, and a part as ``part(id, message_id,
session_id, time_created, time_updated, data)`` without ``id``/``sessionID``/``messageID``; the
JSON is ``JSON.stringify``'s (compact, keys in insertion order). The session row spreads
Session.Info over columns (``summary_*``, ``share_url``, JSON columns ``revert``, ``permission``,
``model``, ``metadata``) and adds the totals (``cost``, ``tokens_*``) that no JSON holds.

A session read from a db carries ``oxide_row`` in each message and part (row times, key order) and
``totals`` / ``todo`` in its info, so the rows built here are the rows it was read from.
``opencode_write.write_database`` applies them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oxide_git.agents.opencode.store import ROW_KEY, as_dict, as_int

TOTALS = ("cost", "tokens_input", "tokens_output", "tokens_reasoning", "tokens_cache_read",
          "tokens_cache_write")


@dataclass(frozen=True, slots=True)
class DbRows:
    """What one session is in ``opencode.db``: table -> rows (column -> value)."""

    session: Mapping[str, Any]
    messages: Sequence[Mapping[str, Any]]
    parts: Sequence[Mapping[str, Any]]
    project: Mapping[str, Any]
    todo: Sequence[Mapping[str, Any]] = ()

    @property
    def session_id(self) -> str:
        return str(self.session["id"])


def dumps(obj: Any) -> str:
    """``JSON.stringify(obj)`` (JavaScript has one number type: an integral float prints as ``0``)."""
    return json.dumps(_js(obj), separators=(",", ":"), ensure_ascii=False, default=str)


def _js(x: Any) -> Any:
    if isinstance(x, float):
        return int(x) if x.is_integer() and abs(x) < 1e21 else x
    if isinstance(x, dict):
        return {k: _js(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_js(v) for v in x]
    return x


def build(info: Mapping[str, Any], out: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
          worktree: str) -> DbRows:
    """The rows of the session ``info`` with its messages and parts ``out`` (export objects)."""
    sid = str(info["id"])
    messages: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for m_info, m_parts in out:
        meta = as_dict(m_info.get(ROW_KEY))
        data = {k: v for k, v in m_info.items() if k not in ("id", "sessionID", ROW_KEY)}
        t = as_dict(data.get("time"))
        created = as_int(t.get("created")) or 0
        updated = as_int(meta.get("time_updated")) or as_int(t.get("completed")) or created
        messages.append({**as_dict(meta.get("columns")), "id": m_info["id"], "session_id": sid,
                         "time_created": created, "time_updated": updated,
                         "data": dumps(_ordered(data, meta.get("order")))})
        for p in m_parts:
            pmeta = as_dict(p.get(ROW_KEY))
            pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID", ROW_KEY)}
            if isinstance(pdata.get("state"), dict) and pmeta.get("state_order"):
                pdata["state"] = _ordered(pdata["state"], pmeta["state_order"])
            pt = as_dict(pdata.get("time")) or as_dict(as_dict(pdata.get("state")).get("time"))
            p_created = as_int(pmeta.get("time_created")) or as_int(pt.get("start")) or created
            p_updated = as_int(pmeta.get("time_updated")) or as_int(pt.get("end")) or p_created
            parts.append({**as_dict(pmeta.get("columns")), "id": p["id"], "message_id": m_info["id"],
                          "session_id": sid,
                          "time_created": p_created, "time_updated": p_updated,
                          "data": dumps(_ordered(pdata, pmeta.get("order")))})
    session = session_row(info, _totals(info, out))
    project = {"id": session["project_id"], "worktree": worktree, "vcs": "git",
               "time_created": session["time_created"], "time_updated": session["time_created"],
               "sandboxes": "[]"}
    todo = [{**t, "session_id": sid} for t in info.get("todo") or () if isinstance(t, dict)]
    return DbRows(session=session, messages=messages, parts=parts, project=project, todo=todo)


def session_row(info: Mapping[str, Any], totals: Mapping[str, Any]) -> dict[str, Any]:
    """Session.Info (as ``opencode_db._session_from_row`` reads it) as a ``session`` row."""
    summary = as_dict(info.get("summary"))
    t = as_dict(info.get("time"))
    row: dict[str, Any] = {
        **as_dict(info.get("columns")),  # a newer schema's columns, as they were read
        "id": info["id"], "project_id": info.get("projectID"), "workspace_id": info.get("workspaceID"),
        "parent_id": info.get("parentID"), "slug": info.get("slug"), "directory": info.get("directory"),
        "path": info.get("path"), "title": info.get("title"), "version": info.get("version"),
        "share_url": as_dict(info.get("share")).get("url"),
        "summary_additions": summary.get("additions"), "summary_deletions": summary.get("deletions"),
        "summary_files": summary.get("files"),
        "summary_diffs": dumps(summary["diffs"]) if summary.get("diffs") is not None else None,
    }
    for col in ("metadata", "revert", "permission", "model", "goal"):
        row[col] = dumps(info[col]) if info.get(col) is not None else None
    row["agent"] = info.get("agent")
    row.update(totals)
    row.update(time_created=as_int(t.get("created")) or 0, time_updated=as_int(t.get("updated")) or 0,
               time_compacting=t.get("compacting"), time_archived=t.get("archived"))
    return row


def _totals(info: Mapping[str, Any], out: Sequence[tuple[Mapping[str, Any], Any]]) -> dict[str, Any]:
    """The session's own totals when it has them, else the sums over its assistant messages (what
    OpenCode adds up as it goes)."""
    kept = as_dict(info.get("totals"))
    if kept:
        return {k: kept[k] for k in TOTALS if k in kept}
    tok = info.get("tokens")  # 1.18's Session.Info (an `opencode export` file) has them too
    if isinstance(tok, dict) and isinstance(info.get("cost"), int | float):
        cache = as_dict(tok.get("cache"))
        return {"cost": info["cost"], "tokens_input": as_int(tok.get("input")) or 0,
                "tokens_output": as_int(tok.get("output")) or 0,
                "tokens_reasoning": as_int(tok.get("reasoning")) or 0,
                "tokens_cache_read": as_int(cache.get("read")) or 0,
                "tokens_cache_write": as_int(cache.get("write")) or 0}
    sums: dict[str, Any] = dict.fromkeys(TOTALS, 0)
    sums["cost"] = 0.0
    for m_info, _ in out:
        if m_info.get("role") != "assistant":
            continue
        tok = as_dict(m_info.get("tokens"))
        cost = m_info.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            sums["cost"] += cost
        for key, col in (("input", "tokens_input"), ("output", "tokens_output"),
                         ("reasoning", "tokens_reasoning")):
            sums[col] += as_int(tok.get(key)) or 0
        cache = as_dict(tok.get("cache"))
        sums["tokens_cache_read"] += as_int(cache.get("read")) or 0
        sums["tokens_cache_write"] += as_int(cache.get("write")) or 0
    return sums


def _ordered(d: Mapping[str, Any], order: Any) -> dict[str, Any]:
    if not isinstance(order, list):
        return dict(d)
    out = {k: d[k] for k in order if isinstance(k, str) and k in d}
    out.update((k, v) for k, v in d.items() if k not in out)
    return out
