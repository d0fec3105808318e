"""Issue 38 item 3, "the first hour": each test does what the new user did."""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from oxide_git.store import logread
from tests.conftest import git, make_ctx, oxide

DEMO = Path(__file__).resolve().parents[2] / "docs" / "demo.sh"


@pytest.mark.process
def test_the_demo_shows_commands_that_paste() -> None:
    """It showed `$ git oxide fork 019ca8d7 --at 3 --title try another approach`."""
    text = DEMO.read_text()
    functions = "\n".join(m.group(0) for m in re.finditer(r"(?ms)^(quote|show)\(\) \{.*?\}$", text))
    args = ["git", "oxide", "fork", "019ca8d7", "--at", "3", "--title", "try another approach",
            "it's", "", "$HOME", "a\\b", "--x=1"]
    out = subprocess.run(["bash", "-c", functions + '\nshow "$@"', "bash", *args],
                         capture_output=True, text=True, check=True).stdout
    shown = re.sub(r"\x1b\[[0-9;]*m", "", out).strip()
    assert shown.startswith("$ ")
    assert shlex.split(shown[2:]) == args
    assert "git oxide fork 019ca8d7 --at 3" in shown  # plain words stay plain
    assert 'show git oxide checkpoint -m \'"' not in text  # no hand-quoting left


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_list_shows_sessions_imported_by_path(repo: Path, tmp_path: Path) -> None:
    """A transcript from another machine (cwd /work/project), imported by path: `list` printed
    nothing on stdout."""
    oxide(repo, "init")
    copy = tmp_path / "theirs.jsonl"
    copy.write_bytes((FIXTURES / "claude" / "split_response.jsonl").read_bytes())
    oxide(repo, "import", "--agent", "claude", str(copy))
    listed = oxide(repo, "list")
    assert "List the files and read README.md" in listed.stdout, listed.stderr
    assert "not shown" not in listed.stderr
    [row] = json.loads(oxide(repo, "list", "--json").stdout)
    assert row["cwd"] == "/work/project" and row["worktree"] == "main"  # where it ran, where it is
    ctx = make_ctx(repo)
    stored = logread.tip(ctx.repo.objects, ctx.repo.common_dir, row["id"])
    ctx.close()
    assert stored is not None and stored.session.source["imported_by_path"] == "main"  # recorded
    # Growing and imported again (by path, or found otherwise), it stays this worktree's.
    with copy.open("a") as f:
        f.write(json.dumps({"type": "user", "uuid": "u-more", "sessionId": row["native_id"],
                            "cwd": "/work/project", "timestamp": "2026-02-01T11:00:00.000Z",
                            "message": {"role": "user", "content": "one more thing"}}) + "\n")
    oxide(repo, "import", "--agent", "claude", str(copy))
    assert json.loads(oxide(repo, "list", "--json").stdout)[0]["worktree"] == "main"
    assert len(json.loads(oxide(repo, "list", "--all", "--json").stdout)) == 1


def test_a_folder_of_transcripts_imported_by_path(repo: Path, tmp_path: Path) -> None:
    """Many files (stored as one batch, parsed in a child process) are recorded the same way."""
    oxide(repo, "init")
    folder = tmp_path / "theirs"
    folder.mkdir()
    text = (FIXTURES / "claude" / "split_response.jsonl").read_text()
    for i in range(6):
        native = f"10000000-0000-4000-8000-00000000010{i}"
        (folder / f"{native}.jsonl").write_text(text.replace("10000000-0000-4000-8000-000000000001", native))
    oxide(repo, "import", "--agent", "claude", str(folder))
    assert len(json.loads(oxide(repo, "list", "--json").stdout)) == 6


def test_a_session_of_another_worktree_stays_there(repo: Path, tmp_path: Path) -> None:
    """By path or not, a session whose folder is a worktree here is that worktree's."""
    oxide(repo, "init")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other), "-b", "other")
    copy = tmp_path / "theirs.jsonl"
    copy.write_text((FIXTURES / "claude" / "split_response.jsonl").read_text()
                    .replace("/work/project", str(other)))
    oxide(repo, "import", "--agent", "claude", str(copy))
    assert oxide(repo, "list", "--json").stdout.strip() in ("[]", "")
    assert len(json.loads(oxide(other, "list", "--json").stdout)) == 1


def _cli(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    from click.testing import CliRunner

    from oxide_git.cli import main

    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, (r.output, r.exception)
    return r


def test_show_fork_and_list_count_and_number_alike(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`fork` said `at message 8` of a session whose `show` said 5 messages, and the header's
    record count disagreed with the records left out."""
    oxide(repo, "init")
    oxide(repo, "import", "--agent", "claude", str(FIXTURES / "claude" / "split_response.jsonl"))
    [row] = json.loads(oxide(repo, "list", "--json").stdout)
    out = _cli(repo, monkeypatch, "show", row["id"]).stdout
    head = re.search(r"^messages: (\d+) \((\d+) records, #0-#(\d+)\)", out, re.M)
    assert head, out
    messages, records, last = map(int, head.groups())
    assert (messages, records, last) == (5, 8, 7)
    numbers = [int(n) for n in re.findall(r"^#(\d+) ", out, re.M)]
    left_out = re.search(r"^\((\d+) of the (\d+) records are not shown", out, re.M)
    assert left_out, out
    assert len(numbers) + int(left_out.group(1)) == records == int(left_out.group(2))
    listed = _cli(repo, monkeypatch, "list").stdout.splitlines()[1]
    assert listed.split()[2] == str(messages)  # MSGS
    fork = _cli(repo, monkeypatch, "fork", row["id"]).stderr
    assert "at its end as" in fork and f"it holds {messages} messages ({records} records, #0-#{last})" in fork
    fork = _cli(repo, monkeypatch, "fork", row["id"], "--at", "3").stderr
    assert "before its #3 as" in fork and "(3 records, #0-#2)" in fork
    child = fork.split(" as ")[1].split(":")[0]
    assert "forked before its #3" in _cli(repo, monkeypatch, "show", child).stdout
    hit = _cli(repo, monkeypatch, "search", "hello").stdout.splitlines()[1].split()
    assert hit[1].startswith("#")  # search's MSG column is the same #N


def _opencode_store(repo: Path) -> None:
    """The OpenCode fixture in this test's OpenCode store, as if it had worked in ``repo``."""
    store = Path(os.environ["XDG_DATA_HOME"]) / "opencode" / "storage"
    shutil.copytree(FIXTURES / "opencode" / "storage", store)
    for f in store.rglob("*.json"):
        f.write_text(f.read_text().replace("/home/dev/proj", str(repo)))


def test_resume_into_another_agent_says_what_changed_in_one_line(repo: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`resume --into codex` of an OpenCode session printed 20 `warning:` lines, some of them
    describing successes."""
    oxide(repo, "init")
    _opencode_store(repo)
    oxide(repo, "import", "--agent", "opencode")
    sid = next(r["id"] for r in json.loads(oxide(repo, "list", "--json").stdout)
               if r["title"] == "Fix the failing test")
    err = _cli(repo, monkeypatch, "resume", sid, "--into", "codex").stderr.splitlines()
    summary = [line for line in err if "changed in translation" in line]
    assert len(summary) == 1 and summary[0].startswith("warning: ")  # something was left out
    assert re.search(r"\d+ left out, \d+ turned into text, \d+ handed over as codex's own calls", summary[0])
    assert "--verbose" in summary[0]
    assert sum(line.startswith("warning:") for line in err) == 1, err
    assert not any("handed over" in line for line in err if line != summary[0])
    verbose = _cli(repo, monkeypatch, "resume", sid, "--into", "codex", "--verbose").stderr.splitlines()
    listed = [line.strip() for line in verbose if line.startswith("  ")]
    as_json = json.loads(_cli(repo, monkeypatch, "resume", sid, "--into", "codex", "--json").stdout)
    assert len(listed) == len(set(as_json["lost"])) > 5
    assert "bash tool calls were handed over as Codex exec_command calls" in listed


def test_a_random_file_given_as_a_transcript_is_one_warning(repo: Path, tmp_path: Path) -> None:
    """793 `warning:` lines for a 200 KB binary file, one a line of it."""
    oxide(repo, "init")
    noise = tmp_path / "noise.jsonl"
    noise.write_bytes(random.Random(38).randbytes(200_000).replace(b"{", b"x"))
    r = oxide(repo, "import", "--agent", "claude", str(noise), check=False)
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) <= 2, r.stderr
    assert re.search(rf"^warning: {re.escape(str(noise))}: not JSON, skipped \((\d+) lines: 1, 2, 3, …\)$",
                     r.stderr, re.M), r.stderr
    r = oxide(repo, "import", "--agent", "claude", str(noise), "--json", check=False)
    assert len(json.loads(r.stdout)["problems"]) > 500  # every line in --json


def _ids(repo: Path, sid: str) -> dict[int, str]:
    return {m["seq"]: m["id"] for m in json.loads(oxide(repo, "show", sid, "--json").stdout)["messages"]}


def test_a_message_id_once_shown_stays_as_the_transcript_grows(repo: Path, tmp_path: Path) -> None:
    """The answer's first line had no time yet: its id had none in it, and the import that read
    the rest of it gave it another id."""
    oxide(repo, "init")
    lines = (FIXTURES / "claude" / "split_response.jsonl").read_text().splitlines(True)
    thinking = json.loads(lines[2])
    del thinking["timestamp"]  # written before the agent stamped it
    transcript = tmp_path / "growing.jsonl"
    transcript.write_text(lines[0] + lines[1] + json.dumps(thinking) + "\n")
    oxide(repo, "import", "--agent", "claude", str(transcript))
    sid = json.loads(oxide(repo, "list", "--json").stdout)[0]["id"]
    shown = _ids(repo, sid)
    with transcript.open("a") as f:
        f.writelines(lines[3:])  # the rest of the answer (with its time), and what followed
    oxide(repo, "import", "--agent", "claude", str(transcript))
    now = _ids(repo, sid)
    assert len(now) > len(shown)
    assert {q: now[q] for q in shown} == shown  # every id shown is still the id
    fork = oxide(repo, "fork", sid, "--at", shown[2])
    assert "before its #2" in fork.stderr


def test_another_message_at_a_number_gets_its_own_id(repo: Path, tmp_path: Path) -> None:
    """A transcript rewritten in place: the message now at #2 is another one, and its id is its own."""
    from oxide_git.imports.importing import import_sessions

    oxide(repo, "init")
    lines = (FIXTURES / "claude" / "split_response.jsonl").read_text().splitlines(True)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(lines[:3]))
    ctx = make_ctx(repo)
    [sid] = [s for f in import_sessions(ctx, [("claude", transcript)]).files for s in f.sessions]
    before = {q: m.id for q, m in _stored_messages(ctx, sid)}
    other = json.loads(lines[2])
    other["uuid"], other["message"]["id"] = "99999999-0000-4000-8000-000000000099", "msg_Z"
    other["timestamp"] = "2026-02-01T12:00:00.000Z"
    transcript.write_text("".join(lines[:2]) + json.dumps(other) + "\n" + "x" * 40 + "\n")
    import_sessions(ctx, [("claude", transcript)])
    after = {q: m.id for q, m in _stored_messages(ctx, sid)}
    ctx.close()
    assert after[0] == before[0] and after[1] == before[1]
    assert after[2] != before[2]


def _stored_messages(ctx: Any, sid: str) -> list[tuple[int, Any]]:
    from oxide_git.store import sessionlog

    log = sessionlog.load(ctx.repo, sid)
    assert log is not None
    return list(sessionlog.iter_messages(ctx.repo, log.commit.tree))
