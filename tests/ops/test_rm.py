"""`git oxide rm`: refused with forks unless --recursive or --keep-forks; undo brings it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.core.errors import NotFound, Refused
from oxide_git.git import refs
from oxide_git.ops.fork import fork
from oxide_git.ops.gc import DAY, gc
from oxide_git.ops.rm import rm
from oxide_git.ops.undo import undo
from oxide_git.store import sessionlog
from oxide_git.store.reindex import reindex
from tests.cli.test_history import _session
from tests.conftest import NOW_MS, fsck_clean, git, make_ctx, oxide


def _sessions(repo: Path) -> list[str]:
    return sorted(n.removeprefix(refs.SESSIONS) for n in
                  git(repo, "for-each-ref", "--format=%(refname)", refs.SESSIONS).split())


def test_rm_without_forks_then_undo(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    tip = git(repo, "rev-parse", refs.session_ref(s.id)).strip()
    dry = rm(make_ctx(repo), s.id[:8], dry_run=True)
    assert dry.sessions == [s.id] and _sessions(repo) == [s.id]
    res = rm(make_ctx(repo, NOW_MS + 1), s.id[:8])
    assert res.sessions == [s.id] and _sessions(repo) == []
    trash = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", refs.TRASH).split()
    assert trash == [f"{refs.TRASH}{NOW_MS + 1}/sessions/{s.id}", tip]
    assert make_ctx(repo).index.session_rows(ids=[s.id]) == []
    undo(make_ctx(repo, NOW_MS + 2))
    assert _sessions(repo) == [s.id]
    assert sessionlog.load(ctx.repo, s.id).count == 4
    assert len(make_ctx(repo).index.session_rows(ids=[s.id])) == 1


def test_rm_with_forks(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 6)
    f1 = fork(make_ctx(repo, NOW_MS + 1), s.id, at="2")
    f2 = fork(make_ctx(repo, NOW_MS + 2), f1.id)  # a fork of the fork
    with pytest.raises(Refused) as e:
        rm(make_ctx(repo, NOW_MS + 3), s.id)
    assert "--recursive" in (e.value.hint or "")
    assert len(_sessions(repo)) == 3

    # --recursive: everything goes, and one undo brings everything back
    res = rm(make_ctx(repo, NOW_MS + 3), s.id, recursive=True)
    assert sorted(res.sessions) == sorted([s.id, f1.id, f2.id]) and _sessions(repo) == []
    undo(make_ctx(repo, NOW_MS + 4))
    assert _sessions(repo) == sorted([s.id, f1.id, f2.id])

    # --keep-forks: the forks stay complete (their history is in git), the parent goes
    res = rm(make_ctx(repo, NOW_MS + 5), s.id, keep_forks=True)
    assert res.sessions == [s.id] and res.kept_forks == [f1.id]
    assert _sessions(repo) == sorted([f1.id, f2.id])
    git(repo, "gc", "--prune=now", "-q")
    fsck_clean(repo)
    assert sessionlog.load(ctx.repo, f1.id).count == 2
    assert sessionlog.load(ctx.repo, f2.id).count == 2
    reindex(make_ctx(repo), full=True)
    undo(make_ctx(repo, NOW_MS + 6))
    assert _sessions(repo) == sorted([s.id, f1.id, f2.id])

    # once gc empties the trash (trashTTL later) the removal is final
    rm(make_ctx(repo, NOW_MS + 7), s.id, recursive=True)
    assert gc(make_ctx(repo, NOW_MS + 7 + 15 * DAY)).trash
    git(repo, "gc", "--prune=now", "-q")
    fsck_clean(repo)
    assert not git(repo, "for-each-ref", "refs/oxide/trash/").strip()
    refs_now = git(repo, "for-each-ref", "refs/oxide/")
    with pytest.raises(NotFound) as e:  # undo cannot bring back what gc pruned, and breaks nothing
        undo(make_ctx(repo, NOW_MS + 8 + 15 * DAY))
    assert "is gone" in e.value.message and e.value.message.startswith(refs.SESSIONS)
    gone = e.value.message.split("(", 1)[1].split(")", 1)[0]
    assert len(gone) == 12 and set(gone) <= set("0123456789abcdef")  # the commit, by 12 characters
    assert git(repo, "for-each-ref", "refs/oxide/") == refs_now and _sessions(repo) == []
    fsck_clean(repo)


def test_rm_cli_refuses_without_yes_off_a_terminal(repo: Path) -> None:
    s = _session(make_ctx(repo), 2)
    r = oxide(repo, "rm", s.id[:8], check=False, input="")
    assert r.returncode == 1 and "--yes" in r.stderr
    r = oxide(repo, "rm", s.id[:8], "--dry-run")
    assert f"would remove session {s.id}" in r.stdout
    oxide(repo, "rm", s.id[:8], "--yes")
    assert _sessions(repo) == []
    oxide(repo, "undo", "--yes")
    assert _sessions(repo) == [s.id]


def test_rm_names_what_it_removed_in_order_and_refuses_with_the_first_five(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 6)
    kids = [fork(make_ctx(repo, NOW_MS + 1 + i), s.id, at=str(i % 5)).id for i in range(6)]
    grandchild = fork(make_ctx(repo, NOW_MS + 10), kids[0]).id
    with pytest.raises(Refused) as e:
        rm(make_ctx(repo, NOW_MS + 11), s.id)
    assert e.value.message == f"session {s.id[:12]} has 7 fork(s): " + ", ".join(k[:12] for k in kids[:5])
    res = rm(make_ctx(repo, NOW_MS + 12), s.id, recursive=True)
    assert res.sessions == [s.id, *kids, grandchild]  # breadth first, children by creation
    assert not res.dry_run and res.kept_forks == []
    assert undo(make_ctx(repo, NOW_MS + 13), dry_run=True).undone["summary"] == f"rm {s.id[:12]} and 7 fork(s)"
    undo(make_ctx(repo, NOW_MS + 13))
    res = rm(make_ctx(repo, NOW_MS + 14), grandchild)
    assert res.sessions == [grandchild] and res.kept_forks == [] and not res.dry_run
    assert undo(make_ctx(repo, NOW_MS + 15), dry_run=True).undone["summary"] == f"rm {grandchild[:12]}"


def test_rm_of_a_session_whose_ref_is_gone_and_of_a_fork_whose_ref_is_gone(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    f1 = fork(make_ctx(repo, NOW_MS + 1), s.id, at="1")
    f2 = fork(make_ctx(repo, NOW_MS + 2), s.id, at="2")
    git(repo, "update-ref", "-d", refs.session_ref(f1.id))  # behind the index's back
    res = rm(make_ctx(repo, NOW_MS + 3), s.id, recursive=True)
    assert res.sessions == [s.id, f1.id, f2.id] and set(res.refs) == {refs.session_ref(s.id),
                                                                       refs.session_ref(f2.id)}
    assert _sessions(repo) == []
    other = _session(make_ctx(repo), 2, sid="0" * 12 + "e" * 20)
    git(repo, "update-ref", "-d", refs.session_ref(other.id))
    with pytest.raises(NotFound) as e:
        rm(make_ctx(repo, NOW_MS + 4), other.id)
    assert e.value.message == f"session {other.id} has no ref in git" and "reindex" in (e.value.hint or "")


def test_rm_recursive_ends_on_a_parent_cycle(repo: Path) -> None:
    """Session logs can come from a remote: two that name each other as parent must not hang rm."""
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.store import writes as store

    a, b = "0" * 12 + "a" * 20, "0" * 12 + "b" * 20
    ctx = make_ctx(repo)
    store.append(ctx, Session(a, "claude", parent_id=b), [Message("user", (Part.text("a"),))])
    store.append(ctx, Session(b, "claude", parent_id=a), [Message("user", (Part.text("b"),))])
    res = rm(make_ctx(repo, NOW_MS + 1), a, recursive=True)
    assert res.sessions == [a, b] and _sessions(repo) == []
    assert undo(make_ctx(repo, NOW_MS + 2), dry_run=True).undone["summary"] == f"rm {a[:12]} and 1 fork(s)"
