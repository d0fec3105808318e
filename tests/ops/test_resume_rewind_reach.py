"""A conversation rewind reaches every agent the session was resumed into: records of resumes into
other agents written on top of the rewind do not hide it. Resuming into the session's own agent
records nothing; after a rewind into Aider, its input history is still looked at."""

from __future__ import annotations

import json
from pathlib import Path

from oxide_git.git import refs
from tests.conftest import configure_opencode_model, git, oxide
from tests.ops.test_resume_rewound import SID, _line, _transcript


def _into(repo: Path, agent: str) -> dict:  # type: ignore[type-arg]
    return json.loads(oxide(repo, "resume", SID, "--into", agent, "--json").stdout)


def test_a_rewind_reaches_an_agent_after_a_resume_into_another_was_recorded(
        repo: Path, isolated_env: Path) -> None:
    path = _transcript(repo, isolated_env)
    oxide(repo, "import")
    cp = oxide(repo, "checkpoint", "--session", SID).stdout.strip()
    with path.open("a") as f:
        f.write(_line("u2", "a1", "user", "second prompt", "2026-02-01T10:01:01.000Z") + "\n")
        f.write(_line("a2", "u2", "assistant", "second answer", "2026-02-01T10:01:02.000Z") + "\n")
    oxide(repo, "import")
    history = repo / ".aider.chat.history.md"
    _into(repo, "aider")  # the longer conversation, into Aider's history file
    assert "second prompt" in history.read_text()
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    sid = _sid(repo)
    tip = git(repo, "rev-parse", refs.session_ref(sid)).strip()
    _into(repo, "codex")  # records an export on top of the rewind
    assert git(repo, "log", "-1", "--format=%s", refs.session_ref(sid)).strip().startswith("exported to codex")
    assert git(repo, "rev-parse", refs.session_ref(sid) + "^").strip() == tip
    longer = history.read_bytes()
    again = _into(repo, "aider")
    assert again["written"] == [str(history)] and "second prompt" not in history.read_text()
    assert "first answer" in history.read_text()
    assert [Path(p).read_bytes() for p in again["set_aside"]] == [longer]


def test_resuming_a_session_into_its_own_agent_records_no_export(repo: Path, isolated_env: Path) -> None:
    _transcript(repo, isolated_env)
    oxide(repo, "import")
    tip = git(repo, "rev-parse", refs.session_ref(_sid(repo))).strip()
    res = _into(repo, "claude")
    assert res["kept"] and git(repo, "rev-parse", refs.session_ref(_sid(repo))).strip() == tip


def _sid(repo: Path) -> str:
    [row] = json.loads(oxide(repo, "list", "--json").stdout)
    return str(row["id"])


def test_a_rewound_aider_resume_still_looks_at_the_input_history(repo: Path) -> None:
    history = repo / ".aider.chat.history.md"
    history.write_text("\n# aider chat started at 2026-02-01 10:00:00\n\n> aider --model x\n\n"
                       "#### first prompt\n\nfirst answer\n")
    oxide(repo, "import")
    [row] = json.loads(oxide(repo, "list", "--json").stdout)
    cp = oxide(repo, "checkpoint", "--session", row["id"]).stdout.strip()
    with history.open("a") as f:
        f.write("\n#### second prompt\n\nsecond answer\n")
    oxide(repo, "import")
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    res = json.loads(oxide(repo, "resume", row["id"], "--into", "aider", "--json").stdout)
    assert res["written"] == [str(history)] and res["kept"] == [str(repo / ".aider.input.history")]


def test_turns_added_after_a_rewind_end_its_reach(repo: Path, isolated_env: Path) -> None:
    # The rewind governs only while nothing but records of resumes came after it: once the
    # conversation went on, an agent whose own copy is longer keeps it (OpenCode here).
    from oxide_git.core.model import Message, Part
    from oxide_git.store import sessionlog
    from oxide_git.store import writes as store
    from tests.conftest import make_ctx

    path = _transcript(repo, isolated_env)
    oxide(repo, "import")
    cp = oxide(repo, "checkpoint", "--session", SID).stdout.strip()
    with path.open("a") as f:
        f.write(_line("u2", "a1", "user", "second prompt", "2026-02-01T10:01:01.000Z") + "\n")
        f.write(_line("a2", "u2", "assistant", "second answer", "2026-02-01T10:01:02.000Z") + "\n")
    oxide(repo, "import")
    configure_opencode_model()
    first = _into(repo, "opencode")
    [db] = [p for p in first["written"] if p.endswith(".db")]
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    ctx = make_ctx(repo)
    log = sessionlog.load(ctx.repo, _sid(repo))
    assert log is not None
    store.append(ctx, log.session, [Message("user", (Part.text("after the rewind"),))])
    before = Path(db).read_bytes()
    again = _into(repo, "opencode")
    assert db in again["kept"] and db not in again["written"]
    assert Path(db).read_bytes() == before


def test_a_resume_into_another_agent_records_what_it_wrote(repo: Path, isolated_env: Path) -> None:
    from oxide_git.store import sessionlog
    from tests.conftest import make_ctx

    _transcript(repo, isolated_env)
    oxide(repo, "import")
    res = _into(repo, "codex")
    log = sessionlog.load(make_ctx(repo).repo, _sid(repo))
    assert log is not None
    assert log.session.source["exports"] == {"codex": {"native_id": res["native_id"], "messages": 2}}
