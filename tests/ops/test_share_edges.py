"""push / pull at their edges: a hostile ref that sorts first, a side with no messages yet, more
refs than one fetch takes, a shared history longer than a bucket, refs under refs/oxide/ that are
not ours, and the exact dates and names a pull gives what it makes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pygit2
import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.ops.share import ShareResult
from oxide_git.store import sessionlog
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, git, make_ctx, oxide
from tests.ops.test_share import SID, say, texts


@pytest.fixture
def clones(repo: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two clones of one bare repository, both initialised (as test_share's)."""
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    for r in (repo, b):
        oxide(r, "init")
    return repo, b, bare


def _pull(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(oxide(root, "pull", "--json").stdout)


def test_a_ref_moved_twice_in_one_pull_is_journaled_from_its_first_state() -> None:
    a, b, c = (pygit2.Oid(hex=h * 40) for h in "abc")
    res = ShareResult("origin")
    res.move("refs/x", None, a)
    res.move("refs/x", a, b)
    res.move("refs/x", b, c)
    res.move("refs/y", a, b)
    assert res.moved == {"refs/x": [None, str(c)], "refs/y": [str(a), str(b)]}
    assert "moved" not in res.to_dict()


def test_a_hostile_ref_that_sorts_first_does_not_stop_the_pull(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    evil = "0.evil"  # sorts before every session id: a valid ref name that is no session id
    store.append(make_ctx(a), Session(evil, "claude"), [Message("user", (Part.text("planted"),))])
    say(a, "honest")
    oxide(a, "push")
    res = _pull(b)
    assert res["problems"] == [f"origin {refs.session_ref(evil)}: not a session id, left alone"]
    assert res["updated"] == {refs.session_ref(SID): "new"} and texts(b) == ["honest"]


def test_a_side_with_no_messages_yet_still_merges(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    store.append(make_ctx(a), Session(SID, "claude", title="planned"), [])  # a session, no messages
    oxide(a, "push")
    _pull(b)
    say(a, "a wrote this")
    store.append(make_ctx(b), Session(SID, "claude", title="renamed on b"), [])  # still no messages
    oxide(a, "push")
    res = _pull(b)
    assert res["updated"][refs.session_ref(SID)] == "merged"
    assert res["forks"] == []  # theirs holds all of ours (nothing): no fork needed (issue 39)
    assert texts(b) == ["a wrote this"]


def test_a_shared_history_longer_than_a_bucket_forks_after_all_of_it(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    shared = [f"m{i}" for i in range(300)]  # the first bucket (256) whole, and part of the second
    say(a, *shared)
    oxide(a, "push")
    _pull(b)
    store.append(make_ctx(a), Session(SID, "claude"), [Message("user", (Part.text("a 301"),))])
    store.append(make_ctx(b), Session(SID, "claude"), [Message("user", (Part.text("b 301"),))])
    oxide(a, "push")
    [fork] = _pull(b)["forks"]
    log = sessionlog.load(make_ctx(b).repo, fork["fork"])
    assert log is not None and log.session.extra["fork_seq"] == 300
    last_shared = sessionlog.message_at(make_ctx(b).repo, log.commit.tree, 299)
    assert last_shared is not None and log.session.fork_message_id == last_shared.id
    assert texts(b, fork["fork"])[299:] == ["m299", "a 301"]


def test_more_refs_than_one_fetch_takes_are_all_mirrored(clones: tuple[Path, Path, Path]) -> None:
    a, b, bare = clones
    say(a, "x")
    oxide(a, "push")
    tip = git(bare, "rev-parse", refs.session_ref(SID)).strip()
    names = [refs.session_ref(f"{i:012x}" + "f" * 20) for i in range(1, 1002)]  # fetched 500 at a time
    subprocess.run(["git", "update-ref", "--stdin"], cwd=bare, check=True, text=True,
                   input="".join(f"create {n} {tip}\n" for n in names))
    res = _pull(b)
    mirrored = git(b, "for-each-ref", "--format=%(refname)", "refs/oxide/remotes/origin/sessions/").split()
    assert len(mirrored) == len(names) + 1
    # each copy's log names another session: refused one by one, none taken, none lost to a chunk
    assert len(res["problems"]) == len(names) and res["updated"] == {refs.session_ref(SID): "new"}


def test_refs_under_refs_oxide_that_are_not_ours_are_not_fetched(clones: tuple[Path, Path, Path]) -> None:
    a, b, bare = clones
    say(a, "x")
    oxide(a, "push")
    tip = git(bare, "rev-parse", refs.session_ref(SID)).strip()
    for name in ("refs/oxide/sessions.bak/x", "refs/oxide/checkpointsold/y", "refs/oxide/memory2"):
        git(bare, "update-ref", name, tip)
    _pull(b)
    oxide(b, "pull", "--checkpoints")
    mirrored = git(b, "for-each-ref", "--format=%(refname)", "refs/oxide/remotes/").split()
    assert mirrored == [f"refs/oxide/remotes/origin/sessions/{SID}"]


@pytest.mark.parametrize("title", ["shared work", None])
def test_what_a_diverged_pull_makes_is_named_and_dated_exactly(
        clones: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, title: str | None) -> None:
    a, b, _bare = clones
    ctx_a = make_ctx(a)
    store.append(ctx_a, Session(SID, "claude", title=title), [Message("user", (Part.text("base"),))])
    oxide(a, "push")
    _pull(b)
    store.append(make_ctx(a, NOW_MS + 60_000), Session(SID, "claude", title=title),
                 [Message("user", (Part.text("a says"),))])
    store.append(make_ctx(b, NOW_MS + 90_000), Session(SID, "claude", title=title),
                 [Message("user", (Part.text("b says"),))])
    oxide(a, "push")
    now = 1_767_312_000_123  # 2026-01-02T00:00:00.123Z
    monkeypatch.setenv("OXIDE_NOW", str(now))
    [fork] = _pull(b)["forks"]
    log = sessionlog.load(make_ctx(b).repo, fork["fork"])
    assert log is not None
    assert log.session.title == f"{title or SID[:12]} (the other side of a pull)"
    theirs = int(git(b, "log", "-1", "--format=%ct", fork["from"]).strip())
    assert fork["fork"][:12] == f"{theirs * 1000:012x}"  # a fork id's time: the other side's write
    merged = git(b, "log", "-1", "--format=%ct %ci", refs.session_ref(SID)).split()
    assert int(merged[0]) == now // 1000 and merged[-1] == "+0000"


def test_the_fork_commit_says_whose_it_is_and_after_how_many_messages(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    say(a, "one", "two")
    oxide(a, "push")
    _pull(b)
    store.append(make_ctx(a), Session(SID, "claude"), [Message("user", (Part.text("a three"),))])
    store.append(make_ctx(b), Session(SID, "claude"), [Message("user", (Part.text("b three"),))])
    oxide(a, "push")
    [fork] = _pull(b)["forks"]
    subject = git(b, "log", "-1", "--format=%s", refs.session_ref(fork["fork"])).strip()
    assert subject == f"fork {SID[:12]}: messages of the other side after 2"


def test_memory_and_notes_merges_are_dated_now_in_utc(clones: tuple[Path, Path, Path],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from oxide_git.ops import memory

    a, b, _bare = clones
    memory.add(make_ctx(a), "base", "start")
    git(a, "notes", "--ref", "oxide", "add", "-m", "a's note")
    oxide(a, "push")
    _pull(b)
    memory.add(make_ctx(a, NOW_MS + 1), "only-a", "a's topic")
    memory.add(make_ctx(b, NOW_MS + 2), "only-b", "b's topic")
    (b / "new.txt").write_text("n")
    git(b, "add", "new.txt")
    git(b, "commit", "-q", "-m", "b only")
    git(b, "notes", "--ref", "oxide", "add", "-m", "b's note")
    (a / "other.txt").write_text("o")
    git(a, "add", "other.txt")
    git(a, "commit", "-q", "-m", "a only")
    git(a, "notes", "--ref", "oxide", "add", "-m", "a's second note")
    oxide(a, "push")
    now = 1_767_312_000_999
    monkeypatch.setenv("OXIDE_NOW", str(now))
    res = _pull(b)
    assert res["updated"][refs.MEMORY] == "merged" and res["updated"][refs.NOTES] == "merged"
    for ref, what in ((refs.MEMORY, "memory"), (refs.NOTES, "notes")):
        stamp, _day, _time, zone, subject = git(b, "log", "-1", "--format=%ct %ci %s", ref).split(" ", 4)
        assert (int(stamp), zone, subject.strip()) == (now // 1000, "+0000", f"pull: merge {what}")


def test_a_rejected_push_names_five_of_the_refs_and_counts_them_all(clones: tuple[Path, Path, Path]) -> None:
    a, b, _bare = clones
    sids = [f"{i:012x}" + "c" * 20 for i in range(1, 8)]
    for sid in sids:
        store.append(make_ctx(a), Session(sid, "claude"), [Message("user", (Part.text("base"),))])
    oxide(a, "push")
    _pull(b)
    for root, word in ((a, "a"), (b, "b")):
        for sid in sids:
            store.append(make_ctx(root), Session(sid, "claude"), [Message("user", (Part.text(word),))])
    oxide(a, "push")
    r = oxide(b, "push", check=False)
    assert r.returncode == 1
    named = ", ".join(refs.session_ref(s) for s in sids[:5])
    assert f"error: 7 ref(s) changed on origin since your last pull: {named}\n" in r.stderr


def test_a_ref_the_remote_cannot_send_is_named_and_the_others_are_fetched(clones: tuple[Path, Path, Path]) -> None:
    a, b, bare = clones
    sids = [f"{i:012x}" + "d" * 20 for i in range(1, 6)]
    for sid in sids:
        store.append(make_ctx(a), Session(sid, "claude"), [Message("user", (Part.text(sid),))])
    oxide(a, "push")
    bad = sids[2][:12] + "9" * 20  # sorts among the others
    (bare / "refs" / "oxide" / "sessions" / bad).write_text("ab" * 20 + "\n")  # an object it lacks
    res = _pull(b)
    assert res["updated"] == {refs.session_ref(s): "new" for s in sids}
    [problem] = res["problems"]
    assert problem.startswith(f"origin {refs.session_ref(bad)}: cannot be fetched, left alone (")
    assert git(b, "for-each-ref", "--format=%(refname)", "refs/oxide/remotes/origin/").split() == sorted(
        f"refs/oxide/remotes/origin/sessions/{s}" for s in sids)


def test_checkpoint_refs_are_taken_only_under_names_git_oxide_writes(clones: tuple[Path, Path, Path]) -> None:
    a, b, bare = clones
    say(a, "x")
    oxide(a, "push")
    head = git(bare, "rev-parse", "main").strip()
    good = f"{refs.CHECKPOINTS}manual/{head}"
    for name in (good, f"{refs.CHECKPOINTS}a.b/{head}", f"{refs.CHECKPOINTS}manual/not-hex"):
        git(bare, "update-ref", name, head)
    res = json.loads(oxide(b, "pull", "--checkpoints", "--json").stdout)
    assert res["updated"][good] == "new"
    assert sorted(res["problems"]) == sorted(
        f"origin {refs.CHECKPOINTS}{n}: not a checkpoint name git oxide writes, left alone"
        for n in (f"a.b/{head}", "manual/not-hex"))


def test_a_session_ref_at_a_tree_and_a_checkpoint_named_for_another_commit_are_left_alone(
        clones: tuple[Path, Path, Path]) -> None:
    """Refs a hostile (or broken) remote holds under names git oxide reads: a session ref at a tree,
    a checkpoint ref whose name is not the commit it points at. Each is named and left alone; the
    good refs come in."""
    a, b, bare = clones
    say(a, "x")
    oxide(a, "push")
    head = git(bare, "rev-parse", "main").strip()
    tree = git(bare, "rev-parse", "main^{tree}").strip()
    at_tree = "0" * 12 + "e" * 20
    misnamed = f"{refs.CHECKPOINTS}manual/{'ab' * 20}"
    good = f"{refs.CHECKPOINTS}manual/{head}"
    git(bare, "update-ref", refs.session_ref(at_tree), tree)
    git(bare, "update-ref", misnamed, head)
    git(bare, "update-ref", good, head)
    res = json.loads(oxide(b, "pull", "--checkpoints", "--json").stdout)
    assert sorted(res["problems"]) == [
        f"origin {misnamed}: not a checkpoint (its name is not the commit it points at), left alone",
        f"origin {refs.session_ref(at_tree)}: it points at a tree, not a commit, left alone"]
    assert res["updated"] == {refs.session_ref(SID): "new", good: "new"}
    for name in (refs.session_ref(at_tree), misnamed):
        assert git(b, "rev-parse", "--verify", "-q", name, check=False) == ""
    assert texts(b) == ["x"]


def test_refs_the_remote_refuses_are_named_and_the_push_fails(clones: tuple[Path, Path, Path]) -> None:
    """A remote whose hook refuses the refs (not a divergence: a pull would not help): the push
    names each with the remote's reason and fails; once the remote takes them, the push goes on."""
    a, _b, bare = clones
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    say(a, "x")
    r = oxide(a, "push", "--json", check=False)
    assert r.returncode == 1
    assert json.loads(r.stdout)["problems"] == [f"origin {refs.session_ref(SID)}: the remote refused it (pre-receive hook declined)"]
    assert "error: origin refused 1 ref(s)\n" in r.stderr and "git fsck" in r.stderr
    assert git(bare, "for-each-ref", "refs/oxide/") == ""
    hook.unlink()
    assert json.loads(oxide(a, "push", "--json").stdout)["updated"] == {refs.session_ref(SID): "new"}
def test_a_pull_fetches_only_the_refs_that_moved(clones: tuple[Path, Path, Path], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, bare = clones
    say(a, "x")
    oxide(a, "push")
    tip = git(bare, "rev-parse", refs.session_ref(SID)).strip()
    others = [refs.session_ref(f"{i:012x}" + "e" * 20) for i in range(1, 6)]
    subprocess.run(["git", "update-ref", "--stdin"], cwd=bare, check=True, text=True,
                   input="".join(f"create {n} {tip}\n" for n in others))
    _pull(b)  # the first pull mirrors all six
    trace = tmp_path / "packets"
    monkeypatch.setenv("GIT_TRACE_PACKET", str(trace))
    monkeypatch.setenv("GIT_TRACE", str(trace))
    _pull(b)
    assert "built-in: git fetch" not in trace.read_text()  # nothing moved: no fetch at all
    trace.unlink()
    monkeypatch.delenv("GIT_TRACE_PACKET")
    monkeypatch.delenv("GIT_TRACE")
    say(a, "y")
    oxide(a, "push")
    monkeypatch.setenv("GIT_TRACE_PACKET", str(trace))
    res = _pull(b)
    asked = [ln.rsplit("ref-prefix ", 1)[1] for ln in trace.read_text().splitlines()
             if "fetch> ref-prefix refs/oxide/" in ln]
    assert asked == [refs.session_ref(SID)]  # the one ref that moved, not the five that did not
    assert res["updated"] == {refs.session_ref(SID): "fast-forward"}


def test_the_pull_reindexes_what_it_moved_and_leaves_the_rest_to_reindex(clones: tuple[Path, Path, Path]) -> None:
    """The pull's own reindex reads the logs it moved, not every one of the store (a team's
    100,000): a broken local log it did not touch (a ref at a commit with no session.msgpack) is
    no problem of the pull; `reindex` and `doctor` say it."""
    a, b, _bare = clones
    say(a, "hello")
    oxide(a, "push")
    bad = "0" * 12 + "b" * 20
    empty = git(b, "hash-object", "-w", "-t", "tree", "/dev/null").strip()
    stray = git(b, "commit-tree", "-m", "not a session log", empty).strip()
    git(b, "update-ref", refs.session_ref(bad), stray)
    res = _pull(b)
    assert res["updated"] == {refs.session_ref(SID): "new"}
    assert res["problems"] == []
    assert texts(b) == ["hello"]
    again = oxide(b, "reindex", check=False)
    assert f"{refs.session_ref(bad)}: session log {stray} has no session.msgpack" in again.stdout + again.stderr
