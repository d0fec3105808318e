"""The kept answers of `git oxide blame` (``blame_cache``): byte for byte what the full command
prints, in every form, and never once anything it depends on moved (a checkpoint, a commit, an
edit, a touch, an import, a note)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from oxide_git.blame import cache as blame_cache
from tests.blame.test_blame_history import commit, work  # noqa: F401 - the fixture
from tests.blame_helpers import Clock, FakeAgent, human_edit
from tests.conftest import oxide

FORMS = ([], ["--json"], ["--porcelain"], ["--summary"], ["--summary", "--json"], ["-L", "2,3"])
COLD = {"OXIDE_BLAME_CACHE": "0"}


def _blame(repo: Path, *args: str, cold: bool = False) -> str:
    old = os.environ.copy()
    try:
        if cold:
            os.environ.update(COLD)
        return oxide(repo, "blame", *args).stdout
    finally:
        os.environ.clear()
        os.environ.update(old)


def _kept(repo: Path, *args: str) -> object:
    """What the cache holds for ``blame ARGS`` in ``repo`` now (None: nothing valid)."""
    path, rev, lines, form = blame_cache.parse(list(args)) or ("", None, None, "")
    s = blame_cache.slot(str(repo), path, rev, lines, form)
    return None if s is None else blame_cache.lookup(s)


def _settle() -> None:
    time.sleep(blame_cache.RACY_NS / 1e9 + 0.05)  # past the racy window of the last write


def _check(repo: Path, *args: str) -> str:
    """The cold answer; the first warm run keeps it, the second is served from the cache."""
    cold = _blame(repo, *args, "app.txt", cold=True)
    _settle()
    assert _blame(repo, *args, "app.txt") == cold
    assert _kept(repo, *args, "app.txt") is not None, "the answer was not kept"
    assert _blame(repo, *args, "app.txt") == cold
    return cold


@pytest.fixture
def history(work: tuple[Path, Clock, FakeAgent]) -> tuple[Path, Clock, FakeAgent]:  # noqa: F811
    repo, clock, a = work
    a.write("app.txt", "one\ntwo\n")
    a.say("done")
    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\n")
    commit(repo, "-m", "app")
    a.prompt("more")
    a.edit("app.txt", "three\n", "three\nfour\n")  # not committed
    return repo, clock, a


def test_every_form_is_served_as_the_command_prints_it(history: tuple[Path, Clock, FakeAgent]) -> None:
    repo, _, _ = history
    for args in FORMS:
        _check(repo, *args)


def test_any_change_it_depends_on_is_a_new_answer(history: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = history
    first = _check(repo, "--porcelain")

    a.prompt("again")  # a new checkpoint: the index moves
    assert _kept(repo, "--porcelain", "app.txt") is None
    a.edit("app.txt", "four\n", "four\nfive\n")
    second = _check(repo, "--porcelain")
    assert second != first and "\tfive\n" in second

    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\nfour\nfive\nsix\n")  # an edit of yours
    assert _kept(repo, "--porcelain", "app.txt") is None
    third = _check(repo, "--porcelain")
    assert "\tsix\n" in third

    st = os.stat(repo / "app.txt")  # the same bytes, another mtime: a human line's time moves
    os.utime(repo / "app.txt", ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))
    assert _kept(repo, "--porcelain", "app.txt") is None
    fourth = _check(repo, "--porcelain")
    assert fourth != third

    commit(repo, "-m", "the rest")  # HEAD moves, a note is written
    assert _kept(repo, "--porcelain", "app.txt") is None
    fifth = _check(repo, "--porcelain")
    assert "commit " in fifth.split("\tsix\n")[0].rsplit("line ", 1)[1]


def test_a_broken_or_foreign_cache_file_is_not_trusted(history: tuple[Path, Clock, FakeAgent]) -> None:
    repo, _, _ = history
    cold = _check(repo)
    [kept] = (repo / ".git" / "oxide" / "cache" / "blame").iterdir()
    kept.write_bytes(b"not marshal")
    assert _blame(repo, "app.txt") == cold
    assert _kept(repo, "app.txt") is not None  # kept again by that run


def test_nothing_is_kept_when_the_key_moves_or_is_racy(history: tuple[Path, Clock, FakeAgent]) -> None:
    repo, _, _ = history
    before = blame_cache.slot(str(repo), "app.txt", None, None, "text")
    assert before is not None
    blame_cache.store(before, before, [], ("text", []))  # the index was written just now: racy
    assert blame_cache.lookup(before) is None
    _settle()
    now = blame_cache.slot(str(repo), "app.txt", None, None, "text")
    assert now is not None
    (repo / "app.txt").write_text("changed\n")
    moved = blame_cache.slot(str(repo), "app.txt", None, None, "text")
    blame_cache.store(now, moved, [], ("text", []))  # the file changed during the run
    assert blame_cache.lookup(now) is None
    blame_cache.store(now, now, [], ("text", []))
    assert blame_cache.lookup(now) == ("text", [])


def test_what_the_key_cannot_see_is_not_cached(history: tuple[Path, Clock, FakeAgent]) -> None:
    repo, _, _ = history
    assert blame_cache.slot(str(repo), "app.txt", "HEAD", None, "text") is None  # a revision
    with open(repo / ".git" / "config", "a") as f:
        f.write("[blame]\n\tignoreRevsFile = .git-blame-ignore-revs\n")
    assert blame_cache.slot(str(repo), "app.txt", None, None, "text") is None


def test_kept_after_a_command_that_closed_the_index(history: tuple[Path, Clock, FakeAgent]) -> None:
    """SQLite removes the empty WAL when the last connection closes and makes it again at the
    next open: that is no change to what the index says."""
    repo, _, _ = history
    oxide(repo, "list")  # closes the index: no WAL left
    _settle()
    cold = _blame(repo, "app.txt")
    assert _kept(repo, "app.txt") is not None
    assert _blame(repo, "app.txt") == cold


def test_the_git_blame_started_first_is_ended_when_the_kept_answer_serves(repo: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script starts `git blame` before looking for a kept answer; one found, that
    `git blame` is ended and reaped (nothing left running, no pipe left open)."""
    from oxide_git.blame import prefetch as blame_prefetch

    monkeypatch.chdir(repo)
    monkeypatch.delenv("GIT_DIR", raising=False)
    blame_prefetch.start(["README.md"])
    started = blame_prefetch._started
    assert started is not None
    _, pid, out_fd, err_fd = started
    blame_prefetch.cancel()
    assert blame_prefetch._started is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped
    for fd in (out_fd, err_fd):
        with pytest.raises(OSError):
            os.fstat(fd)
    blame_prefetch.cancel()  # none started: nothing to do
