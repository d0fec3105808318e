"""`git oxide rm`: refused with forks unless --recursive or --keep-forks; undo brings it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git import refs, sessionlog
from oxide_git.errors import NotFound, Refused
from oxide_git.fork import fork
from oxide_git.gc import DAY, gc
from oxide_git.reindex import reindex
from oxide_git.rm import rm
from oxide_git.undo import undo

from .conftest import NOW_MS, fsck_clean, git, make_ctx, oxide
from .test_history import _session


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
    assert sessionlog.load(ctx.repo.git, s.id).count == 4
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
    assert sessionlog.load(ctx.repo.git, f1.id).count == 2
    assert sessionlog.load(ctx.repo.git, f2.id).count == 2
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
    assert "is gone" in e.value.message
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
