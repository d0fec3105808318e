"""Rewind and the other sessions of a worktree: only what another session changed after the
checkpoint is its work (what it changed before is already in the checkpoint); what a rewind
journals for undo; a conversation rewind with nothing to drop writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxide_git import refs, store
from oxide_git.checkpoint import checkpoint
from oxide_git.errors import Refused
from oxide_git.model import Message, Part
from oxide_git.rewind import rewind

from .conftest import NOW_MS, git, make_ctx, oxide
from .test_history import _session

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
    with pytest.raises(Refused) as e:
        rewind(make_ctx(repo, NOW_MS + 6), cp.id, conversation=False)
    assert "late.txt" in e.value.message and "early.txt" not in e.value.message
    res = rewind(make_ctx(repo, NOW_MS + 7), cp.id, conversation=False, only_mine=True)
    assert res.conflicts == {OTHER: ["late.txt"]} and res.skipped == ["late.txt"]
    assert (repo / "src" / "app.py").read_text() == "print('hi')\n"
    assert (repo / "early.txt").read_text() == "the other session, third\n"


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
