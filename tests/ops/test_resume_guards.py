"""What `resume --into` keeps of the agent's own files across rewinds: every copy it sets aside
stays (a second one never overwrites the first), and `resume --last` with nothing to resume says
so instead of printing nothing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import oxide
from tests.ops.test_resume_rewound import SID, _line, _transcript


def _into(repo: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(oxide(repo, "resume", SID, "--into", "claude", "--json").stdout)


def test_a_second_set_aside_copy_never_overwrites_the_first(repo: Path, isolated_env: Path) -> None:
    path = _transcript(repo, isolated_env)
    oxide(repo, "import")
    cp = oxide(repo, "checkpoint", "--session", SID).stdout.strip()
    with path.open("a") as f:
        f.write(_line("u2", "a1", "user", "second prompt", "2026-02-01T10:01:01.000Z") + "\n")
    oxide(repo, "import")
    longer = path.read_bytes()
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    first = _into(repo)
    assert first["set_aside"] == [str(path) + ".oxide-bak"] and Path(first["set_aside"][0]).read_bytes() == longer

    with path.open("a") as f:  # the user went on again in Claude, and it was imported
        f.write(_line("u3", "a1", "user", "third prompt", "2026-02-01T10:02:01.000Z") + "\n")
    oxide(repo, "import")
    other = path.read_bytes()
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    second = _into(repo)
    assert second["written"] == [str(path)] and "third prompt" not in path.read_text()
    assert second["set_aside"] == [str(path) + ".oxide-bak.1"]
    assert Path(second["set_aside"][0]).read_bytes() == other
    assert Path(first["set_aside"][0]).read_bytes() == longer  # the first copy is still there

    with path.open("a") as f:  # and once more: a third copy, beside the two
        f.write(_line("u4", "a1", "user", "fourth prompt", "2026-02-01T10:03:01.000Z") + "\n")
    oxide(repo, "import")
    third_file = path.read_bytes()
    oxide(repo, "rewind", cp, "--conversation", "--yes")
    third = _into(repo)
    assert third["set_aside"] == [str(path) + ".oxide-bak.2"]
    assert Path(third["set_aside"][0]).read_bytes() == third_file


def test_resume_last_with_no_session_says_so(repo: Path) -> None:
    oxide(repo, "init")
    r = oxide(repo, "resume", "--last", "--into", "claude", check=False)
    assert r.returncode == 1 and r.stdout == ""
    assert "error: there is no session to resume" in r.stderr and "hint: run `git oxide import` first" in r.stderr


def test_resume_last_takes_the_most_recently_updated_session(repo: Path) -> None:
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.store import writes as store
    from tests.conftest import NOW_MS, make_ctx

    oxide(repo, "init")
    older, newer = "0" * 12 + "a" * 20, "0" * 12 + "b" * 20
    for sid, updated in ((newer, NOW_MS + 1000), (older, NOW_MS)):  # the newer one is written first
        store.append(make_ctx(repo, NOW_MS), Session(sid, "claude", worktree="main", updated_at=updated),
                     [Message("user", (Part.text(sid),))])
    out = json.loads(oxide(repo, "resume", "--last", "--format", "json").stdout)
    assert out["session"]["id"] == newer


def test_the_context_of_a_session_without_compaction_starts_at_its_first_message(repo: Path) -> None:
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.store import writes as store
    from tests.conftest import make_ctx

    oxide(repo, "init")
    sid = "0" * 12 + "c" * 20
    store.append(make_ctx(repo), Session(sid, "claude"),
                 [Message("user" if i % 2 == 0 else "assistant", (Part.text(f"m{i}"),)) for i in range(3)])
    out = json.loads(oxide(repo, "resume", sid, "--format", "json").stdout)
    assert [m["parts"][0]["text"] for m in out["messages"]] == ["m0", "m1", "m2"]
    assert "m0" in oxide(repo, "resume", sid, "--format", "markdown").stdout
