"""The undo journal: what undo does with no journal, a torn line, an unwritable journal, an undo
interrupted half-way, and a ref deleted since the operation."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.core.errors import NotFound, OxideError, Refused
from oxide_git.core.model import Message, Part
from oxide_git.git import refs
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.rewind import rewind
from oxide_git.ops.undo import undo
from oxide_git.store import sessionlog
from oxide_git.store import writes as store
from tests.cli.test_history import _session
from tests.conftest import NOW_MS, git, make_ctx, oxide


def _rewound(repo: Path) -> tuple[str, str, str]:
    """A session of 4 messages, 2 more, then a conversation rewind to the 4: (sid, before, after)."""
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")
    store.append(ctx, s, [Message("user", (Part.text("later"),)), Message("assistant", (Part.text("ok"),))])
    before = git(repo, "rev-parse", refs.session_ref(s.id)).strip()
    rewind(make_ctx(repo, NOW_MS + 5), cp.id, code=False)
    return s.id, before, git(repo, "rev-parse", refs.session_ref(s.id)).strip()


def _journal(repo: Path) -> Path:
    return make_ctx(repo).repo.worktree_dir / "journal.jsonl"


def test_nothing_to_undo(repo: Path) -> None:
    oxide(repo, "init")
    with pytest.raises(NotFound) as e:
        undo(make_ctx(repo))
    assert e.value.message == "nothing to undo in this worktree" and "pull" in (e.value.hint or "")
    r = oxide(repo, "undo", "--yes", check=False)
    assert r.returncode == 1 and "error: nothing to undo in this worktree" in r.stderr


def test_a_torn_last_line_is_skipped(repo: Path) -> None:
    sid, before, _after = _rewound(repo)
    with _journal(repo).open("a") as f:
        f.write('{"op": "rewind", "at": 1, "summ')  # a crash while journaling the next operation
    undo(make_ctx(repo, NOW_MS + 6))
    assert git(repo, "rev-parse", refs.session_ref(sid)).strip() == before


def test_an_unwritable_journal_changes_nothing(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")
    (repo / "README.md").write_text("after the checkpoint\n")
    store.append(ctx, s, [Message("user", (Part.text("later"),))])
    tip = git(repo, "rev-parse", refs.session_ref(s.id)).strip()
    _journal(repo).mkdir(parents=True)  # open(..., "a") fails with an OSError that is no permission error
    with pytest.raises(OxideError) as e:
        rewind(make_ctx(repo, NOW_MS + 5), cp.id)
    assert e.value.message.startswith("cannot write the undo journal") and "nothing was changed" in (
        e.value.hint or "")
    assert git(repo, "rev-parse", refs.session_ref(s.id)).strip() == tip
    assert (repo / "README.md").read_text() == "after the checkpoint\n"


def test_an_undo_interrupted_after_its_refs_moved_is_finished_by_running_it_again(repo: Path) -> None:
    sid, before, _after = _rewound(repo)
    git(repo, "update-ref", refs.session_ref(sid), before)  # the refs moved; then the process died
    lines = _journal(repo).read_text().count("\n")
    undo(make_ctx(repo, NOW_MS + 6))  # no "moved since": the ref is already where undo puts it
    assert git(repo, "rev-parse", refs.session_ref(sid)).strip() == before
    assert _journal(repo).read_text().count("\n") == lines + 1  # and now it is journaled


def test_a_ref_deleted_since_is_refused_then_forced_back(repo: Path) -> None:
    sid, before, _after = _rewound(repo)
    git(repo, "update-ref", "-d", refs.session_ref(sid))
    with pytest.raises(Refused) as e:
        undo(make_ctx(repo, NOW_MS + 6))
    assert e.value.message == f"{refs.session_ref(sid)} moved since (now deleted), undo would lose that"
    undo(make_ctx(repo, NOW_MS + 7), force=True)
    assert git(repo, "rev-parse", refs.session_ref(sid)).strip() == before
    assert not git(repo, "for-each-ref", "refs/oxide/trash/").strip()  # nothing newer to keep
    assert sessionlog.load(make_ctx(repo).repo, sid).count == 6


def test_undo_after_undo_is_a_redo_and_says_so(repo: Path) -> None:
    from oxide_git.ops.undo import action

    sid, _before, after = _rewound(repo)
    first = undo(make_ctx(repo, NOW_MS + 6), dry_run=True).undone
    assert (first["action"], first["what"]) == ("undo", first["summary"])
    undo(make_ctx(repo, NOW_MS + 6))
    again = undo(make_ctx(repo, NOW_MS + 7), dry_run=True).undone
    assert again["action"] == "redo" and again["what"] == first["summary"]
    undo(make_ctx(repo, NOW_MS + 7))
    assert git(repo, "rev-parse", refs.session_ref(sid)).strip() == after
    third = undo(make_ctx(repo, NOW_MS + 8), dry_run=True).undone
    assert third["action"] == "undo" and third["what"] == first["summary"]  # undo undo undo: an undo
    from oxide_git.store.journal import Entry

    assert action(Entry("x", 0, "undo undo undo rm a")) == ("redo", "rm a")


def test_an_entry_older_than_a_gc_is_refused_unless_forced(repo: Path) -> None:
    sid, before, _after = _rewound(repo)
    from oxide_git.store import journal

    journal.record(make_ctx(repo), journal.Entry("gc", NOW_MS + 6, "git oxide gc (removed 3 ref(s))",
                                                 undoable=False))
    journal.record(make_ctx(repo), journal.Entry("gc", NOW_MS + 6, "git oxide gc (removed 4 ref(s))",
                                                 undoable=False))
    with pytest.raises(Refused) as e:
        undo(make_ctx(repo, NOW_MS + 7))
    assert "older than `git oxide gc (removed 4 ref(s))`" in e.value.message  # the latest of them
    assert e.value.message.startswith("the last undoable operation, rewind to ")
    assert "--force" in (e.value.hint or "")
    res = undo(make_ctx(repo, NOW_MS + 8), force=True)
    assert res.dry_run is False and git(repo, "rev-parse", refs.session_ref(sid)).strip() == before
    # a later gc refuses the redo of that undo the same way, named as the undo it reverts
    journal.record(make_ctx(repo), journal.Entry("gc", NOW_MS + 9, "git oxide gc (removed 1 ref(s))",
                                                 undoable=False))
    with pytest.raises(Refused) as e:
        undo(make_ctx(repo, NOW_MS + 10))
    assert e.value.message.startswith("the last undoable operation, the undo of rewind to ")


def test_undo_of_a_rewind_whose_before_checkpoint_was_pruned_says_so(repo: Path) -> None:
    import json

    ctx = make_ctx(repo)
    cp = checkpoint(ctx, kind="manual")
    (repo / "README.md").write_text("after the checkpoint\n")
    rewind(make_ctx(repo, NOW_MS + 5), cp.id, conversation=False)
    entry = json.loads(_journal(repo).read_text().splitlines()[-1])
    before = entry["files_before"]
    for name in git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide/").splitlines():
        ref, oid = name.split()
        if oid == before:
            git(repo, "update-ref", "-d", ref)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    with pytest.raises(NotFound) as e:
        undo(make_ctx(repo, NOW_MS + 6))
    assert e.value.message == (f"the state before '{entry['summary']}' is gone (checkpoint {before[:12]} "
                               "was garbage-collected)")
    assert (repo / "README.md").read_text() == "hello\n"


def test_a_gc_before_the_operation_does_not_refuse_its_undo(repo: Path) -> None:
    from oxide_git.store import journal

    oxide(repo, "init")
    journal.record(make_ctx(repo), journal.Entry("gc", NOW_MS, "git oxide gc (removed 1 ref(s))", undoable=False))
    sid, before, _after = _rewound(repo)
    undo(make_ctx(repo, NOW_MS + 6))  # the gc mark is older than the rewind: nothing to refuse
    assert git(repo, "rev-parse", refs.session_ref(sid)).strip() == before


def test_an_operation_journaled_after_a_torn_line_is_still_undone(repo: Path) -> None:
    """A crash can leave the journal's last line without its newline: the next operation's line
    must not be glued to it (it would be unreadable, and undo would revert an older operation)."""
    sid, _before, _after = _rewound(repo)
    with _journal(repo).open("a") as f:
        f.write('{"op": "rewind", "at": 1, "summ')  # torn: no newline
    store.append(make_ctx(repo), _session_of(repo, sid), [Message("user", (Part.text("more"),))])
    cp2 = checkpoint(make_ctx(repo, NOW_MS + 7), kind="manual", text="second")
    (repo / "README.md").write_text("after the second checkpoint\n")
    rewind(make_ctx(repo, NOW_MS + 8), cp2.id)
    undone = undo(make_ctx(repo, NOW_MS + 9))
    assert undone.undone["summary"] == f"rewind to {cp2.id[:12]}"
    assert (repo / "README.md").read_text() == "after the second checkpoint\n"


def _session_of(repo: Path, sid: str):  # type: ignore[no-untyped-def]
    log = sessionlog.load(make_ctx(repo).repo, sid)
    assert log is not None
    return log.session


def test_an_interrupted_undo_of_several_refs_is_finished_whichever_moved(repo: Path) -> None:
    from oxide_git.ops.fork import fork
    from oxide_git.ops.rm import rm

    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    f1 = fork(make_ctx(repo, NOW_MS + 1), s.id, at="1")
    f2 = fork(make_ctx(repo, NOW_MS + 2), s.id, at="2")
    tips = {sid: git(repo, "rev-parse", refs.session_ref(sid)).strip() for sid in (s.id, f1.id, f2.id)}
    res = rm(make_ctx(repo, NOW_MS + 3), s.id, recursive=True)
    first = sorted(res.refs)[0]
    git(repo, "update-ref", first, res.refs[first][0])  # the undo had put this one back, then died
    undo(make_ctx(repo, NOW_MS + 4))
    for sid, tip in tips.items():
        assert git(repo, "rev-parse", refs.session_ref(sid)).strip() == tip


def test_the_messages_name_refs_by_twelve_characters(repo: Path) -> None:
    sid, _before, _after = _rewound(repo)
    store.append(make_ctx(repo), _session_of(repo, sid), [Message("user", (Part.text("more"),))])
    now = git(repo, "rev-parse", refs.session_ref(sid)).strip()
    with pytest.raises(Refused) as e:
        undo(make_ctx(repo, NOW_MS + 6))
    assert e.value.message == f"{refs.session_ref(sid)} moved since (now {now[:12]}), undo would lose that"
