"""Project memory at its edges: what is missing, a text without a newline, a revert of a write
that was changed again, Claude Code's memory folder when there is none, the resumed context."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.core.errors import NotFound, Refused
from oxide_git.ops import memory
from tests.conftest import NOW_MS, make_ctx


def test_nothing_there_yet(repo: Path) -> None:
    ctx = make_ctx(repo)
    assert memory.files(ctx) == {} and memory.log(ctx) == []
    with pytest.raises(NotFound) as e:
        memory.show(ctx)
    assert e.value.message == "no memory yet"
    with pytest.raises(NotFound) as e:
        memory.show(ctx, "build")
    assert e.value.message == "no memory topic build"
    with pytest.raises(NotFound) as e:
        memory.rm(ctx, "build")
    assert e.value.message == "no memory topic build" and "memory show" in (e.value.hint or "")
    with pytest.raises(NotFound) as e:
        memory.export_claude(ctx)
    assert e.value.message == "there is no memory to export"
    with pytest.raises(NotFound) as e:
        memory.import_claude(ctx)
    assert e.value.message.startswith("no Claude Code memory in ")
    assert memory.context_message(ctx) is None and memory.context_text(ctx) is None
    assert memory.revert(ctx, [], "nothing") is None


def test_an_existing_body_without_a_final_newline_gets_one(repo: Path) -> None:
    ctx = make_ctx(repo)
    memory.commit(ctx, {"build.md": "no newline at the end"}, "by hand")
    memory.add(make_ctx(repo, NOW_MS + 1), "build", "next line\n\n")
    assert memory.show(make_ctx(repo), "build") == "no newline at the end\nnext line\n"


def test_a_write_changed_again_since_cannot_be_reverted(repo: Path) -> None:
    memory.add(make_ctx(repo), "build", "first")
    memory.add(make_ctx(repo, NOW_MS + 1), "build", "second")
    memory.commit(make_ctx(repo, NOW_MS + 2), {"build.md": "rewritten by hand\n"}, "by hand")
    second = [w for w in memory.log(make_ctx(repo)) if w.at == NOW_MS + 1]
    tip = memory.log(make_ctx(repo))[0].id
    with pytest.raises(Refused) as e:
        memory.revert(make_ctx(repo, NOW_MS + 3), second, "revert")
    assert e.value.message == f"memory write {second[0].id[:12]} (add build) was changed again since"
    assert memory.log(make_ctx(repo))[0].id == tip  # nothing written


def test_the_resumed_context_is_memory_md_s_head(repo: Path) -> None:
    memory.add(make_ctx(repo), "build", "Run make test.")
    m = memory.context_message(make_ctx(repo))
    tip = memory.log(make_ctx(repo))[0].id
    assert m is not None and m["id"] == f"memory-{tip[:12]}" and m["role"] == "system"
    assert m["parts"][0]["text"].startswith("# Memory") and m["parts"][0]["source"] == "oxide-memory"
    assert "- [build](build.md)" in m["parts"][0]["text"]
    assert memory.context_text(make_ctx(repo), lines=1) == "# Memory\n"


def test_memory_commits_carry_the_clock_s_time_and_claude_s_folder_defaults_to_home(repo: Path) -> None:
    from oxide_git.git import refs
    from oxide_git.store.context import Context
    from tests.conftest import git

    memory.add(make_ctx(repo, NOW_MS + 5000), "build", "x")
    # dated by the clock, in UTC for author and committer alike (the same in every clone)
    when = (NOW_MS + 5000) // 1000
    assert git(repo, "log", "-1", "--format=%ct %at", refs.MEMORY).split() == [str(when)] * 2
    dates = git(repo, "log", "-1", "--format=%ci|%ai", refs.MEMORY).strip().split("|")
    assert all(d.endswith(" +0000") for d in dates), dates
    ctx = make_ctx(repo)
    bare_env = {k: v for k, v in ctx.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    plain = Context(ctx.repo, NOW_MS, bare_env)
    encoded = "".join(c if c.isalnum() else "-" for c in str(repo))
    assert memory.claude_dir(plain) == plain.home / ".claude" / "projects" / encoded / "memory"
    several = Context(ctx.repo, NOW_MS, {**bare_env, "CLAUDE_CONFIG_DIR": " /x/first , /y/second"})
    assert memory.claude_dir(several) == Path("/x/first") / "projects" / encoded / "memory"


def test_a_long_first_line_is_cut_in_the_index(repo: Path) -> None:
    memory.add(make_ctx(repo), "long", "x" * 100 + "\nsecond line")
    line = next(ln for ln in memory.show(make_ctx(repo)).splitlines() if "(long.md)" in ln)
    assert line == "- [long](long.md) — " + "x" * 79 + "…"
    memory.add(make_ctx(repo, NOW_MS + 1), "short", "y" * 80)
    line = next(ln for ln in memory.show(make_ctx(repo)).splitlines() if "(short.md)" in ln)
    assert line == "- [short](short.md) — " + "y" * 80
    memory.add(make_ctx(repo, NOW_MS + 2), "edge", "z" * 81)  # one over: cut to 80 with the mark
    line = next(ln for ln in memory.show(make_ctx(repo)).splitlines() if "(edge.md)" in ln)
    assert line == "- [edge](edge.md) — " + "z" * 79 + "…"


def test_a_memory_commit_made_by_plain_git_dates_from_its_commit(repo: Path) -> None:
    from oxide_git.git import refs
    from tests.conftest import git

    memory.add(make_ctx(repo), "build", "x")
    tip = git(repo, "rev-parse", refs.MEMORY).strip()
    by_hand = git(repo, "commit-tree", "-p", tip, "-m", "edited elsewhere", f"{tip}^{{tree}}").strip()
    git(repo, "update-ref", refs.MEMORY, by_hand)
    w = memory.log(make_ctx(repo))[0]
    when = int(git(repo, "log", "-1", "--format=%ct", by_hand).strip())
    assert w.at == when * 1000 and w.session_id is None and w.summary == "edited elsewhere"


def test_export_to_claude_writes_only_what_differs(repo: Path, isolated_env: Path) -> None:
    memory.add(make_ctx(repo), "build", "x")
    memory.add(make_ctx(repo, NOW_MS + 1), "style", "y")
    first = memory.export_claude(make_ctx(repo))
    assert first["files"] == ["MEMORY.md", "build.md", "style.md"]
    assert memory.export_claude(make_ctx(repo))["files"] == []  # the same again: nothing written
    dest = Path(first["into"])
    (dest / "style.md").write_text("edited in Claude Code\n")
    assert memory.export_claude(make_ctx(repo))["files"] == ["style.md"]
    assert (dest / "style.md").read_text() == "y\n" and (dest / "build.md").read_text() == "x\n"


def test_log_limit_writes_after_and_by_session(repo: Path) -> None:
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.store import writes as store
    from tests.conftest import git

    memory.add(make_ctx(repo, NOW_MS), "a", "one")  # no current session
    s = Session("0" * 12 + "7" * 20, "claude")
    store.append(make_ctx(repo), s, [Message("user", (Part.text("x"),))])
    store.set_current_session(make_ctx(repo), s.id)
    memory.add(make_ctx(repo, NOW_MS + 10), "b", "two")
    assert len(memory.log(make_ctx(repo), 1)) == 1 and len(memory.log(make_ctx(repo))) == 2
    assert [w.summary for w in memory.writes_after(make_ctx(repo), NOW_MS)] == ["add b"]  # at NOW_MS: not after
    assert [w.summary for w in memory.writes_after(make_ctx(repo), NOW_MS - 1)] == ["add b", "add a"]
    assert [w.summary for w in memory.writes_after(make_ctx(repo), NOW_MS - 1, s.id)] == ["add b"]
    m = memory.context_message(make_ctx(repo))
    assert m is not None and m["compacted"] is False and m["seq"] is None and m["created_at"] is None
    # a commit written by hand: a folder in the tree is no memory file, a bare trailer word no field
    tip = git(repo, "rev-parse", refs_memory()).strip()
    tree = git(repo, "rev-parse", f"{tip}^{{tree}}").strip()
    folder = subprocess_mktree(repo, f"040000 tree {tree}\tnested\n" + git(repo, "ls-tree", tree))
    hand = git(repo, "commit-tree", "-p", tip, "-m", "by hand\n\nOxide-Session\nNote: x", folder).strip()
    git(repo, "update-ref", refs_memory(), hand)
    assert set(memory.files(make_ctx(repo))) == {"MEMORY.md", "a.md", "b.md"}
    w = memory.log(make_ctx(repo))[0]
    assert w.session_id is None and w.summary == "by hand"


def refs_memory() -> str:
    from oxide_git.git import refs

    return refs.MEMORY


def subprocess_mktree(repo: Path, listing: str) -> str:
    import subprocess

    return subprocess.run(["git", "mktree"], cwd=repo, input=listing, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_add_and_rm_return_the_commit_they_made(repo: Path) -> None:
    """What `memory add --json` / `rm --json` and the MCP memory_add print: the new tip, not the
    one it replaced."""
    from oxide_git.git import refs
    from tests.conftest import git

    first = memory.add(make_ctx(repo), "build", "x")
    assert first == git(repo, "rev-parse", refs.MEMORY).strip()
    second = memory.add(make_ctx(repo, NOW_MS + 1), "build", "y")
    assert second == git(repo, "rev-parse", refs.MEMORY).strip() != first
    gone = memory.rm(make_ctx(repo, NOW_MS + 2), "build")
    assert gone == git(repo, "rev-parse", refs.MEMORY).strip() != second
    assert git(repo, "rev-parse", f"{gone}^").strip() == second


def test_importing_claude_memory_returns_its_commit_and_refuses_a_file_that_is_no_topic(
        repo: Path, isolated_env: Path) -> None:
    from oxide_git.core.errors import OxideError
    from oxide_git.git import refs
    from tests.conftest import git

    ctx = make_ctx(repo)
    src = memory.claude_dir(ctx)
    src.mkdir(parents=True)
    (src / "build.md").write_text("make test\n")
    res = memory.import_claude(ctx)
    assert res["commit"] == git(repo, "rev-parse", refs.MEMORY).strip() and res["files"] == ["build.md"]
    (src / "my notes.md").write_text("a name git oxide would not give a topic\n")
    with pytest.raises(OxideError, match=r"'my notes\.md' is not a topic name"):
        memory.import_claude(make_ctx(repo, NOW_MS + 1))
    assert git(repo, "rev-parse", refs.MEMORY).strip() == res["commit"]  # nothing written
