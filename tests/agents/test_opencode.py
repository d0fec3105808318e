"""OpenCode: storage tree, opencode.db and export files; discover, parse, export."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, FoundMessage, FoundSession, Problem, Resumable, Unknown
from oxide_git.agents.opencode import agent as opencode
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message, Part, PartType, Session, session_id_for

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "opencode"
PID = "9f1c2e4d5b6a7980a1b2c3d4e5f60718293a4b5c"
DIR = "/home/dev/proj"
T = 1767225600000
SES_A = "ses_4892557ffffeVhlvJlU2fzctdP"  # parent
SES_B = "ses_489246d9fffedlau4VrEUXSYjH"  # child (parentID = SES_A)
SES_C = "ses_48923d15fffeOT94hSKIr52KgW"  # the export file
EXPORT_FILE = FIX / "export" / f"session__quiet-lake__{SES_C}.json"


def make_env(*worktrees: str, project_id: str | None = None) -> AgentEnv:
    return AgentEnv(
        home=Path(os.environ["HOME"]),
        environ=dict(os.environ),
        worktrees=[Path(w) for w in worktrees],
        project_id=project_id,
    )


def data_root() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "opencode"


def install_tree() -> Path:
    """Copy the fixture storage tree into the isolated XDG_DATA_HOME; returns the storage root."""
    dest = data_root() / "storage"
    shutil.copytree(FIX / "storage", dest)
    return dest


def strip_rows(msgs: list[Message]) -> list[Message]:
    """Messages without the db row metadata (``oxide_row``) a database read adds."""
    from dataclasses import replace

    def clean(d: Any) -> Any:
        return {k: clean(v) if k == "raw" else v for k, v in d.items() if k != "oxide_row"}

    return [replace(m, extra=clean(m.extra), parts=tuple(Part(p.type, clean(p.data)) for p in m.parts))
            for m in msgs]


def session_file(storage: Path, sid: str) -> Path:
    return storage / "session" / PID / f"{sid}.json"


def collect(path: Path, **kw: Any) -> tuple[list[Session], dict[str, list[Message]], list[Any]]:
    sessions: list[Session] = []
    messages: dict[str, list[Message]] = {}
    other: list[Any] = []
    for ev in opencode.parse(path, **kw):
        if isinstance(ev, FoundSession):
            sessions.append(ev.session)
            messages.setdefault(ev.session.id, [])
        elif isinstance(ev, FoundMessage):
            messages[ev.session_id].append(ev.message)
        else:
            other.append(ev)
    return sessions, messages, other


def build_db(path: Path, storage: Path, extra_sessions: list[dict[str, Any]] = ()) -> Path:  # type: ignore[assignment]
    """An opencode.db with the real schema (formats.md 3.3), filled from a storage tree."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
          icon_url TEXT, icon_color TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
          time_initialized INTEGER, sandboxes TEXT NOT NULL, commands TEXT);
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id),
          workspace_id TEXT, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT,
          title TEXT NOT NULL, version TEXT NOT NULL, share_url TEXT, summary_additions INTEGER,
          summary_deletions INTEGER, summary_files INTEGER, summary_diffs TEXT,
          cost REAL NOT NULL DEFAULT 0, tokens_input INTEGER NOT NULL DEFAULT 0,
          tokens_output INTEGER NOT NULL DEFAULT 0, tokens_reasoning INTEGER NOT NULL DEFAULT 0,
          tokens_cache_read INTEGER NOT NULL DEFAULT 0, tokens_cache_write INTEGER NOT NULL DEFAULT 0,
          revert TEXT, permission TEXT, agent TEXT, model TEXT, time_created INTEGER NOT NULL,
          time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id),
          time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id),
          session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
          data TEXT NOT NULL);
        CREATE INDEX part_message_id_id_idx ON part (message_id, id);
        CREATE TABLE todo (session_id TEXT NOT NULL, content TEXT NOT NULL, status TEXT NOT NULL,
          priority TEXT NOT NULL, position INTEGER NOT NULL, time_created INTEGER NOT NULL,
          time_updated INTEGER NOT NULL, PRIMARY KEY (session_id, position));
        """
    )
    infos = [json.loads(f.read_text()) for f in sorted((storage / "session").glob("*/*.json"))]
    for info in [*infos, *extra_sessions]:
        conn.execute(
            "INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes)"
            " VALUES (?, ?, 0, 0, '[]')",
            (info["projectID"], info["directory"]),
        )
        s = info.get("summary", {})
        conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
            " summary_additions, summary_deletions, summary_files, time_created, time_updated)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (info["id"], info["projectID"], info.get("parentID"), info["slug"], info["directory"],
             info["title"], info["version"], s.get("additions"), s.get("deletions"), s.get("files"),
             info["time"]["created"], info["time"]["updated"]),
        )
        for mf in sorted((storage / "message" / info["id"]).glob("*.json")):
            m = json.loads(mf.read_text())
            data = {k: v for k, v in m.items() if k not in ("id", "sessionID")}
            t = m["time"]["created"]
            conn.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                         (m["id"], info["id"], t, t, json.dumps(data)))
            for pf in sorted((storage / "part" / m["id"]).glob("*.json")):
                p = json.loads(pf.read_text())
                data = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
                conn.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                             (p["id"], m["id"], info["id"], t, t, json.dumps(data)))
    conn.commit()
    conn.close()
    return path


# ------------------------------------------------------------------ parse: storage tree


def test_parse_storage_parent_session_exactly() -> None:
    storage = install_tree()
    sessions, messages, other = collect(session_file(storage, SES_A))
    assert [type(e) for e in other] == [Resumable]
    assert other[0].offset == 0
    [s] = sessions
    assert s.id == session_id_for("opencode", SES_A, T)
    assert (s.agent, s.native_id, s.title, s.cwd) == ("opencode", SES_A, "Fix the failing test", DIR)
    assert (s.created_at, s.updated_at, s.parent_id, s.model) == (T, T + 50000, None, "claude-sonnet-4-5")
    assert s.extra["slug"] == "brave-otter" and s.extra["projectID"] == PID
    assert "parent_native_id" not in s.extra

    msgs = messages[s.id]
    assert [m.role for m in msgs] == ["user", "assistant", "assistant", "user", "assistant", "user",
                                      "assistant"]
    assert [m.created_at for m in msgs] == [T + 1000, T + 2000, T + 5000, T + 20000, T + 20010,
                                            T + 30000, T + 31000]
    # the compaction request at index 3 was answered by a finished summary: all before it compacted
    assert [m.compacted for m in msgs] == [True, True, True, False, False, False, False]
    assert all(m.native_id and m.native_id.startswith("msg_") for m in msgs)

    user = msgs[0]
    assert [p.type for p in user.parts] == ["text", "file", "text", "text"]
    assert user.parts[0].get("text") == "Fix the failing test in @src/app.py"
    assert user.parts[1].get("path") == "src/app.py"
    assert user.parts[1].get("url") == f"file://{DIR}/src/app.py"
    assert user.parts[1].get("mime") == "text/plain"
    assert user.parts[2].get("synthetic") is True
    assert user.model == "claude-sonnet-4-5" and user.usage is None and user.cost is None
    assert user.extra["model"] == {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}

    a = msgs[1]
    kinds = [p.get("kind") if p.type == PartType.OTHER else p.type for p in a.parts]
    assert kinds == ["step-start", "reasoning", "tool_call", "tool_result", "tool_call", "tool_result",
                     "tool_call", "tool_result", "text", "step-finish", "patch"]
    assert a.parts[0].get("raw")["snapshot"] == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    assert a.parts[1].get("text") == "The test probably imports the wrong name."
    assert a.parts[1].get("metadata") == {"anthropic": {"signature": "sig-abc"}}
    bash_call, bash_result = a.parts[4], a.parts[5]
    assert bash_call.data == {
        "id": bash_call.get("id"),
        "call_id": "toolu_02",
        "name": "bash",
        "input": {"command": "pytest -q", "description": "Run tests"},
        "state": {"status": "error", "metadata": {"exit": 127},
                  "time": {"start": T + 2300, "end": T + 2400}},
    }
    assert bash_result == Part.tool_result("toolu_02", "Error: pytest: command not found", is_error=True)
    assert a.parts[3] == Part.tool_result("toolu_01", "<file>\n00001| from app import main\n</file>")
    assert a.parts[7].get("compacted") is True  # the edit output was pruned (state.time.compacted)
    assert a.parts[2].get("state")["title"] == "tests/test_app.py"
    assert a.parts[9].get("raw")["tokens"]["input"] == 120
    assert a.parts[9].get("raw")["cost"] == 0.0123
    patch = a.parts[10]
    assert patch.get("text") == patch.get("hash") == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    assert patch.get("files") == [f"{DIR}/src/app.py"]
    assert a.model == "claude-sonnet-4-5" and a.cost == 0.0123
    assert a.usage == {"total": 165, "input": 120, "output": 45, "reasoning": 3,
                       "cache": {"read": 10, "write": 0}}
    assert a.extra["providerID"] == "anthropic" and a.extra["finish"] == "tool-calls"
    assert "modelID" not in a.extra and "tokens" not in a.extra

    comp = msgs[3]
    assert comp.is_compaction()
    [cp] = comp.parts
    assert cp.get("summary") == "## Goal\nFix the failing test.\n\n## Done\nAdded main() to src/app.py."
    assert cp.get("summary_message_id") == msgs[4].native_id
    assert cp.get("auto") is True and cp.get("replaces") is None
    assert msgs[4].extra["summary"] is True

    assert msgs[5].parts[0].type == PartType.OTHER and msgs[5].parts[0].get("kind") == "agent"
    aborted = msgs[6]
    assert aborted.extra["error"]["name"] == "MessageAbortedError"
    assert [p.type for p in aborted.parts] == ["text", "tool_call"]  # running: no result yet
    assert aborted.parts[1].get("state")["status"] == "running"


def test_child_session_links_parent_by_native_id_and_created_time() -> None:
    storage = install_tree()
    [child], messages, _ = collect(session_file(storage, SES_B))
    assert child.extra["parent_native_id"] == SES_A
    assert child.parent_id == session_id_for("opencode", SES_A, T)
    msgs = messages[child.id]
    assert [m.role for m in msgs] == ["user", "assistant"]
    retry = msgs[1].parts[0]
    assert retry.type == PartType.OTHER and retry.get("kind") == "retry"
    assert retry.get("raw")["attempt"] == 1


def test_parse_export_file_exactly() -> None:
    sessions, messages, other = collect(EXPORT_FILE)
    [s] = sessions
    assert s.id == session_id_for("opencode", SES_C, T + 100000)
    assert (s.native_id, s.title, s.cwd, s.source["format"]) == (SES_C, "Explain the build", DIR, "export")
    assert other == [Resumable(0, {"format": "export"})]
    user, asst = messages[s.id]
    assert [p.type for p in user.parts] == ["text", "other"]
    assert user.parts[1].get("kind") == "subtask" and user.parts[1].get("raw")["agent"] == "explore"
    kinds = [p.get("kind") if p.type == PartType.OTHER else p.type for p in asst.parts]
    assert kinds == ["step-start", "reasoning", "tool_call", "tool_result", "text", "snapshot",
                     "step-finish"]
    assert asst.parts[1].get("text") == ""
    assert asst.parts[1].get("metadata")["openai"]["reasoningEncryptedContent"] == "gAAAA"
    assert asst.parts[3] == Part.tool_result("call_9", "[project]\nname='x'")
    assert not any(m.compacted for m in messages[s.id])


def test_parse_is_idempotent() -> None:
    storage = install_tree()
    for path in (session_file(storage, SES_A), session_file(storage, SES_B), EXPORT_FILE):
        assert list(opencode.parse(path)) == list(opencode.parse(path))
        assert list(opencode.parse(path, offset=0, state={"format": "storage"})) == list(
            opencode.parse(path)
        )


def test_session_rewritten_in_place_with_one_more_message() -> None:
    storage = install_tree()
    path = session_file(storage, SES_B)
    _, before, _ = collect(path)
    mid, pid = "msg_b76dad000000AAAAAAAAAAAAAA", "prt_b76dad000001AAAAAAAAAAAAAA"
    msg = {"id": mid, "sessionID": SES_B, "role": "user", "time": {"created": T + 9999},
           "agent": "general", "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}}
    (storage / "message" / SES_B / f"{mid}.json").write_text(json.dumps(msg, indent=2))
    (storage / "part" / mid).mkdir()
    (storage / "part" / mid / f"{pid}.json").write_text(json.dumps(
        {"id": pid, "sessionID": SES_B, "messageID": mid, "type": "text", "text": "and again"}))
    info = json.loads(path.read_text())
    info["time"]["updated"] = T + 9999
    path.write_text(json.dumps(info, indent=2))
    [s], after, _ = collect(path)
    [sid] = before
    assert after[sid][:-1] == before[sid]
    assert len(after[sid]) == len(before[sid]) + 1
    assert after[sid][-1].text() == "and again" and after[sid][-1].native_id == mid
    assert s.updated_at == T + 9999


def test_malformed_files_are_reported_and_skipped() -> None:
    storage = install_tree()
    bad_msg = sorted((storage / "message" / SES_A).glob("*.json"))[-1]
    bad_msg.write_text('{"id": "msg_x", "role": ')
    part = sorted((storage / "part").glob("*/*.json"))[0]
    part.write_text("not json")
    sessions, messages, other = collect(session_file(storage, SES_A))
    problems = [e for e in other if isinstance(e, Problem)]
    assert Problem(None, f"{bad_msg}: not JSON, skipped") in problems
    assert len(messages[sessions[0].id]) == 6

    junk = storage.parent / "junk.json"
    junk.write_text("[1, 2")
    assert list(opencode.parse(junk)) == [Problem(None, f"{junk}: not JSON, skipped"),
                                          Resumable(0, {"format": "invalid"})]


# ------------------------------------------------------------------ opencode.db


def test_db_parses_like_the_storage_tree_and_filters_by_project(tmp_path: Path) -> None:
    storage = install_tree()
    other = {"id": "ses_4800000000ffZZZZZZZZZZZZZZ", "slug": "x", "projectID": "global",
             "directory": "/elsewhere", "title": "other project", "version": "1",
             "time": {"created": T + 7, "updated": T + 8}}
    db = build_db(data_root() / "opencode.db", storage, [other])
    env = make_env(DIR)

    assert db in opencode.discover(env)
    assert db not in opencode.discover(make_env("/nowhere"))

    sessions, messages, rest = collect(db, env=env)
    assert {s.native_id for s in sessions} == {SES_A, SES_B}
    assert rest == [Resumable(0, {"format": "db"})]
    all_sessions, _, _ = collect(db)
    assert {s.native_id for s in all_sessions} == {SES_A, SES_B, other["id"]}

    for sid in (SES_A, SES_B):
        [tree_s], tree_m, _ = collect(session_file(storage, sid))
        [db_s] = [s for s in sessions if s.native_id == sid]
        assert (db_s.id, db_s.parent_id, db_s.title, db_s.cwd, db_s.created_at) == (
            tree_s.id, tree_s.parent_id, tree_s.title, tree_s.cwd, tree_s.created_at)
        assert strip_rows(messages[db_s.id]) == tree_m[tree_s.id]


def test_db_with_a_corrupt_row(tmp_path: Path) -> None:
    storage = install_tree()
    db = build_db(tmp_path / "opencode.db", storage)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE part SET data = '{broken' WHERE id = (SELECT min(id) FROM part)")
    conn.commit()
    conn.close()
    _, messages, rest = collect(db)
    assert any(isinstance(e, Problem) and "not JSON, skipped" in e.text for e in rest)
    assert sum(len(v) for v in messages.values()) == 9


def test_not_a_database(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    events = list(opencode.parse(db))
    assert isinstance(events[0], Problem) and events[-1] == Resumable(0, {"format": "db"})


# ------------------------------------------------------------------ discover


def test_discover_storage_tree_by_directory_or_project_id() -> None:
    storage = install_tree()
    expected = sorted([session_file(storage, SES_A), session_file(storage, SES_B)])
    assert sorted(opencode.discover(make_env(DIR))) == expected
    assert sorted(opencode.discover(make_env("/home/dev"))) == expected  # cwd inside a worktree
    assert opencode.discover(make_env("/home/dev/proj2")) == []
    assert sorted(opencode.discover(make_env("/other", project_id=PID))) == expected


def test_discover_nothing_installed() -> None:
    assert opencode.discover(make_env(DIR)) == []


# ------------------------------------------------------------------ export


def write_files(files: Any) -> None:
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


@pytest.mark.parametrize("sid", [SES_A, SES_B])
def test_export_round_trip_of_an_opencode_session_into_a_storage_tree(tmp_path: Path, sid: str) -> None:
    [s], messages, _ = collect(session_file(FIX / "storage", sid))
    msgs = messages[s.id]
    env = make_env(DIR)
    root = data_root()
    (root / "storage").mkdir(parents=True)  # a legacy data folder: storage tree, no database
    exp = opencode.export(s, msgs, env)
    assert exp.native_id == sid and not exp.databases
    assert list(exp.command) == ["opencode", "--session", sid]
    assert exp.cwd == DIR and list(exp.lost) == []
    session_path = root / "storage" / "session" / PID / f"{sid}.json"
    assert session_path in exp.files
    assert all(str(p).startswith(str(root)) for p in exp.files)
    # the same files as the original storage tree, object for object
    for path, content in exp.files.items():
        original = FIX / "storage" / path.relative_to(root / "storage")
        assert json.loads(content) == json.loads(original.read_text()), path
    write_files(exp.files)

    [s2], m2, rest = collect(session_path)
    assert not [e for e in rest if isinstance(e, Problem)]
    assert m2[s2.id] == msgs
    assert (s2.id, s2.native_id, s2.title, s2.cwd, s2.created_at, s2.updated_at) == (
        s.id, s.native_id, s.title, s.cwd, s.created_at, s.updated_at)
    assert s2.extra == s.extra
    # a child's parent is linked by created time only when the parent is in the same tree
    assert s2.parent_id is None

    if sid == SES_B:
        [parent], pm, _ = collect(session_file(FIX / "storage", SES_A))
        write_files(opencode.export(parent, pm[parent.id], env).files)
        [s3], _, _ = collect(session_path)
        assert s3.parent_id == s.parent_id == session_id_for("opencode", SES_A, T)


def test_export_of_the_export_file_into_a_new_database() -> None:
    [s], messages, _ = collect(EXPORT_FILE)
    exp = opencode.export(s, messages[s.id], make_env(DIR))
    db = data_root() / "opencode.db"
    assert exp.files == {} and list(exp.databases) == [db]
    assert list(exp.command) == ["opencode", "--session", SES_C]
    assert opencode.write_database(db, exp.databases[db]) == "written"
    [s2], m2, rest = collect(db)
    assert not [e for e in rest if isinstance(e, Problem)]
    assert strip_rows(m2[s2.id]) == messages[s.id]
    assert (s2.id, s2.native_id, s2.title, s2.cwd) == (s.id, s.native_id, s.title, s.cwd)
    assert opencode.write_database(db, exp.databases[db]) == "unchanged"


def foreign_session() -> tuple[Session, list[Message]]:
    s = Session(id="019b76daa800aaaaaaaaaaaaaaaaaaaaaaaa", agent="claude", native_id="abc-uuid",
                title="Claude work", created_at=T, updated_at=T + 5000, cwd="/old/clone/src",
                worktree="/old/clone", model="claude-opus-4-1")
    msgs = [
        Message("user", (Part.text("list files"),), created_at=T + 1),
        Message("assistant", (Part.reasoning("think", signature="zz"),
                              Part.tool_call("tu1", "Bash", {"command": "ls"})),
                created_at=T + 2, model="claude-opus-4-1",
                usage={"input_tokens": 10, "output_tokens": 3}, cost=0.5),
        Message("user", (Part.tool_result("tu1", "a.py\nb.py"),), created_at=T + 3),
        Message("assistant", (Part.text("Two files."), Part.patch("--- a\n+++ b\n")), created_at=T + 3),
        Message("system", (Part.compaction("Summary: listed files"),), created_at=T + 4),
        Message("user", (Part.image("image/png", data="iVBORw0KGgo="), Part.text("see")),
                created_at=None),
    ]
    return s, msgs


def test_a_foreign_session_is_refused_while_opencode_has_no_model() -> None:
    """Issue 37: OpenCode never ran here, no model configured. The session used to name a guessed
    provider (``anthropic``) OpenCode does not have, and once the user configured a model
    ``opencode run --session`` failed; now it is refused, saying how to configure one."""
    s, msgs = foreign_session()
    env = make_env("/home/dev/proj", project_id=PID)
    with pytest.raises(OxideError) as e:
        opencode.export(s, msgs, env)
    assert "OpenCode has no model configured" in str(e.value)
    conf = Path(os.environ["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    assert e.value.hint and f'set "model": "<provider>/<model>" in {conf}' in e.value.hint
    assert not data_root().exists() or not any(data_root().iterdir())


def test_export_of_a_foreign_session() -> None:
    s, msgs = foreign_session()
    conf = Path(os.environ["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    conf.parent.mkdir(parents=True)
    conf.write_text(json.dumps({"model": "anthropic/claude-opus-4-1"}))
    env = make_env("/home/dev/proj", project_id=PID)
    exp = opencode.export(s, msgs, env)
    assert re.fullmatch(r"ses_[0-9a-f]{12}[0-9A-Za-z]{14}", exp.native_id)
    assert exp.cwd == "/home/dev/proj/src"
    assert list(exp.command) == ["opencode", "--session", exp.native_id]
    assert sorted(exp.lost) == [
        "1 Bash tool calls became OpenCode bash tool parts",
        "1 patches became text", "1 reasoning signatures dropped",
        "1 system messages became user messages"]
    assert exp == opencode.export(s, msgs, env)  # deterministic
    db = data_root() / "opencode.db"
    rows = exp.databases[db]
    assert rows.session["directory"] == "/home/dev/proj/src" and rows.session["project_id"] == PID
    assert rows.session["title"] == "Claude work"
    assert (rows.session["time_created"], rows.session["time_updated"]) == (T, T + 5000)
    # the totals are the sums over the assistant messages, as OpenCode keeps them
    assert (rows.session["tokens_input"], rows.session["tokens_output"], rows.session["cost"]) == (
        10, 3, 0.5)
    assert opencode.write_database(db, rows) == "written"

    [s2], m2, rest = collect(db)
    assert not [e for e in rest if isinstance(e, Problem)]
    got = m2[s2.id]
    # the tool-result-only user message is folded into the call; a summary message is added
    assert [m.role for m in got] == ["user", "assistant", "assistant", "user", "assistant", "user"]
    for m in got:
        assert re.fullmatch(r"msg_[0-9a-f]{12}[0-9A-Za-z]{14}", m.native_id or "")
        for p in m.parts:
            assert p.type == PartType.TOOL_RESULT or re.fullmatch(
                r"prt_[0-9a-f]{12}[0-9A-Za-z]{14}", p.get("id") or "")
    call, result = got[1].parts[1], got[1].parts[2]
    assert (call.type, call.get("name"), call.get("input")) == (PartType.TOOL_CALL, "bash", {"command": "ls"})
    assert call.get("state")["status"] == "completed"
    assert (result.type, result.get("call_id"), result.get("output")) == (
        PartType.TOOL_RESULT, "tu1", "a.py\nb.py")
    assert got[1].usage == {"input": 10, "output": 3, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    assert got[1].model == "claude-opus-4-1" and got[1].extra["providerID"] == "anthropic"
    assert got[3].is_compaction() and got[3].parts[0].get("summary") == "Summary: listed files"
    assert got[4].extra["summary"] is True and got[4].text() == "Summary: listed files"
    assert [m.compacted for m in got] == [True, True, True, False, False, False]
    assert got[5].parts[0].type == PartType.FILE
    assert got[5].parts[0].get("url") == "data:image/png;base64,iVBORw0KGgo="
    # ids ascend with the message order
    ids = [m.native_id for m in got]
    assert ids == sorted(ids)


def test_foreign_session_gets_the_configured_model_and_loses_its_harness() -> None:
    s, msgs = foreign_session()
    harness = Message("user", (Part.text("<environment_context>cwd</environment_context>"),),
                      created_at=T, extra={"harness": True})
    conf = Path(os.environ["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    conf.parent.mkdir(parents=True)
    conf.write_text(json.dumps({"model": "fake/fake-model", "provider": {}}))
    env = make_env("/home/dev/proj", project_id=PID)
    exp = opencode.export(replace_model(s, "openai/fake-model"), [harness, *msgs], env)
    assert "1 claude harness messages left out (context its own harness injected)" in exp.lost
    assert ("1 model openai/fake-model of claude recorded as OpenCode's configured model "
            "fake/fake-model") in exp.lost
    rows = next(iter(exp.databases.values()))
    datas = [json.loads(m["data"]) for m in rows.messages]
    assert not any("environment_context" in json.dumps(d) for d in datas)
    assert not any("environment_context" in p["data"] for p in rows.parts)
    users = [d for d in datas if d["role"] == "user"]
    assert all(u["model"] == {"providerID": "fake", "modelID": "fake-model"} for u in users)
    assert all((d["providerID"], d["modelID"]) == ("fake", "fake-model") for d in datas
               if d["role"] == "assistant")
    assert json.loads(rows.session["model"]) == {"id": "fake-model", "providerID": "fake"}


def replace_model(s: Session, model: str) -> Session:
    from dataclasses import replace

    return replace(s, model=model)


# ------------------------------------------------------------------ robustness

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "type", "text", "state", "time", "info", "messages", "parts", "role",
                         "tool", "callID", "input", "output", "error", "status", "created",
                         "summary", "parentID", "url", "source", "path", "hash", "tokens", "cost"]),
        c, max_size=5),
    max_leaves=12,
)
EXPORT_BYTES = EXPORT_FILE.read_bytes()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(EXPORT_BYTES)), flips=st.lists(
    st.tuples(st.integers(0, len(EXPORT_BYTES) - 1), st.integers(0, 255)), max_size=6))
def test_corrupted_export_never_raises(tmp_path: Path, cut: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray(EXPORT_BYTES[:cut] if cut % 3 == 0 else EXPORT_BYTES)
    for pos, byte in flips:
        if pos < len(data):
            data[pos] = byte
    path = tmp_path / "corrupt.json"
    path.write_bytes(bytes(data))
    events = list(opencode.parse(path))
    assert isinstance(events[-1], Resumable)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=JSON, info=JSON, parts=JSON)
def test_arbitrary_json_never_raises(tmp_path: Path, doc: Any, info: Any, parts: Any) -> None:
    path = tmp_path / "x.json"
    for candidate in (doc, {"info": {"id": "ses_x", **(info if isinstance(info, dict) else {})},
                            "messages": [{"info": info, "parts": parts},
                                         {"info": {"id": "m", "role": "user"}, "parts": [parts]}]}):
        path.write_text(json.dumps(candidate))
        events = list(opencode.parse(path))
        assert isinstance(events[-1], Resumable)
        for ev in events:
            if isinstance(ev, FoundSession):
                opencode.export(ev.session, [], make_env(DIR))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(session=JSON, message=JSON, part=JSON, raw=st.binary(max_size=40))
def test_corrupted_storage_tree_never_raises(
    tmp_path: Path, session: Any, message: Any, part: Any, raw: bytes
) -> None:
    storage = tmp_path / "storage"
    if not storage.exists():
        shutil.copytree(FIX / "storage", storage)
    path = session_file(storage, SES_A)
    msg_file = sorted((storage / "message" / SES_A).glob("*.json"))[1]
    part_files = sorted((storage / "part" / msg_file.stem).glob("*.json"))
    path.write_text(json.dumps(session))
    msg_file.write_text(json.dumps(message))
    part_files[0].write_text(json.dumps(part))
    part_files[1].write_bytes(raw)
    events = list(opencode.parse(path))
    assert isinstance(events[-1], Resumable)
    for ev in events:
        if isinstance(ev, FoundSession):
            msgs = [e.message for e in events if isinstance(e, FoundMessage)]
            opencode.export(ev.session, msgs, make_env(DIR))


def test_other_json_is_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"theme": "dark"}')
    assert list(opencode.parse(path)) == [
        Problem(None, f"{path}: not an OpenCode session, skipped"), Resumable(0, {"format": "invalid"})]
    missing = tmp_path / "gone.json"
    events = list(opencode.parse(missing))
    assert isinstance(events[0], Problem) and events[-1] == Resumable(0, {"format": "missing"})


# ------------------------------------------------------------------ a real OpenCode 1.18.33 database

REAL_DB = FIX / "db-1.18.33" / "opencode.db"  # one `opencode run` of the compat script (shell, write, edit)
REAL_SES = "ses_dcce779b5ffePa40Obk96b354A"
REAL_DIR = "/tmp/oc/a/repo"


def real_db(tmp_path: Path) -> Path:
    db = tmp_path / "real" / "opencode.db"
    db.parent.mkdir()
    shutil.copy(REAL_DB, db)
    return db


def rows_of(db: Path, sid: str = REAL_SES) -> dict[str, list[dict[str, Any]]]:
    from oxide_git.agents.opencode.write import read_rows

    with sqlite3.connect(db) as conn:
        return read_rows(conn, sid)


def test_real_db_parses_completely(tmp_path: Path) -> None:
    db = real_db(tmp_path)
    assert opencode.discover(make_env(REAL_DIR)) == []  # not in the default store
    [s], messages, rest = collect(db, env=make_env(REAL_DIR))
    assert not [e for e in rest if isinstance(e, Problem | Unknown)]
    assert s.native_id == REAL_SES and s.cwd == REAL_DIR and s.title == "Compat session"
    assert s.extra["version"] == "1.18.33"
    assert s.extra["totals"]["tokens_input"] == 400 and s.extra["totals"]["tokens_output"] == 80
    assert s.extra["model"] == {"id": "fake-model", "providerID": "fake", "variant": "default"}
    msgs = messages[s.id]
    assert [m.role for m in msgs] == ["user", "assistant", "assistant", "assistant", "assistant"]
    assert "OC-PROMPT-1" in msgs[0].text()
    calls = [p for m in msgs for p in m.parts if p.type == PartType.TOOL_CALL]
    results = [p for m in msgs for p in m.parts if p.type == PartType.TOOL_RESULT]
    assert [c.get("name") for c in calls] == ["bash", "write", "edit"]
    assert [r.get("call_id") for r in results] == [c.get("call_id") for c in calls]
    assert results[0].get("output") == "from-shell\n"
    assert msgs[-1].text() == "Done with one." and msgs[-1].usage["total"] == 120


def test_real_db_round_trip_gives_the_same_rows(tmp_path: Path) -> None:
    db = real_db(tmp_path)
    [s], messages, _ = collect(db)
    env = make_env(REAL_DIR, project_id="2e8153c4a4307421b6f2de9a9611f5ea1594353a")
    exp = opencode.export(s, messages[s.id], env)
    assert exp.native_id == REAL_SES and list(exp.lost) == [] and exp.files == {}
    [(target, rows)] = exp.databases.items()
    assert target == data_root() / "opencode.db" and not target.exists()
    assert opencode.write_database(target, rows) == "written"
    assert rows_of(target) == rows_of(db)  # every column of every row, JSON text included
    # OpenCode's own schema and migration list, so that OpenCode opens it as its own
    with sqlite3.connect(target) as conn, sqlite3.connect(db) as real:
        q = "SELECT type, name FROM sqlite_master ORDER BY type, name"
        assert conn.execute(q).fetchall() == real.execute(q).fetchall()
        q = "SELECT id FROM migration ORDER BY id"
        assert conn.execute(q).fetchall() == real.execute(q).fetchall()
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # and reading it back gives the same messages: a re-import changes nothing
    [s2], m2, _ = collect(target)
    assert m2[s2.id] == messages[s.id] and s2.extra == s.extra


def test_real_db_written_into_an_existing_database(tmp_path: Path) -> None:
    db = real_db(tmp_path)
    [s], messages, _ = collect(db)
    msgs = messages[s.id]
    rows = opencode.export(s, msgs, make_env(REAL_DIR)).databases[data_root() / "opencode.db"]
    before = rows_of(db)
    assert opencode.write_database(db, rows) == "unchanged"
    shorter = opencode.export(s, msgs[:-1], make_env(REAL_DIR)).databases[data_root() / "opencode.db"]
    assert opencode.write_database(db, shorter) == "kept"  # OpenCode has more: theirs stays
    assert rows_of(db) == before
    assert opencode.write_database(db, shorter, rewound=True) == "written"  # a rewind wins
    assert len(rows_of(db)["message"]) == 4
    assert opencode.write_database(db, rows) == "written"
    assert rows_of(db) == before
    with sqlite3.connect(db) as conn:  # the rest of the database is untouched
        assert conn.execute("SELECT count(*) FROM event").fetchone() == (52,)


def test_a_failed_write_leaves_the_database_as_it_was(tmp_path: Path, monkeypatch: Any) -> None:
    from dataclasses import replace

    from oxide_git.agents.opencode import write as opencode_write

    db = real_db(tmp_path)
    [s], messages, _ = collect(db)
    rows = opencode.export(s, messages[s.id], make_env(REAL_DIR)).databases[data_root() / "opencode.db"]
    other = tmp_path / "other" / "opencode.db"
    broken = replace(rows, parts=[*rows.parts, {"id": "prt_x", "message_id": "msg_x"}])  # no data
    with pytest.raises(OxideError, match=re.escape("NOT NULL constraint failed: part.session_id); nothing was written")):
        opencode.write_database(other, broken)
    assert rows_of(other) == {"session": [], "message": [], "part": []}
    # a writer holding the database: we wait for it (busy timeout), then give up, writing nothing
    monkeypatch.setattr(opencode_write, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(other, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(OxideError, match=re.escape("stayed locked for 0.2 s; nothing was written")):
            opencode.write_database(other, rows)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert opencode.write_database(other, rows) == "written"


def test_unknown_part_types_and_roles_are_reported_with_the_version(tmp_path: Path) -> None:
    db = real_db(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("""UPDATE part SET data = json_set(data, '$.type', 'hologram')
                        WHERE id = 'prt_233188c6d001HB400HdVBdg1cL'""")
        conn.execute("""UPDATE message SET data = json_set(data, '$.role', 'narrator')
                        WHERE id = 'msg_233188f8a001v5y1w6X9ySYQv8'""")
    events = list(opencode.parse(db))
    assert [e for e in events if isinstance(e, Unknown)] == [
        Unknown("part/hologram", "1.18.33"), Unknown("message/narrator", "1.18.33")]
    _, messages, _ = collect(db)
    [kept] = [p for m in next(iter(messages.values())) for p in m.parts if p.get("kind") == "hologram"]
    assert kept.get("raw")["snapshot"] == "3942cedfea53e999bd13d0a27a905957c5e62b1a"


def test_real_export_file_of_1_18_keeps_its_totals(tmp_path: Path) -> None:
    """`opencode export` of the same session: the same messages, and the totals of its Session.Info
    (cost, tokens) become the session row's."""
    [s], messages, rest = collect(FIX / "db-1.18.33" / "export.json")
    assert not [e for e in rest if isinstance(e, Problem | Unknown)]
    [db_s], db_messages, _ = collect(real_db(tmp_path))
    assert s.id == db_s.id and messages[s.id] == strip_rows(db_messages[db_s.id])
    rows = opencode.export(s, messages[s.id], make_env(REAL_DIR)).databases[data_root() / "opencode.db"]
    real = rows_of(REAL_DB)["session"][0]
    assert {k: rows.session[k] for k in ("cost", "tokens_input", "tokens_output", "tokens_reasoning")} == {
        k: real[k] for k in ("cost", "tokens_input", "tokens_output", "tokens_reasoning")}


def test_columns_of_a_newer_schema_are_reported_kept_and_written_back(tmp_path: Path) -> None:
    db = real_db(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE session ADD COLUMN pinned integer")
        conn.execute("ALTER TABLE part ADD COLUMN origin text")
        conn.execute("UPDATE session SET pinned = 1")
        conn.execute("UPDATE part SET origin = 'cli' WHERE id = 'prt_233188694001JG39PH1Pz0qMJV'")
    before = rows_of(db)
    events = list(opencode.parse(db))
    assert [e for e in events if isinstance(e, Unknown)] == [
        Unknown("session.pinned", "1.18.33"), Unknown("part.origin", "1.18.33")]  # NULL: nothing
    [s], messages, _ = collect(db)
    rows = opencode.export(s, messages[s.id], make_env(REAL_DIR)).databases[data_root() / "opencode.db"]
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM part")
        conn.execute("DELETE FROM message")
        conn.execute("DELETE FROM session")
    assert opencode.write_database(db, rows) == "written"
    assert rows_of(db) == before
    # a database without those columns takes the rest
    fresh = data_root() / "opencode.db"
    assert opencode.write_database(fresh, rows) == "written"
    assert len(rows_of(fresh)["part"]) == 16 and "pinned" not in rows_of(fresh)["session"][0]


@pytest.mark.parametrize(("name", "inp", "tool", "args"), [
    ("Bash", {"command": "ls -la", "description": "list"}, "bash", {"command": "ls -la", "description": "list"}),
    ("exec_command", {"cmd": "echo hi", "workdir": "/w"}, "bash", {"command": "echo hi", "workdir": "/w"}),
    ("shell", {"command": ["bash", "-lc", "make test"]}, "bash", {"command": "make test"}),
    ("local_shell", {"command": ["ls", "a b"]}, "bash", {"command": "ls 'a b'"}),
    ("Write", {"file_path": "/w/a.txt", "content": "x\n"}, "write", {"filePath": "/w/a.txt", "content": "x\n"}),
    ("Edit", {"file_path": "rel.py", "old_string": "a", "new_string": "b", "replace_all": True}, "edit",
     {"filePath": "/w/rel.py", "oldString": "a", "newString": "b", "replaceAll": True}),
    ("Read", {"file_path": "/w/a.txt", "offset": 3}, "read", {"filePath": "/w/a.txt", "offset": 3}),
    ("edit", {"path": "/w/n.txt", "edits": [{"oldText": "a", "newText": "b"}]}, "edit",  # pi's
     {"filePath": "/w/n.txt", "oldString": "a", "newString": "b"}),
    ("edit", {"path": "/w/n.txt", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]},
     None, None),
    ("apply_patch", "*** Begin Patch\n*** End Patch\n", "apply_patch",
     {"patchText": "*** Begin Patch\n*** End Patch\n"}),
    ("TodoWrite", {"todos": []}, None, None),
    ("Bash", "not json", None, None),
    ("Edit", {"file_path": "/w/a"}, None, None),
])
def test_other_agents_tools_as_opencode_tools(name: str, inp: Any, tool: str | None, args: Any) -> None:
    from oxide_git.agents.opencode.tools import opencode_tool, tool_part

    got = opencode_tool(name, inp, "/w")
    assert got == (None if tool is None else (tool, args))
    if got is not None:
        done = tool_part(Part.tool_call("c1", name, inp), Part.tool_result("c1", [{"type": "text", "text": "ok"}]),
                         got[0], got[1], T)
        assert done["state"]["status"] == "completed" and done["state"]["output"] == "ok"
        failed = tool_part(Part.tool_call("c1", name, inp), Part.tool_result("c1", "boom", True), got[0], got[1], T)
        assert (failed["state"]["status"], failed["state"]["error"]) == ("error", "boom")
