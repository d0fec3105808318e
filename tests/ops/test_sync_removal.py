"""Issue 39: a removed session stays removed across pulls; rm --remote and push --prune carry the
removal to the remote; undo of the rm undoes its tombstone too."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from oxide_git.cli import main
from oxide_git.git import refs
from oxide_git.ops.undo import undo
from oxide_git.store import tombstones
from tests.conftest import NOW_MS, git, make_ctx
from tests.ops.test_share import SID, clones, say, texts  # noqa: F401 - the fixture

STONE = tombstones.ref(SID)


def run(root: Path, *args: str, code: int = 0) -> str:
    cwd = Path.cwd()
    try:
        import os

        os.chdir(root)
        r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert r.exit_code == code, r.output
    return r.output


def remote_sessions(bare: Path) -> list[str]:
    return git(bare, "for-each-ref", "--format=%(refname)", refs.SESSIONS).split()


def test_a_removed_session_stays_removed_across_pulls(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, _bare = clones
    say(a, "hello")
    run(a, "push")
    run(a, "rm", SID, "--yes")
    assert git(a, "for-each-ref", "--format=%(refname)", STONE).strip() == STONE
    out = run(a, "pull", "--json")
    assert json.loads(out)["updated"] == {}  # main: {"refs/oxide/sessions/...": "new"}
    assert texts_or_none(a) is None
    assert json.loads(run(a, "list", "--all", "--json")) == []
    # b changes it after the removal: it comes back, as a fork of the removed session, said so
    run(b, "pull")
    say(b, "b goes on")
    run(b, "push")
    out = run(a, "pull")
    assert "was removed here but changed on origin since" in out
    assert texts_or_none(a) is None
    [fork] = [r for r in json.loads(run(a, "list", "--all", "--json"))]
    assert fork["parent_id"] == SID and texts(a, fork["id"]) == ["hello", "b goes on"]
    assert json.loads(run(a, "pull", "--json"))["forks"] == []  # once


def texts_or_none(root: Path) -> list[str] | None:
    return None if refs.read(make_ctx(root).repo.git, refs.session_ref(SID)) is None else texts(root)


def test_undo_of_the_rm_takes_its_tombstone_away(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, _b, _bare = clones
    say(a, "hello")
    run(a, "push")
    run(a, "rm", SID, "--yes")
    undo(make_ctx(a, NOW_MS + 10))
    assert refs.read(make_ctx(a).repo.git, STONE) is None
    assert texts(a) == ["hello"]
    say(a, "more", now=NOW_MS + 20)
    run(a, "push")  # nothing removed holds it back


def test_rm_remote_removes_it_there_unless_changed_since(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, bare = clones
    say(a, "hello")
    run(a, "push")
    dry = run(a, "rm", SID, "--remote", "--dry-run")
    assert f"would remove {refs.session_ref(SID)} on origin" in dry and remote_sessions(bare)
    out = run(a, "rm", SID, "--yes", "--remote")
    assert f"removed {refs.session_ref(SID)} on origin" in out
    assert remote_sessions(bare) == []
    run(b, "pull")  # b never had it: nothing comes
    assert json.loads(run(b, "list", "--all", "--json")) == []
    # changed on the remote since: kept there, said so
    say(b, "b's own", now=NOW_MS + 5)
    run(b, "push")
    out = run(a, "push", "--prune", "--dry-run")
    assert "changed on origin after it was removed here: kept there" in out
    assert remote_sessions(bare) == [refs.session_ref(SID)]


def test_push_prune_carries_every_removal(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, _b, bare = clones
    say(a, "hello")
    run(a, "push")
    run(a, "rm", SID, "--yes")
    dry = json.loads(run(a, "push", "--prune", "--dry-run", "--json"))
    assert dry["updated"] == {refs.session_ref(SID): "would remove"}
    assert remote_sessions(bare) == [refs.session_ref(SID)]
    out = json.loads(run(a, "push", "--prune", "--json"))
    assert out["updated"] == {refs.session_ref(SID): "removed"}
    assert remote_sessions(bare) == []
    assert json.loads(run(a, "push", "--prune", "--json"))["updated"] == {}  # gone: nothing to do


def test_a_removal_the_remote_refuses_is_named_and_an_unreachable_remote_is_an_error(
        clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    from oxide_git.ops.prune import push_removals
    from oxide_git.ops.remote_refs import RemoteError

    a, _b, bare = clones
    say(a, "hello")
    run(a, "push")
    run(a, "rm", SID, "--yes")
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho no deletions here >&2\nexit 1\n")
    hook.chmod(0o755)
    res = push_removals(make_ctx(a))
    assert res.updated == {} and "not removed there" in res.problems[0]
    assert remote_sessions(bare) == [refs.session_ref(SID)]
    git(a, "remote", "set-url", "origin", str(bare.parent / "nowhere.git"))
    try:
        push_removals(make_ctx(a))
    except RemoteError as e:
        assert "cannot reach remote 'origin'" in e.message
    else:
        raise AssertionError("no error")


def test_a_tombstone_git_oxide_did_not_write_is_no_tombstone(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, _bare = clones
    say(a, "hello")
    run(a, "push")
    head = git(b, "rev-parse", "HEAD").strip()
    git(b, "update-ref", STONE, head)  # a commit without the trailer
    assert tombstones.removed_tip(make_ctx(b).repo.git, SID) is None
    assert list(tombstones.all_removed(make_ctx(b).repo.git)) == []
    assert json.loads(run(b, "pull", "--json"))["updated"] == {refs.session_ref(SID): "new"}


def test_a_diverged_memory_push_is_still_rejected(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, _bare = clones
    run(a, "memory", "add", "topic", "from a")
    run(b, "memory", "add", "other", "from b")
    run(a, "push")
    out = run(b, "push", code=1)
    assert "changed on origin since your last pull" in out


def test_a_removal_on_the_remote_reaches_a_teammate_who_had_it(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    """b pulled the session; a removed it on the remote. b's next pull removes b's copy (nothing of
    it is b's own), undoably, and b's push does not give it back to the remote."""
    a, b, bare = clones
    say(a, "hello")
    run(a, "push")
    run(b, "pull")
    tip = git(b, "rev-parse", refs.session_ref(SID)).strip()
    run(a, "rm", SID, "--yes", "--remote")
    out = json.loads(run(b, "pull", "--json"))
    assert out["updated"] == {refs.session_ref(SID): "removed on the remote"}
    assert json.loads(run(b, "list", "--all", "--json")) == []
    assert tombstones.removed_tip(make_ctx(b).repo.git, SID) == tip
    assert "nothing new" in run(b, "push", "--dry-run") and remote_sessions(bare) == []
    undo(make_ctx(b, NOW_MS + 50))  # the pull's removal is undone like any of its changes
    assert texts(b) == ["hello"] and tombstones.removed_tip(make_ctx(b).repo.git, SID) is None


def test_a_teammate_who_went_on_keeps_the_session_and_says_so(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, bare = clones
    say(a, "hello")
    run(a, "push")
    run(b, "pull")
    run(a, "rm", SID, "--yes", "--remote")
    say(b, "b went on", now=NOW_MS + 5)
    out = json.loads(run(b, "pull", "--json"))
    assert out["updated"] == {refs.session_ref(SID): "kept (removed on the remote, changed here since)"}
    assert texts(b) == ["hello", "b went on"]
    run(b, "push")
    assert remote_sessions(bare) == [refs.session_ref(SID)]  # b's messages go back to the team
