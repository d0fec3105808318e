"""Issue 14, "the first hour of a real user": each test does what the user did (items 1-5, 7, 15)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store
from tests.conftest import git, make_ctx, oxide

BASE = "019c49c68c4c"  # sessions of one moment share their first 12 characters


def _sessions(repo: Path, *specs: tuple[str, str | None, str]) -> None:
    """(oxide id, native id, first prompt) sessions of this worktree."""
    oxide(repo, "init")
    ctx = make_ctx(repo)
    for sid, native, prompt in specs:
        s = Session(id=sid, agent="claude", native_id=native, worktree=ctx.repo.worktree_id)
        store.append(ctx, s, [Message("user", (Part.text(prompt),)),
                              Message("assistant", (Part.text(f"answer to {prompt}"),))])
    ctx.close()


def _ids_column(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]


def test_list_shows_ids_that_resolve_even_when_sessions_share_a_moment(repo: Path) -> None:
    """Item 1: `list` showed 019c49c68c4c three times; `show` of it was ambiguous."""
    _sessions(repo, (BASE + "a" * 20, "n1", "first"), (BASE + "ab" + "0" * 18, "n2", "second"),
              (BASE + "b" * 20, "n3", "third"))
    ids = _ids_column(oxide(repo, "list").stdout)
    assert len(ids) == 3 and len(set(ids)) == 3, ids
    for shown in ids:
        r = oxide(repo, "show", shown, check=False)
        assert r.returncode == 0, r.stderr
    # As git abbreviates: no longer than needed, never under the minimum.
    assert sorted(len(i) for i in ids) == [13, 14, 14]
    assert all(len(i) >= 8 for i in ids)


def test_an_abbreviation_has_a_minimum_and_avoids_agent_ids(repo: Path) -> None:
    from oxide_git.core.abbrev import Abbreviator

    ab = Abbreviator([("0123456789", "0123456789"), ("0123456789-native", "0123456789"),
                      ("01234567ff", "01234567ff"), ("abcdef0000", "abcdef0000"),
                      ("abcdef0000x", "abcdef0000")])
    assert ab.of("0123456789") == "012345678"  # 9: "01234567" is also s2's
    assert ab.of("abcdef0000") == "abcdef00"  # its own agent id does not compete
    assert ab.of(None) == "-"


def test_an_agents_full_session_id_beats_its_sub_agents(repo: Path) -> None:
    """Item 2: a Claude session id was "ambiguous" with its two sub-agent sessions."""
    native = "4d5611e5-241a-462a-8d15-5122611a9569"
    _sessions(repo, ("1" * 32, native, "main task"), ("2" * 32, native + "/agent-a2898e3", "sub one"),
              ("3" * 32, native + "/agent-acompact-e1f845", "sub two"))
    out = oxide(repo, "show", native).stdout
    assert out.startswith("session 11111111 (" + "1" * 32 + ")")
    # a prefix that matches several still says which, by ids the user can type
    r = oxide(repo, "show", native[:8], check=False)
    assert r.returncode == 1 and "matches 3 sessions" in r.stderr
    for typable in ("11111111", "22222222", "33333333"):
        assert typable in r.stderr


def test_status_says_which_session_is_current_and_why_and_checkpoint_names_it(repo: Path) -> None:
    """Item 3: a checkpoint attached itself to a session the user could not see."""
    _sessions(repo, ("4" * 32, "n4", "fix the parser"), ("5" * 32, "n5", "write docs"))
    out = oxide(repo, "status").stdout
    assert "No current session" in out and "git oxide switch SESSION" in out
    oxide(repo, "switch", "5555")
    out = oxide(repo, "status").stdout
    assert "Current session: session 55555555 (claude: write docs)" in out
    assert "why: chosen with `git oxide switch`" in out
    assert "git oxide switch SESSION" in out
    r = oxide(repo, "checkpoint", "-m", "mine")
    assert "tied to session 55555555 (claude: write docs) (the current one" in r.stderr
    r = oxide(repo, "checkpoint", "--session", "4444", "-m", "theirs")
    assert "tied to session 44444444 (claude: fix the parser)" in r.stderr
    oxide(repo, "switch", "--none")
    assert "No current session" in oxide(repo, "status").stdout


def test_list_says_how_many_sessions_it_hides(repo: Path) -> None:
    """Item 4: sessions of another folder were under WORKTREE - and `list` printed nothing."""
    oxide(repo, "init")
    ctx = make_ctx(repo)
    store.append(ctx, Session(id="6" * 32, agent="codex", worktree=None), [Message("user", (Part.text("x"),))])
    ctx.close()
    r = oxide(repo, "list")
    assert "1 session(s) of other worktrees or other folders are not shown" in r.stderr
    assert "git oxide list --all" in r.stderr
    assert "66666666" in oxide(repo, "list", "--all").stdout


def _claude_like_session(repo: Path) -> str:
    """A session as Claude Code's importer stores it: progress records among the turns."""
    oxide(repo, "init")
    ctx = make_ctx(repo)
    progress = Part("other", {"kind": "progress/hook_progress",
                              "raw": {"parentUuid": "p-1", "data": {"type": "hook_progress", "n": 1}}})
    msgs = [
        Message("user", (Part.text("<system-reminder>\nhook context</system-reminder>"),), extra={"isMeta": True}),
        Message("user", (Part.text("Rename the parser module"),)),
        Message("system", (progress,)),
        Message("assistant", (Part("reasoning", {"text": "I should look first.\nThen act.\nThird."}),
                              Part.text("\n\n"),
                              Part.tool_call("t1", "Bash", {"command": "git mv parse.py parser.py",
                                                           "description": "rename it"}))),
        Message("system", (progress, progress)),
        Message("tool", (Part("tool_result", {"call_id": "t1", "output": "\n".join(
            f"line {i}" for i in range(30))}),)),
        Message("assistant", (Part.text(""),)),  # an empty assistant turn
        Message("assistant", (Part.text("Done: parse.py is now parser.py."),)),
    ]
    store.append(ctx, Session(id="7" * 32, agent="claude", native_id="c7", worktree=ctx.repo.worktree_id), msgs)
    ctx.close()
    return "7" * 32


def test_show_prints_the_conversation_not_record_dumps(repo: Path) -> None:
    """Item 5: 1,103 of 2,413 lines of `show` were Python dict dumps of progress records."""
    _claude_like_session(repo)
    out = oxide(repo, "show", "7777").stdout
    assert "{'" not in out and "'parentUuid'" not in out  # no Python repr anywhere
    assert "parentUuid" not in out  # records kept whole are not shown by default...
    assert "3 of the 8 records are not shown: progress 2, empty message 1" in out  # ...but counted
    assert "messages: 5 (8 records, #0-#7)" in out  # progress is not counted as a message
    assert "title:    Rename the parser module" in out  # the first real prompt, not the harness's
    assert "→ Bash: git mv parse.py parser.py" in out  # a tool call on one line
    assert "line 3" in out and "line 4" not in out and "26 more line(s) of output" in out
    assert "(reasoning, 3 line(s)) I should look first." in out and "Third." not in out
    assert not re.search(r"#6 assistant\n\n", out + "\n")  # the empty assistant turn is dropped
    full = oxide(repo, "show", "7777", "--full").stdout
    assert '"parentUuid": "p-1"' in full and "{'" not in full  # everything, as JSON text
    assert "line 29" in full and "Third." in full


def test_list_show_and_search_give_one_title(repo: Path) -> None:
    """Item 5: list, show, search and the HTML export showed different titles."""
    _claude_like_session(repo)
    listed = oxide(repo, "list").stdout
    assert "Rename the parser module" in listed and "system-reminder" not in listed
    assert "Rename the parser module" in oxide(repo, "show", "7777").stdout
    hits = json.loads(oxide(repo, "search", "parser", "--json").stdout)
    assert {h["title"] for h in hits} == {"Rename the parser module"}
    page = oxide(repo, "export", "7777", "--format", "html").stdout
    assert "<h1>Rename the parser module</h1>" in page
    assert "<title>Rename the parser module</title>" in page
    md = oxide(repo, "export", "7777", "--format", "markdown").stdout
    assert "## Rename the parser module\n" in md and "**Messages:** 5 (8 records, #0-#7)" in md


def test_list_counts_messages_as_people_do(repo: Path) -> None:
    _claude_like_session(repo)
    row = oxide(repo, "list").stdout.splitlines()[1].split()
    assert row[:3] == ["77777777", "claude", "5"]


def test_mistyped_command_and_agent_get_suggestions(repo: Path) -> None:
    """Item 7: `lst` got click's bare "No such command"; `--agent cladue` an empty table."""
    oxide(repo, "init")
    r = oxide(repo, "lst", check=False)
    assert r.returncode == 2 and "The most similar command is: list" in r.stderr
    r = oxide(repo, "list", "--agent", "cladue", check=False)
    assert r.returncode == 2 and "did you mean 'claude'" in r.stderr
    assert "claude, codex, opencode, aider" in r.stderr


def test_an_identical_checkpoint_is_not_written_again(repo: Path) -> None:
    """Item 15: five checkpoints of one tree in a row."""
    oxide(repo, "init")
    first = oxide(repo, "checkpoint", "-m", "a").stdout.strip()
    again = oxide(repo, "checkpoint", "-m", "b")
    assert again.stdout.strip() == first
    assert "already holds this worktree as it is" in again.stderr and "nothing new written" in again.stderr
    assert len(json.loads(oxide(repo, "checkpoints", "--json").stdout)) == 1
    assert git(repo, "for-each-ref", "refs/oxide/checkpoints").count("\n") == 1
    (repo / "README.md").write_text("changed\n")
    third = oxide(repo, "checkpoint").stdout.strip()
    assert third != first
    assert len(json.loads(oxide(repo, "checkpoints", "--json").stdout)) == 2
