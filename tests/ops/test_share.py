"""push / pull between two clones through a bare repository on disk, both directions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.store import sessionlog
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, fsck_clean, git, make_ctx, oxide

SID = "019c18a520e8aaaabbbbccccddddeeee"


@pytest.fixture
def clones(repo: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    for r in (repo, b):
        oxide(r, "init")
    return repo, b, bare


def say(root: Path, *texts: str, now: int = NOW_MS) -> None:
    ctx = make_ctx(root, now)
    store.append(ctx, Session(SID, "claude", title="shared work"), [
        Message("user", (Part.text(t),), created_at=NOW_MS + i) for i, t in enumerate(texts)])


def texts(root: Path, sid: str = SID) -> list[str]:
    log = sessionlog.load(make_ctx(root).repo, sid)
    assert log is not None
    return [m.text() for _q, m in sessionlog.iter_messages(make_ctx(root).repo, log.commit.tree)]


def test_push_then_pull_brings_sessions_and_index(clones: tuple[Path, Path, Path]) -> None:
    a, b, bare = clones
    say(a, "hello", "world")
    out = oxide(a, "push", "--json")
    assert json.loads(out.stdout)["updated"] == {refs.session_ref(SID): "new"}
    assert git(bare, "for-each-ref", "refs/oxide/sessions/").strip()
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["updated"] == {refs.session_ref(SID): "new"}
    assert texts(b) == ["hello", "world"]
    listed = json.loads(oxide(b, "list", "--all", "--json").stdout)
    assert [r["id"] for r in listed] == [SID]
    # pulling again changes nothing; the mirror lives under refs/oxide/remotes/origin/
    assert json.loads(oxide(b, "pull", "--json").stdout)["updated"] == {}
    assert git(b, "for-each-ref", "--format=%(refname)", "refs/oxide/remotes/origin/").split() == [
        f"refs/oxide/remotes/origin/sessions/{SID}"]
    # fast-forward in the other direction
    say(b, "more from b")
    assert json.loads(oxide(b, "push", "--json").stdout)["updated"] == {refs.session_ref(SID): "pushed"}
    assert json.loads(oxide(a, "pull", "--json").stdout)["updated"] == {refs.session_ref(SID): "fast-forward"}
    assert texts(a) == ["hello", "world", "more from b"]


def test_diverged_session_becomes_local_plus_fork_and_nothing_is_lost(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    say(a, "base 1", "base 2")
    oxide(a, "push")
    oxide(b, "pull")
    say(a, "a says 3", "a says 4")
    say(b, "b says 3")
    oxide(a, "push")
    rejected = oxide(b, "push", check=False)
    assert rejected.returncode == 1 and "pull" in rejected.stderr  # never forced
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["updated"][refs.session_ref(SID)] == "merged"
    merge_time = git(b, "log", "-1", "--format=%ct", refs.session_ref(SID)).strip()
    assert 1_700_000_000 < int(merge_time) < 10_000_000_000  # seconds, not milliseconds
    [fork] = res["forks"]
    assert texts(b) == ["base 1", "base 2", "b says 3"]  # local kept as it was
    assert texts(b, fork["fork"]) == ["base 1", "base 2", "a says 3", "a says 4"]
    flog = sessionlog.load(make_ctx(b).repo, fork["fork"])
    assert flog is not None and flog.session.parent_id == SID
    base2 = sessionlog.message_at(make_ctx(b).repo, flog.commit.tree, 1)
    assert base2 is not None and flog.session.fork_message_id == base2.id
    # pulling again is idempotent: no second fork
    again = json.loads(oxide(b, "pull", "--json").stdout)
    assert again["forks"] == [] and again["updated"] == {}
    oxide(b, "push")  # the merge made the remote tip an ancestor: a plain fast-forward
    res_a = json.loads(oxide(a, "pull", "--json").stdout)
    # A's tip never moves to B's merge, which lacks A's messages (issue 39): B's line is a fork here
    assert refs.session_ref(SID) not in res_a["updated"]
    assert texts(a) == ["base 1", "base 2", "a says 3", "a says 4"]
    [b_line] = res_a["forks"]
    assert texts(a, b_line["fork"]) == ["base 1", "base 2", "b says 3"]
    # the fork B made of A's line is A's own line: not taken again here
    assert refs.read(make_ctx(a).repo.git, refs.session_ref(fork["fork"])) is None
    every = texts(a) + texts(a, b_line["fork"])
    for t in ("base 1", "base 2", "a says 3", "a says 4", "b says 3"):
        assert t in every
    assert json.loads(oxide(a, "push", "--json").stdout)["rejected"] == []  # behind on purpose: kept
    again = json.loads(oxide(a, "pull", "--json").stdout)
    assert again["forks"] == [] and again["updated"] == {}  # quiet once synced
    listed = {r["id"]: r for r in json.loads(oxide(a, "list", "--all", "--json").stdout)}
    assert listed[b_line["fork"]]["parent_id"] == SID
    # A goes on: B's pull grows the fork it keeps of A's line, no new fork per pull
    say(a, "a says 5", now=NOW_MS + 9000)
    oxide(a, "pull")
    oxide(a, "push")
    grown = json.loads(oxide(b, "pull", "--json").stdout)
    assert grown["updated"] == {refs.session_ref(fork["fork"]): "fork grown"}  # its tip stays B's
    assert texts(b, fork["fork"]) == ["base 1", "base 2", "a says 3", "a says 4", "a says 5"]
    assert texts(b) == ["base 1", "base 2", "b says 3"]


def test_same_session_written_independently_merges_without_a_fork(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    say(a, "same", now=NOW_MS)
    say(b, "same", now=NOW_MS + 5000)
    # same trees, different commits (unrelated histories)
    oxide(a, "push")
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["forks"] == [] and res["updated"][refs.session_ref(SID)] == "merged"
    oxide(b, "push")


def test_notes_merge_as_a_union(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    head = git(a, "rev-parse", "HEAD").strip()
    git(a, "notes", "--ref", "oxide", "add", "-m", json.dumps({"oxide": 1, "sessions": ["s-a"], "checkpoints": []}))
    git(b, "notes", "--ref", "oxide", "add", "-m", json.dumps({"oxide": 1, "sessions": ["s-b"], "checkpoints": []}))
    (b / "new.txt").write_text("n")
    git(b, "add", "new.txt")
    git(b, "commit", "-q", "-m", "b only")
    git(b, "notes", "--ref", "oxide", "add", "-m", "s-other")
    oxide(a, "push")
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["updated"][refs.NOTES] == "merged"
    note = json.loads(git(b, "notes", "--ref", "oxide", "show", head))
    assert note["sessions"] == ["s-b", "s-a"]
    assert git(b, "notes", "--ref", "oxide", "show", "HEAD").strip() == "s-other"
    oxide(b, "push")
    oxide(a, "pull")
    assert json.loads(git(a, "notes", "--ref", "oxide", "show", head))["sessions"] == ["s-b", "s-a"]
    for clone in (a, b):  # the merged notes trees are well-formed (fsck reports on stderr, exit 1)
        fsck_clean(clone)


def test_checkpoints_only_with_the_flag_and_oxide_remote(clones: tuple[Path, Path, Path], tmp_path: Path) -> None:
    a, b, bare = clones
    other = tmp_path / "transcripts.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    for r in (a, b):
        git(r, "config", "oxide.remote", str(other))
    say(a, "x")
    oxide(a, "checkpoint", "-m", "cp", "--session", SID)
    oxide(a, "push")
    assert not git(other, "for-each-ref", "refs/oxide/checkpoints/").strip()
    assert not git(bare, "for-each-ref", "refs/oxide/").strip()  # went to oxide.remote only
    oxide(a, "push", "--checkpoints")
    assert git(other, "for-each-ref", "refs/oxide/checkpoints/").strip()
    oxide(b, "pull")
    assert not git(b, "for-each-ref", "refs/oxide/checkpoints/").strip()
    oxide(b, "pull", "--checkpoints")
    assert git(b, "for-each-ref", "refs/oxide/checkpoints/").strip()
    assert json.loads(oxide(b, "checkpoints", "--json").stdout)


def test_unknown_remote_is_an_error_with_a_hint(repo: Path) -> None:
    oxide(repo, "init")
    r = oxide(repo, "pull", "nowhere", check=False)
    assert r.returncode == 1 and "hint:" in r.stderr


def _local_refs(root: Path) -> dict[str, str]:
    """Every oxide ref of the clone but the remote mirror and the trash: what a pull may move."""
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide/", "refs/notes/")
    return {n: o for n, o in (ln.split() for ln in out.splitlines())
            if not n.startswith(("refs/oxide/remotes/", "refs/oxide/trash/"))}


def test_undo_after_pull_reverts_the_pull_and_nothing_before_it(clones: tuple[Path, Path, Path]) -> None:
    from oxide_git.ops.rm import rm

    a, b, _bare = clones
    say(a, "from a")
    memory_cli = oxide(a, "memory", "add", "build", "run make test")
    assert memory_cli.returncode == 0
    git(a, "notes", "--ref", "oxide", "add", "-m", json.dumps({"oxide": 1, "sessions": [SID], "checkpoints": []}))
    oxide(a, "push")
    # b has a session of its own, then removes it: the last operation before the pull
    mine = "019c18a520e80000111122223333abcd"
    store.append(make_ctx(b), Session(mine, "codex"), [Message("user", (Part.text("b's own"),))])
    rm(make_ctx(b, NOW_MS + 1), mine)
    before = _local_refs(b)
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert set(res["updated"]) == {refs.session_ref(SID), refs.MEMORY, refs.NOTES}
    pulled = _local_refs(b)
    assert pulled != before
    assert "moved" not in res  # the journal's bookkeeping is not part of pull's output
    out = json.loads(oxide(b, "undo", "--json").stdout)
    assert out["undone"]["op"] == "pull"
    assert _local_refs(b) == before  # exactly the refs of before the pull: the rm is not undone
    listed = [r["id"] for r in json.loads(oxide(b, "list", "--all", "--json").stdout)]
    assert listed == []  # the index follows (the pulled session went, the removed one stays gone)
    trashed = git(b, "for-each-ref", "--format=%(refname)", "refs/oxide/trash/")
    assert f"/sessions/{SID}" in trashed  # recoverable
    oxide(b, "undo", "--yes")  # again: redo the pull
    assert _local_refs(b) == pulled and texts(b) == ["from a"]
    # a pull that changes nothing journals nothing: undo now reverts the redo, not a no-op pull
    assert json.loads(oxide(b, "pull", "--json").stdout)["updated"] == {}
    assert json.loads(oxide(b, "undo", "--json").stdout)["undone"]["op"] == "undo"
    assert _local_refs(b) == before


def test_undo_of_a_pull_refuses_when_a_pulled_ref_moved_since(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    say(a, "from a")
    oxide(a, "push")
    oxide(b, "pull")
    say(b, "b goes on")  # after the pull, b appends to the pulled session
    r = oxide(b, "undo", "--yes", check=False)
    assert r.returncode == 1 and "moved since" in r.stderr
    assert texts(b) == ["from a", "b goes on"]


def test_pull_skips_a_remote_ref_that_is_not_a_session_id(clones: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """A hostile remote can name refs anything: one that is not a session id never becomes local."""
    a, b, bare = clones
    evil = "evil.id"  # a valid ref name, not a session id; its log names it, so only the guard stops it
    store.append(make_ctx(a), Session(evil, "claude"), [Message("user", (Part.text("planted"),))])
    say(a, "honest")
    oxide(a, "push")
    assert git(bare, "rev-parse", "--verify", "-q", refs.session_ref(evil)).strip()
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["problems"] == [f"origin {refs.session_ref(evil)}: not a session id, left alone"]
    assert res["updated"] == {refs.session_ref(SID): "new"}
    assert git(b, "rev-parse", "--verify", "-q", refs.session_ref(evil), check=False) == ""


def test_diverged_memory_keeps_ours_and_takes_their_other_files(clones: tuple[Path, Path, Path]) -> None:
    from oxide_git.ops import memory

    a, b, _bare = clones
    memory.add(make_ctx(a), "base", "shared start")
    oxide(a, "push")
    oxide(b, "pull")
    memory.add(make_ctx(a, NOW_MS + 1), "build", "a's rule")
    memory.add(make_ctx(a, NOW_MS + 2), "only-a", "a's topic")
    memory.add(make_ctx(b, NOW_MS + 3), "build", "b's rule")
    oxide(a, "push")
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["updated"][refs.MEMORY] == "merged"
    assert 1_700_000_000 < int(git(b, "log", "-1", "--format=%ct", refs.MEMORY).strip()) < 10_000_000_000
    assert "memory: build.md changed on both sides, kept ours" in res["problems"]
    files = memory.files(make_ctx(b))
    assert files["build.md"] == "b's rule\n"  # ours
    assert files["only-a.md"] == "a's topic\n" and files["base.md"] == "shared start\n"
    # the log is ours: the merge's first parent, then our own write, not theirs
    assert [w.summary for w in memory.log(make_ctx(b))] == ["pull: merge memory", "add build", "add base"]
    oxide(b, "push")  # the merge has both sides as parents: a fast-forward
    oxide(a, "pull")
    assert memory.files(make_ctx(a))["build.md"] == "b's rule\n"


def test_pull_ignores_the_remotes_own_mirrors_and_prunes_what_the_remote_dropped(
        clones: tuple[Path, Path, Path]) -> None:
    a, b, bare = clones
    say(a, "hello")
    oxide(a, "push")
    tip = git(bare, "rev-parse", refs.session_ref(SID)).strip()
    git(bare, "update-ref", f"refs/oxide/remotes/elsewhere/sessions/{SID}", tip)  # the remote's own mirror
    oxide(b, "pull")
    mirrored = git(b, "for-each-ref", "--format=%(refname)", "refs/oxide/remotes/").split()
    assert mirrored == [f"refs/oxide/remotes/origin/sessions/{SID}"]
    assert not git(b, "for-each-ref", "refs/oxide/remotes/origin/remotes/").strip()
    git(bare, "update-ref", "-d", refs.session_ref(SID))  # the remote drops it
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert not git(b, "for-each-ref", "refs/oxide/remotes/origin/").strip()  # the mirror is pruned
    # a removal is a change like any other: b's copy, nothing of it b's own, goes to the trash
    assert res["updated"] == {refs.session_ref(SID): "removed on the remote"}
    assert git(b, "for-each-ref", "refs/oxide/trash/").strip() and json.loads(
        oxide(b, "list", "--all", "--json").stdout) == []


def test_pull_refuses_a_ref_whose_log_names_another_session(clones: tuple[Path, Path, Path]) -> None:
    a, b, bare = clones
    say(a, "hello")
    oxide(a, "push")
    other = "019c18a520e8ffffeeeeddddccccbbbb"
    git(bare, "update-ref", refs.session_ref(other), git(bare, "rev-parse", refs.session_ref(SID)).strip())
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["problems"] == [f"origin {refs.session_ref(other)}: its log names session {SID}, left alone"]
    assert git(b, "rev-parse", "--verify", "-q", refs.session_ref(other), check=False) == ""
    assert res["updated"] == {refs.session_ref(SID): "new"}


def test_independent_logs_of_one_session_take_the_longer_across_a_full_bucket(
        clones: tuple[Path, Path, Path]) -> None:
    """Unrelated histories (no merge base): the messages are compared; when theirs only adds, the
    merge takes their tree and no fork is made (the first 256 messages fill a whole bucket)."""
    a, b, _bare = clones
    many = [f"m{i}" for i in range(256)]
    say(a, *many, now=NOW_MS)
    say(b, *many, "one more", now=NOW_MS + 5000)
    oxide(b, "push")
    res = json.loads(oxide(a, "pull", "--json").stdout)
    assert res["forks"] == [] and res["updated"][refs.session_ref(SID)] == "merged"
    assert texts(a) == [*many, "one more"]
    parents = git(a, "rev-list", "--parents", "-n", "1", refs.session_ref(SID)).split()
    assert len(parents) == 3  # a merge commit: both histories kept


def test_checkpoints_pulled_twice_are_not_written_again(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    say(a, "x")
    oxide(a, "checkpoint", "-m", "cp", "--session", SID)
    oxide(a, "push", "--checkpoints")
    first = json.loads(oxide(b, "pull", "--checkpoints", "--json").stdout)
    assert [k for k, v in first["updated"].items() if k.startswith("refs/oxide/checkpoints/")]
    assert json.loads(oxide(b, "pull", "--checkpoints", "--json").stdout)["updated"] == {}


def test_push_with_nothing_to_push_and_to_a_remote_that_is_not_there(repo: Path, tmp_path: Path) -> None:
    oxide(repo, "init")
    git(repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    assert json.loads(oxide(repo, "push", "--json").stdout)["updated"] == {}  # nothing of oxide's yet
    say(repo, "x")
    r = oxide(repo, "push", check=False)
    assert r.returncode == 1 and "error: push to 'origin' failed" in r.stderr and "hint:" in r.stderr


def test_independent_logs_where_theirs_has_nothing_new_keep_ours_without_a_fork(
        clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    say(a, "m1", "m2", now=NOW_MS)
    say(b, "m1", now=NOW_MS + 5000)  # the same first message, written on its own (no shared history)
    oxide(b, "push")
    res = json.loads(oxide(a, "pull", "--json").stdout)
    assert res["forks"] == [] and res["updated"][refs.session_ref(SID)] == "merged"
    assert texts(a) == ["m1", "m2"]


def test_the_fork_of_a_pull_is_dated_as_the_other_side_wrote_it(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    say(a, "base")
    oxide(a, "push")
    oxide(b, "pull")
    say(a, "a says", now=NOW_MS + 1000)
    say(b, "b says", now=NOW_MS + 2000)
    oxide(a, "push")
    [fork] = json.loads(oxide(b, "pull", "--json").stdout)["forks"]
    theirs = git(b, "log", "-1", "--format=%ct", fork["from"]).strip()
    assert git(b, "log", "-1", "--format=%ct", refs.session_ref(fork["fork"])).strip() == theirs


def test_a_message_imported_again_whole_is_the_same_message_to_a_pull(clones: tuple[Path, Path, Path]) -> None:
    """Aider's blank line after a prompt goes to the prompt while the file ends there, to the
    answer once the file grows: the import rewrites the prompt's blob at its place. To a pull that
    is the same message, so the other clone fast-forwards (it kept its shorter log before)."""
    a, b, _bare = clones
    history = a / ".aider.chat.history.md"
    history.write_text("\n# aider chat started at 2026-02-01 10:00:00\n\n> aider\n\n#### first prompt  \n\n")
    oxide(a, "import")
    oxide(a, "push")
    oxide(b, "pull")
    with history.open("a") as f:
        f.write("first answer\n\n#### second prompt  \n\nsecond answer\n")
    oxide(a, "import")
    [sid] = [r["id"] for r in json.loads(oxide(a, "list", "--json").stdout)]
    tip = git(a, "rev-parse", refs.session_ref(sid)).strip()
    oxide(a, "push")
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["updated"] == {refs.session_ref(sid): "fast-forward"} and not res["forks"]
    assert git(b, "rev-parse", refs.session_ref(sid)).strip() == tip
