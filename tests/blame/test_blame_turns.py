"""`git oxide blame` of a turn that no checkpoint follows (issue 37, item 2): the commit, or the
worktree as it is, closes the last interval, and Claude Code's Stop hook closes the turn."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oxide_git.cli import main
from tests.blame_helpers import Clock, FakeAgent, exact_blame, human_edit, take
from tests.claude_run import ClaudeRun
from tests.conftest import git, make_ctx, oxide

SID = "0" * 12 + "c" * 20
CALC = "".join(f"line {i} = {i}\n" for i in range(1, 11))


def _real_clock_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits dated now, as a user's are (the suite pins them to 2026-01-01)."""
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")


def blame_json(repo: Path, monkeypatch: pytest.MonkeyPatch, rel: str, *extra: str) -> list[dict[str, Any]]:
    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, ["blame", rel, "--json", *extra])
    assert r.exit_code == 0, r.output
    return list(json.loads(r.output)["lines"])


def two_turns(repo: Path, monkeypatch: pytest.MonkeyPatch, stop: bool = True) -> tuple[ClaudeRun, str]:
    """Issue 37's run: turn 1 writes calc.py, the user edits line 3, turn 2 edits line 7 (and
    with ``stop`` False, Claude Code is killed before turn 2's Stop hook: `git oxide import`)."""
    run = ClaudeRun(repo, monkeypatch)
    run.prompt("write calc.py")
    run.write("calc.py", CALC)
    run.answer("calc.py is written")
    time.sleep(0.01)
    (repo / "calc.py").write_text(CALC.replace("line 3 = 3", "line 3 = mine"))
    time.sleep(0.01)
    run.prompt("change line 7")
    run.edit("calc.py", "line 7 = 7", "line 7 = seven")
    run.answer("line 7 is changed", stop=stop)
    if not stop:
        oxide(repo, "import")
    ctx = make_ctx(repo)
    sid = ctx.index.query("SELECT id FROM sessions WHERE native_id=?", (run.native,))[0][0]
    ctx.close()
    return run, sid


def _who(lines: list[dict[str, Any]], sid_short: str) -> list[str]:
    return ["mine" if ln["who"] == "human" else "turn" if ln["session_id"] == sid_short else ln["who"]
            for ln in lines]


WANT = ["turn", "turn", "mine", "turn", "turn", "turn", "turn", "turn", "turn", "turn"]


@pytest.mark.parametrize("hooks", [False, True], ids=["agent-hooks-only", "git-hooks"])
def test_the_last_turn_before_a_commit_is_the_agents(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                      hooks: bool) -> None:
    _real_clock_commits(monkeypatch)
    oxide(repo, "init", "--agent-hooks", "claude", *(["--hooks"] if hooks else []))
    monkeypatch.setenv("OXIDE_HOOK_SYNC", "1")  # the hooks' jobs done when `git commit` returns
    _run, sid = two_turns(repo, monkeypatch)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    lines = blame_json(repo, monkeypatch, "calc.py")
    short = lines[0]["session_id"]
    assert short and sid.startswith(short)
    assert _who(lines, short) == WANT, lines
    assert lines[6]["text"] == "line 7 = seven" and lines[6]["agent"] == "claude"
    ctx = make_ctx(repo)
    try:
        assert [ln.who for ln in exact_blame(ctx, "calc.py").lines] == ["agent"] * 2 + ["human"] + ["agent"] * 7
        kinds = [r[0] for r in ctx.index.query("SELECT kind FROM checkpoints ORDER BY created_at, rowid")]
    finally:
        ctx.close()
    # each Stop hook closed its turn: the user's edit of line 3 is in no turn's interval
    assert kinds == ["prompt", "turn-end", "prompt", "turn-end", *(["pre-commit"] if hooks else [])]


def test_a_turn_no_checkpoint_follows_is_closed_by_the_commit(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code killed before turn 2's Stop hook, committed without the git hooks: the last
    checkpoint is turn 2's prompt's, and the commit closes the interval after it."""
    _real_clock_commits(monkeypatch)
    oxide(repo, "init", "--agent-hooks", "claude")
    _run, sid = two_turns(repo, monkeypatch, stop=False)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    ctx = make_ctx(repo)
    try:
        assert [r[0] for r in ctx.index.query("SELECT kind FROM checkpoints ORDER BY created_at, rowid")] == [
            "prompt", "turn-end", "prompt"]
        res = exact_blame(ctx, "calc.py")
    finally:
        ctx.close()
    assert [ln.who for ln in res.lines] == ["agent"] * 2 + ["human"] + ["agent"] * 7
    assert res.lines[6].session_id == sid and res.lines[6].commit is not None


def test_the_last_turn_in_the_worktree_is_the_agents(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not committed, no checkpoint after turn 2 (no Stop hook): the worktree closes the interval."""
    oxide(repo, "init", "--agent-hooks", "claude")
    two_turns(repo, monkeypatch, stop=False)
    lines = blame_json(repo, monkeypatch, "calc.py")
    assert _who(lines, lines[0]["session_id"]) == WANT, lines


def test_the_stop_hook_checkpoints_only_a_turn_that_may_have_written(repo: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    oxide(repo, "init", "--agent-hooks", "claude")
    run = ClaudeRun(repo, monkeypatch)

    def kinds() -> list[str]:
        ctx = make_ctx(repo)
        try:
            return [r[0] for r in ctx.index.query("SELECT kind FROM checkpoints ORDER BY created_at, rowid")]
        finally:
            ctx.close()

    run.prompt("what does app.py do?")
    run.answer("it prints hi")  # a turn of talk: nothing to close
    assert kinds() == ["prompt"]
    run.prompt("write notes")
    run.write("notes.txt", "a\n")
    run.answer("written")
    run.hook("Stop", stop_hook_active=True)  # again: nothing new since the turn's checkpoint
    run.hook("SubagentStop")  # a subagent's end is inside the turn
    assert kinds() == ["prompt", "prompt", "turn-end"]
    run.prompt("write it again")
    run.write("notes.txt", "a\n")  # the same content: the worktree is as the last checkpoint holds it
    run.answer("rewritten")
    assert kinds() == ["prompt", "prompt", "turn-end", "prompt"]
    from oxide_git.hooks import ties as hook_ties

    ctx = make_ctx(repo)
    try:
        assert hook_ties.turn_checkpoint(ctx, None) is None  # a session not imported: nothing to close
    finally:
        ctx.close()
    ctx = make_ctx(repo)
    try:
        tree = ctx.index.query("SELECT tree FROM checkpoints WHERE kind='turn-end'")[0][0]
        assert ctx.repo.git[tree]["notes.txt"].data == b"a\n"
    finally:
        ctx.close()


# lines a rewind or an undo put back -------------------------------------------------------------


def _restore_who(repo: Path, clock: Clock, rel: str) -> list[tuple[str, str, str | None]]:
    ctx = make_ctx(repo, clock.tick())
    try:
        return [(ln.text, ln.who, ln.session_id) for ln in exact_blame(ctx, rel).lines]
    finally:
        ctx.close()


def _rewind(repo: Path, clock: Clock, checkpoint: str) -> None:
    from oxide_git.ops.rewind import rewind

    ctx = make_ctx(repo, clock.tick())
    try:
        rewind(ctx, checkpoint, code=True, conversation=False)
    finally:
        ctx.close()


def _undo(repo: Path, clock: Clock) -> None:
    from oxide_git.ops.undo import undo

    ctx = make_ctx(repo, clock.tick())
    try:
        undo(ctx)
    finally:
        ctx.close()


def test_lines_an_undo_put_back_keep_their_turn(repo: Path) -> None:
    """The demo's shape: a turn writes lines, `rewind --code` to before it, `undo`."""
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    p1 = take(repo, clock, kind="manual")
    a.prompt("write notes")
    a.write("notes.txt", "alpha\nbeta\n")
    a.edit("src/app.py", "print('hi')", "print('hi')\nprint('bye')")
    a.say("done")
    _rewind(repo, clock, p1)
    assert not (repo / "notes.txt").exists()
    assert _restore_who(repo, clock, "src/app.py") == [("print('hi')", "before oxide", None)]
    _undo(repo, clock)
    assert (repo / "notes.txt").read_text() == "alpha\nbeta\n"
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "agent", SID)]
    assert _restore_who(repo, clock, "src/app.py") == [("print('hi')", "before oxide", None),
                                                        ("print('bye')", "agent", SID)]
    human_edit(repo, clock, "notes.txt", "alpha\nbeta\nmine\n")  # what comes after the undo is yours
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "agent", SID),
                                                      ("mine", "human", None)]
    _undo(repo, clock)  # a redo of the rewind, over your line (undo keeps a checkpoint of it)
    _undo(repo, clock)  # and back
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "agent", SID),
                                                      ("mine", "human", None)]


def test_lines_a_rewind_put_back_keep_their_turn(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewind to a checkpoint holding an agent's lines, after the user had changed them."""
    _real_clock_commits(monkeypatch)
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("write notes")
    a.write("notes.txt", "alpha\nbeta\n")
    a.say("done")
    p2 = a.prompt("now wait")
    human_edit(repo, clock, "notes.txt", "mine\n")
    assert _restore_who(repo, clock, "notes.txt") == [("mine", "human", None)]
    ctx = make_ctx(repo, clock.t)
    cp = ctx.index.query("SELECT id FROM checkpoints WHERE message_id=?", (p2,))[0][0]
    ctx.close()
    _rewind(repo, clock, cp)
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "agent", SID)]
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")  # without the git hooks: closed by the commit
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "agent", SID)]


def test_a_path_the_restore_left_is_not_the_targets(repo: Path) -> None:
    """A journal line naming the path among those the restore did not write (``files_kept``:
    another session's change, an agent's own file): the file is not the target's."""
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("write notes")
    a.write("notes.txt", "alpha\n")
    a.say("done")
    p2 = a.prompt("add beta")
    a.edit("notes.txt", "alpha\n", "alpha\nbeta\n")
    a.say("done")
    ctx = make_ctx(repo, clock.t)
    cp = ctx.index.query("SELECT id FROM checkpoints WHERE message_id=?", (p2,))[0][0]
    ctx.close()
    _rewind(repo, clock, cp)
    assert (repo / "notes.txt").read_text() == "alpha\n"
    journal = repo / ".git" / "oxide" / "worktrees" / "main" / "journal.jsonl"
    entry = json.loads(journal.read_text().splitlines()[-1])
    (repo / "notes.txt").write_text("alpha\nbeta\n")  # as if the restore had left it
    os.utime(repo / "notes.txt", ns=(clock.t * 1_000_000, clock.t * 1_000_000))
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "human", None)]
    time.sleep(0.2)  # older than the answer cache's racy window: the answer is kept

    def cli() -> list[str]:
        return [ln["who"] for ln in json.loads(oxide(repo, "blame", "notes.txt", "--json").stdout)["lines"]]

    assert cli() == cli() == ["agent", "human"]  # the second from the answer cache
    journal.write_text(json.dumps({**entry, "files_kept": ["notes.txt"]}) + "\nnot json\n[]\n")
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "agent", SID)]
    assert cli() == ["agent", "agent"]  # the journal is in the cache's key
    journal.unlink()  # no journal (removed by hand): no restore known, the file as before the rewind
    assert _restore_who(repo, clock, "notes.txt") == [("alpha", "agent", SID), ("beta", "agent", SID)]


def test_a_codex_notify_closes_its_turn(repo: Path) -> None:
    """Codex's notify runs at the end of each turn: its turn's writes are closed by a checkpoint."""
    from oxide_git.hooks import agent_hooks
    from tests.conftest import FIXTURES

    oxide(repo, "init", "--agent-hooks", "codex")
    day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "03" / "01"
    day.mkdir(parents=True)
    native = "019c0000-0000-7000-8000-000000000001"
    (day / f"rollout-2026-03-01T10-00-00-{native}.jsonl").write_text(
        (FIXTURES / "codex" / "turns.jsonl").read_text().replace("/work/proj", str(repo)))
    payload = {"type": "agent-turn-complete", "thread-id": native, "cwd": str(repo)}
    agent_hooks.codex(payload)
    agent_hooks.codex(payload)  # again: nothing new since
    ctx = make_ctx(repo)
    try:
        rows = ctx.index.query("SELECT c.kind, s.native_id FROM checkpoints c JOIN sessions s ON s.id=c.session_id")
    finally:
        ctx.close()
    assert [tuple(r) for r in rows] == [("turn-end", native)]
