"""Rewind and the other sessions of a worktree: only what another session changed after the
checkpoint is its work (what it changed before is already in the checkpoint); what a rewind
journals for undo; a conversation rewind with nothing to drop writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxide_git.core.errors import Refused
from oxide_git.core.model import Message, Part
from oxide_git.git import refs
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.rewind import rewind
from oxide_git.store import writes as store
from tests.cli.test_history import _session
from tests.conftest import NOW_MS, git, make_ctx, oxide

OTHER = "0" * 12 + "d" * 20


def test_what_another_session_changed_before_the_checkpoint_is_no_conflict(repo: Path) -> None:
    ctx = make_ctx(repo)
    mine = _session(ctx, 2)
    other = _session(ctx, 2, sid=OTHER)
    (repo / "early.txt").write_text("the other session, first\n")
    checkpoint(make_ctx(repo, NOW_MS + 1), session=other.id)
    (repo / "early.txt").write_text("the other session, second\n")
    checkpoint(make_ctx(repo, NOW_MS + 2), session=other.id)
    (repo / "early.txt").write_text("the other session, third\n")
    checkpoint(make_ctx(repo, NOW_MS + 3), session=other.id)
    store.set_current_session(ctx, mine.id)
    cp = checkpoint(make_ctx(repo, NOW_MS + 4), session=mine.id)  # early.txt's third state is in it
    (repo / "late.txt").write_text("the other session, after my checkpoint\n")
    checkpoint(make_ctx(repo, NOW_MS + 5), session=other.id)
    (repo / "src" / "app.py").write_text("my edit\n")
    (repo / "early.txt").write_text("my edit, after my checkpoint\n")  # the other changed it only before
    with pytest.raises(Refused) as e:
        rewind(make_ctx(repo, NOW_MS + 6), cp.id, conversation=False)
    assert "late.txt" in e.value.message and "early.txt" not in e.value.message
    res = rewind(make_ctx(repo, NOW_MS + 7), cp.id, conversation=False, only_mine=True)
    assert res.conflicts == {OTHER: ["late.txt"]} and res.skipped == ["late.txt"]
    assert (repo / "src" / "app.py").read_text() == "print('hi')\n"
    assert (repo / "early.txt").read_text() == "the other session, third\n"  # my edit rewound


def test_a_session_whose_checkpoints_all_follow_mine_counts_from_its_first(repo: Path) -> None:
    ctx = make_ctx(repo)
    mine = _session(ctx, 2)
    cp = checkpoint(make_ctx(repo, NOW_MS + 1), session=mine.id)
    other = _session(ctx, 2, sid=OTHER)
    (repo / "a.txt").write_text("before its first checkpoint\n")
    checkpoint(make_ctx(repo, NOW_MS + 2), session=other.id)  # its base: a.txt is in it already
    (repo / "b.txt").write_text("after its first checkpoint\n")
    checkpoint(make_ctx(repo, NOW_MS + 3), session=other.id)
    store.set_current_session(ctx, mine.id)
    res = rewind(make_ctx(repo, NOW_MS + 4), cp.id, conversation=False, only_mine=True)
    assert res.conflicts == {OTHER: ["b.txt"]}


def test_undo_of_a_rewind_knows_which_checkpoint_the_files_were_set_to(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")
    (repo / "README.md").write_text("after the checkpoint\n")
    res = rewind(make_ctx(repo, NOW_MS + 5), cp.id, conversation=False)
    plan = json.loads(oxide(repo, "undo", "--dry-run", "--json").stdout)
    assert (plan["undone"]["files_before"], plan["undone"]["files_after"]) == (res.before_checkpoint, cp.id)
    assert res.written == 1
    store.append(make_ctx(repo, NOW_MS + 6), s, [Message("user", (Part.text("later"),))])
    convo = rewind(make_ctx(repo, NOW_MS + 7), cp.id, code=False)
    assert convo.written == 0 and convo.to_dict()["written"] == 0  # no file was written
    plan = json.loads(oxide(repo, "undo", "--dry-run", "--json").stdout)
    assert (plan["undone"]["files_before"], plan["undone"]["files_after"]) == (None, None)


def test_a_conversation_rewind_with_nothing_to_drop_writes_no_commit(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")  # at the last message
    tip = git(repo, "rev-parse", refs.session_ref(s.id)).strip()
    res = rewind(make_ctx(repo, NOW_MS + 5), cp.id, code=False)
    assert res.messages_dropped == 0
    assert git(repo, "rev-parse", refs.session_ref(s.id)).strip() == tip
    plan = json.loads(oxide(repo, "undo", "--dry-run", "--json").stdout)
    assert plan["undone"]["refs"] == {}


def test_what_a_rewind_writes_names_the_checkpoint_by_the_id_a_user_types(repo: Path) -> None:
    from oxide_git.ops import memory
    from oxide_git.store import snapshots
    from tests.ops.test_memory import _rewind_setup

    _s, cp = _rewind_setup(repo)
    short = cp.id[:12]
    old_memory = git(repo, "rev-parse", refs.MEMORY).strip()
    res = rewind(make_ctx(repo, NOW_MS + 40), cp.id, code=True, memory=True)
    assert res.messages_dropped == 1
    g = make_ctx(repo).repo.git
    sid = res.session_id
    assert git(repo, "log", "-1", "--format=%s", refs.session_ref(sid)).strip() == f"rewind to {short}"
    assert git(repo, "log", "-1", "--format=%s", refs.MEMORY).strip() == f"oxide memory: revert 2 write(s): rewind to {short}"
    assert res.memory_reverted == git(repo, "rev-parse", refs.MEMORY).strip() != old_memory
    before = snapshots.parse_commit(g.get(res.before_checkpoint), "")
    assert before.text == f"before rewind to {short}"
    plan = json.loads(oxide(repo, "undo", "--dry-run", "--json").stdout)
    assert plan["undone"]["summary"] == f"rewind to {short}"
    assert memory.files(make_ctx(repo))["setup.md"] == "Use uv.\n"


def test_a_checkpoint_of_another_branch_is_refused_by_name(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    git(repo, "checkout", "-q", "-b", "feature")
    with pytest.raises(Refused) as e:
        rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert e.value.message == (f"checkpoint {cp.id[:12]} was made in worktree main on branch main, "
                               "this is main on feature")
    rewind(make_ctx(repo, NOW_MS + 2), cp.id, conversation=False, force=True)


def test_another_sessions_conflicts_are_named_five_at_most(repo: Path) -> None:
    ctx = make_ctx(repo)
    mine = _session(ctx, 2)
    cp = checkpoint(make_ctx(repo, NOW_MS + 1), session=mine.id)
    other = _session(ctx, 2, sid=OTHER)
    checkpoint(make_ctx(repo, NOW_MS + 2), session=other.id)
    for i in range(7):
        (repo / f"f{i}.txt").write_text("the other session's\n")
    checkpoint(make_ctx(repo, NOW_MS + 3), session=other.id)
    store.set_current_session(ctx, mine.id)
    with pytest.raises(Refused) as e:
        rewind(make_ctx(repo, NOW_MS + 4), cp.id, conversation=False)
    assert e.value.message == (f"session {OTHER[:12]} changed f0.txt, f1.txt, f2.txt, f3.txt, f4.txt after "
                               "this checkpoint; rewinding would overwrite its work")


def test_a_checkpoint_of_another_session_at_the_same_instant_is_its_base(repo: Path) -> None:
    ctx = make_ctx(repo)
    mine = _session(ctx, 2)
    other = _session(ctx, 2, sid=OTHER)
    same = make_ctx(repo, NOW_MS + 1)
    checkpoint(same, session=other.id)
    cp = checkpoint(same, session=mine.id)  # the same millisecond
    (repo / "theirs.txt").write_text("the other session, after\n")
    checkpoint(make_ctx(repo, NOW_MS + 2), session=other.id)
    store.set_current_session(ctx, mine.id)
    with pytest.raises(Refused):
        rewind(make_ctx(repo, NOW_MS + 3), cp.id, conversation=False)
    assert (repo / "theirs.txt").exists()


def test_a_checkpoint_of_a_session_with_no_message_yet_rewinds_the_files_only(repo: Path) -> None:
    from oxide_git.core.model import Session

    ctx = make_ctx(repo)
    s = Session("0" * 12 + "e" * 20, "claude", worktree=ctx.repo.worktree_id)
    store.append(ctx, s, [])
    cp = checkpoint(ctx, session=s.id)
    assert cp.message_id is None
    (repo / "README.md").write_text("edited\n")
    res = rewind(make_ctx(repo, NOW_MS + 1), cp.id)
    assert res.messages_dropped == 0 and (repo / "README.md").read_text() == "hello\n"


def test_a_worktree_deleted_under_a_running_command(repo: Path, tmp_path: Path) -> None:
    import shutil

    from oxide_git.core.errors import OxideError
    from oxide_git.store.context import Context

    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    ctx = make_ctx(wt)
    _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")
    shutil.rmtree(wt)  # the context was made while it was there
    with pytest.raises(OxideError) as e:
        rewind(Context(ctx.repo, NOW_MS + 2, ctx.environ), cp.id, force=True)
    assert e.value.message == f"the worktree {wt} no longer exists"
