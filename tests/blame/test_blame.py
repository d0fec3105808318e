"""`git oxide blame` on real repositories: lines of agents' turns, of the user, moved lines."""

from __future__ import annotations

from pathlib import Path

from oxide_git.blame.result import summary
from tests.blame_helpers import Clock, FakeAgent, exact_blame, human_edit, take
from tests.conftest import make_ctx

SID = "0" * 12 + "a" * 20
SID2 = "0" * 12 + "b" * 20


def who(repo: Path, clock: Clock, rel: str, **kw):  # type: ignore[no-untyped-def]
    ctx = make_ctx(repo, clock.tick())
    try:
        res = exact_blame(ctx, rel, **kw)
    finally:
        ctx.close()
    return res, [(ln.text, ln.who, ln.session_id, ln.agent) for ln in res.lines]


def test_two_turns_a_human_edit_between_and_a_moved_line(repo: Path) -> None:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    p1 = a.prompt("write notes")
    a.write("notes.txt", "alpha\nbeta\n")
    a.edit("notes.txt", "beta", "gamma")
    a.say("done")
    human_edit(repo, clock, "notes.txt", "alpha\ngamma\nmine\n")
    p2 = a.prompt("move alpha to the end")
    a.edit("notes.txt", "alpha\ngamma\nmine\n", "gamma\nmine\nalpha\n")
    res, got = who(repo, clock, "notes.txt")
    assert got == [("gamma", "agent", SID, "claude"), ("mine", "human", None, None),
                   ("alpha", "agent", SID, "claude")]
    assert [ln.message_id for ln in res.lines] == [p1, None, p2]
    assert res.lines[0].model == "model-x" and res.lines[0].commit is None
    s = summary(res)
    assert (s["agent"], s["human"], s["unknown"], s["by_agent"]) == (2, 1, 0, {"claude": 2})


def test_lines_older_than_the_first_checkpoint_are_before_oxide(repo: Path) -> None:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("add a line")
    a.edit("README.md", "hello\n", "hello\nworld\n")
    _, got = who(repo, clock, "README.md")
    assert got == [("hello", "before oxide", None, None), ("world", "agent", SID, "claude")]


def test_a_file_the_turn_did_not_touch_is_the_users(repo: Path) -> None:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("edit notes")
    a.write("notes.txt", "x\n")
    human_edit(repo, clock, "mine.txt", "typed while the agent worked\n")
    a.say("done")
    take(repo, clock, kind="manual")
    _, got = who(repo, clock, "mine.txt")
    assert got == [("typed while the agent worked", "human", None, None)]


def test_the_user_then_the_agent_on_one_line_in_one_turn(repo: Path) -> None:
    """The agent's edit does not apply to the file as the turn began (the user changed it first):
    replayed backwards from the end, it still says which line is whose."""
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("write")
    a.write("notes.txt", "one\ntwo\n")
    a.prompt("change two")
    human_edit(repo, clock, "notes.txt", "one\nTWO\nmine\n")  # the user, while the agent works
    a.edit("notes.txt", "TWO", "three")  # the agent saw the user's text
    _, got = who(repo, clock, "notes.txt")
    assert got == [("one", "agent", SID, "claude"), ("three", "agent", SID, "claude"), ("mine", "human", None, None)]


def test_when_no_replay_tells_them_apart_it_is_agent_or_user(repo: Path) -> None:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("write")
    a.write("notes.txt", "one\ntwo\n")
    a.prompt("change two")
    human_edit(repo, clock, "notes.txt", "one\nTWO\n")
    a.edit("notes.txt", "TWO", "three")
    human_edit(repo, clock, "notes.txt", "one\nfour\n")  # and the user again, on the agent's line
    _, got = who(repo, clock, "notes.txt")
    assert got == [("one", "agent", SID, "claude"), ("four", "agent or user", SID, "claude")]


def test_uncommitted_work_before_the_first_checkpoint(repo: Path) -> None:
    """Before the first checkpoint (from the commit it was taken on) only a replayed call of the
    agent says anything: its lines are its, the rest is older than oxide for all we know."""
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.write("notes.txt", "by the agent\n")
    human_edit(repo, clock, "mine.txt", "typed before any checkpoint\n")
    human_edit(repo, clock, "notes.txt", "by the agent\nand by me\n")
    take(repo, clock, kind="manual")
    _, got = who(repo, clock, "notes.txt")
    assert got == [("by the agent", "agent", SID, "claude"), ("and by me", "before oxide", None, None)]
    _, got = who(repo, clock, "mine.txt")
    assert got == [("typed before any checkpoint", "before oxide", None, None)]


def test_a_shell_command_naming_the_file_makes_its_lines_the_agents(repo: Path) -> None:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("make shell.txt")
    a.shell("echo from-shell | tee shell.txt", lambda: (repo / "shell.txt").write_text("from-shell\n"))
    a.shell("ls -la", lambda: (repo / "other.txt").write_text("made by a program\n"))
    _, got = who(repo, clock, "shell.txt")
    assert got == [("from-shell", "agent", SID, "claude")]
    _, got = who(repo, clock, "other.txt")
    assert got == [("made by a program", "human", None, None)]  # said in docs/blame.md: unnamed, unknown


def test_two_sessions_in_one_worktree(repo: Path) -> None:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    b = FakeAgent(repo, clock, SID2, agent="codex", model="gpt-x")
    a.prompt("first")
    a.write("f.txt", "from claude\n")
    b.prompt("second")
    b.call("apply_patch", {"input": "*** Begin Patch\n*** Update File: f.txt\n@@\n from claude\n+from codex\n"
                                    "*** End Patch\n"},
           lambda: (repo / "f.txt").write_text("from claude\nfrom codex\n"))
    _, got = who(repo, clock, "f.txt")
    assert got == [("from claude", "agent", SID, "claude"), ("from codex", "agent", SID2, "codex")]


def test_a_session_without_times_goes_by_its_prompt_checkpoint(repo: Path) -> None:
    """Aider records one time for a whole session: its calls have no order in time, so those of
    the turn a prompt checkpoint starts are that checkpoint's intervals' (and are not replayed)."""
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.store import writes as store

    clock = Clock()
    s = Session(id=SID, agent="aider", cwd=str(repo), worktree="main")
    t = clock.tick()
    ctx = make_ctx(repo, t)
    placed = store.append(ctx, s, [Message("user", (Part.text("add notes"),), created_at=t)])
    ctx.close()
    take(repo, clock, kind="prompt", session=SID, message_id=next(iter(placed.values())).id)
    (repo / "notes.txt").write_text("by aider\n")
    ctx = make_ctx(repo, t)
    store.append(ctx, s, [Message("assistant", (Part.patch("<<<<<<< SEARCH\n=======\nby aider\n>>>>>>> REPLACE",
                                                           path="notes.txt"),), created_at=t),
                          Message("user", (Part.text("and the next"),), created_at=t)])
    ctx.close()
    human_edit(repo, clock, "mine.txt", "mine\n")
    _, got = who(repo, clock, "notes.txt")
    assert got == [("by aider", "agent", SID, "aider")]
    _, got = who(repo, clock, "mine.txt")
    assert got == [("mine", "human", None, None)]


def test_libgit2_checks_object_names_again_after_a_blame(repo: Path) -> None:
    """A blame reads objects as git does (not hashing each again); the process's libgit2 checks
    them again afterwards: a loose object whose content does not match its name is refused."""
    import zlib

    import pygit2

    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("write notes")
    a.write("notes.txt", "alpha\n")
    git = pygit2.Repository(str(repo))
    oid = git.create_blob(b"the real content\n")
    loose = repo / ".git" / "objects" / str(oid)[:2] / str(oid)[2:]
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(b"blob 17\0not the content!\n"))

    def read() -> bytes:
        return bytes(pygit2.Repository(str(repo)).odb.read(oid)[1])

    try:
        read()
        raise AssertionError("libgit2 read an object whose content does not match its name")
    except pygit2.GitError as e:
        assert "hash" in str(e).lower() or "mismatch" in str(e).lower()
    _, got = who(repo, clock, "notes.txt")
    assert got == [("alpha", "agent", SID, "claude")]
    try:
        read()
        raise AssertionError("the check stayed off after the blame")
    except pygit2.GitError:
        pass
