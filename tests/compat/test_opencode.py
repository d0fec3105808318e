"""OpenCode 1.18, driven for real: import from opencode.db, round trips into a fresh data folder and
into an existing database (totals kept), re-import of what we wrote, a Claude session handed over.

Identity is measured on rows: the session, message and part rows of the session as OpenCode wrote
them against the rows ``resume --into opencode`` wrote, every column compared (JSON columns as
text, so key order counts too).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from oxide_git.agents.opencode.schema import MIGRATIONS, SCHEMA
from oxide_git.agents.opencode.write import read_rows

from . import checks
from .conftest import make_driver
from .driver import PROMPT2, SHELL_TEXT

PROMPT_B = "PROMPT-2: a second session, to be there already."


def rows_of(db: Path, sid: str) -> dict[str, list[dict[str, Any]]]:
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        return read_rows(conn, sid)


def row_identity(before: dict[str, list[dict[str, Any]]],
                 after: dict[str, list[dict[str, Any]]]) -> tuple[int, int]:
    """(rows of ``before`` found identical in ``after``, rows of ``before``)."""
    same = total = 0
    for table, rows in before.items():
        have = {json.dumps(r, sort_keys=True) for r in after.get(table, [])}
        for r in rows:
            total += 1
            same += json.dumps(r, sort_keys=True) in have
    return same, total


def row_diff(before: dict[str, list[dict[str, Any]]], after: dict[str, list[dict[str, Any]]]) -> list[str]:
    """What differs, row by row (for the assertion message)."""
    out = []
    for table, rows in before.items():
        have = {r.get("id"): r for r in after.get(table, [])}
        for r in rows:
            other = have.get(r.get("id"), {})
            out += [f"{table} {r.get('id')} {k}: {v!r} -> {other.get(k)!r}" for k, v in r.items()
                    if other.get(k) != v]
    return out


def tip(repo: Path, oxide_id: str) -> str:
    """The session log's commit (a re-import that changes nothing makes none)."""
    out = subprocess.run(["git", "for-each-ref", "--format=%(objectname)", f"refs/oxide/sessions/{oxide_id}"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    assert out, f"no session log for {oxide_id}"
    return out


def test_opencode_import_round_trip_fresh_folder_and_reimport(compat_repo: Path, model_server,
                                                              tmp_path: Path) -> None:
    d = make_driver("opencode", compat_repo, model_server)
    first = d.run().check()
    sid = first.native_id
    assert sid and sid.startswith("ses_")
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"

    shown = checks.import_session(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    assert [c["name"] for c in checks.tool_calls(shown)] == ["bash", "write", "edit"]

    before = rows_of(d.db(), sid)
    d.move_store_away(tmp_path / "moved-away")
    assert not d.db().exists()
    result = checks.into(compat_repo, sid, "opencode")
    assert result["native_id"] == sid and result["lost"] == []
    after = rows_of(d.db(), sid)
    same, total = row_identity(before, after)
    checks.record({"agent": "opencode", "version": d.pin.version, "check": "round_trip_fresh_db",
                   "rows_same": same, "rows_total": total})
    assert same == total, f"{same}/{total} rows identical: {row_diff(before, after)}"

    # what we wrote, imported again, is the same session: no new session, no new commit
    oxide_id = shown["session"]["id"] if "session" in shown else shown["id"]
    tip_before = tip(compat_repo, oxide_id)
    listed = checks.oxide_json(compat_repo, "list", "--all")
    checks.oxide(compat_repo, "import")
    assert tip(compat_repo, oxide_id) == tip_before
    assert checks.oxide_json(compat_repo, "list", "--all") == listed

    # OpenCode opens the database we made and continues the session from it
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell", "second line"])
    assert len(rows_of(d.db(), sid)["message"]) == len(before["message"]) + 2


def test_opencode_round_trip_into_an_existing_db_keeps_totals(compat_repo: Path, model_server) -> None:
    d = make_driver("opencode", compat_repo, model_server)
    sid = d.run().check().native_id
    assert sid
    checks.import_session(compat_repo, sid)
    before = rows_of(d.db(), sid)
    assert before["session"][0]["tokens_input"] > 0

    other = d.run(PROMPT_B).check().native_id  # the database has another session too
    assert other and other != sid
    other_rows = rows_of(d.db(), other)
    d._exec([str(d.binary), "session", "delete", sid]).check()
    assert rows_of(d.db(), sid)["session"] == []

    result = checks.into(compat_repo, sid, "opencode")
    assert result["native_id"] == sid and str(d.db()) in result["written"]
    after = rows_of(d.db(), sid)
    same, total = row_identity(before, after)
    checks.record({"agent": "opencode", "version": d.pin.version, "check": "round_trip_existing_db",
                   "rows_same": same, "rows_total": total})
    assert same == total, f"{same}/{total} rows identical: {row_diff(before, after)}"
    assert rows_of(d.db(), other) == other_rows

    # written again: nothing to do
    again = checks.into(compat_repo, sid, "opencode")
    assert again["written"] == [] and str(d.db()) in again["kept"]

    # OpenCode adds the next turn's tokens to our totals (they were not reset)
    d.resume(sid, PROMPT2).check()
    grown = rows_of(d.db(), sid)["session"][0]
    assert grown["tokens_input"] > before["session"][0]["tokens_input"]
    assert grown["tokens_input"] - before["session"][0]["tokens_input"] <= 1000

    # OpenCode went on: a second resume --into keeps its longer session
    kept = checks.into(compat_repo, sid, "opencode")
    assert str(d.db()) in kept["kept"]
    assert rows_of(d.db(), sid)["session"][0] == grown


def test_the_bundled_schema_is_what_opencode_creates(compat_repo: Path, model_server) -> None:
    d = make_driver("opencode", compat_repo, model_server)
    d.run(PROMPT_B).check()
    with closing(sqlite3.connect(d.db())) as real, closing(sqlite3.connect(":memory:")) as ours:
        ours.executescript(SCHEMA)
        names = "SELECT type, name FROM sqlite_master ORDER BY type, name"
        assert real.execute(names).fetchall() == ours.execute(names).fetchall()
        for (table,) in real.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            info = f"PRAGMA table_info('{table}')"
            assert real.execute(info).fetchall() == ours.execute(info).fetchall(), table
        migrations = [r[0] for r in real.execute("SELECT id FROM migration ORDER BY id")]
        assert migrations == sorted(MIGRATIONS)


@pytest.mark.parametrize("source", ["claude"])
def test_another_agent_into_opencode(compat_repo: Path, model_server, source: str) -> None:
    other = make_driver(source, compat_repo, model_server)
    native = other.run().check().native_id
    assert native
    checks.import_session(compat_repo, native)

    oc = make_driver("opencode", compat_repo, model_server)
    result = checks.into(compat_repo, native, "opencode")
    sid = result["native_id"]
    assert sid.startswith("ses_")
    lost = " | ".join(result["lost"])
    assert "OpenCode's configured model fake/fake-model" in lost
    assert "Bash tool calls became OpenCode bash tool parts" in lost

    rows = rows_of(oc.db(), sid)
    users = [json.loads(m["data"]) for m in rows["message"] if json.loads(m["data"])["role"] == "user"]
    assert users and all(u["model"] == {"providerID": "fake", "modelID": "fake-model"} for u in users)
    tools = [json.loads(p["data"]) for p in rows["part"] if json.loads(p["data"])["type"] == "tool"]
    assert [t["tool"] for t in tools] == ["bash", "write", "edit"]
    assert all(t["state"]["status"] == "completed" for t in tools)

    model_server._log.clear()
    oc.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [other.prompt1, SHELL_TEXT, "echo from-shell"])
    body = model_server.last_request()["body"]
    calls = [c["function"]["name"] for m in body["messages"] if m.get("role") == "assistant"
             for c in m.get("tool_calls") or []]
    assert calls == ["bash", "write", "edit"], calls
    checks.record({"agent": "opencode", "version": oc.pin.version, "check": f"from_{source}",
                   "tool_calls_replayed": len(calls)})
