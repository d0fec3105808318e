"""The worktrees' inotify watches (``inotify_tree``), on real folders and the real kernel queue."""

from __future__ import annotations

import os
import queue
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from oxide_git.watch.inotify_tree import TreeWatch
from tests.conftest import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


class Seen:
    def __init__(self) -> None:
        self.paths: queue.Queue[str] = queue.Queue()
        self.gone: list[str] = []
        self.overflows = threading.Event()
        self.logged: list[str] = []
        self.got: set[str] = set()

    def watch(self) -> TreeWatch:
        return TreeWatch(self.paths.put, self.gone.append, self.overflows.set, self.logged.append)

    def has(self, *paths: Path) -> bool:
        while True:
            try:
                self.got.add(self.paths.get_nowait())
            except queue.Empty:
                break
        return {str(p) for p in paths} <= self.got


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Path, Seen, TreeWatch]]:
    root = tmp_path / "wt"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "old.txt").write_text("old\n")
    seen = Seen()
    w = seen.watch()
    w.add_root(str(root))
    w.start()
    try:
        yield root, seen, w
    finally:
        w.stop()
        w.join(5)
        assert not w.is_alive()


def test_every_kind_of_change_deep_in_the_tree_is_forwarded(tree: tuple[Path, Seen, TreeWatch]) -> None:
    root, seen, w = tree
    assert w.watched() == 3  # wt, a, a/b
    deep = root / "a" / "b"
    (deep / "new.txt").write_text("new\n")
    (deep / "old.txt").write_text("changed\n")
    os.chmod(deep / "new.txt", 0o755)
    (deep / "new.txt").rename(deep / "renamed.txt")
    (deep / "old.txt").unlink()
    wait_for(lambda: seen.has(deep / "new.txt", deep / "old.txt", deep / "renamed.txt"))
    assert not seen.gone and not seen.overflows.is_set()


def test_a_new_folder_is_watched_and_what_it_held_before_its_watch_is_forwarded(
        tree: tuple[Path, Seen, TreeWatch]) -> None:
    root, seen, w = tree
    made = root / "n1" / "n2" / "n3"
    made.mkdir(parents=True)
    (made / "early.txt").write_text("written before any watch on n3 could be set\n")
    wait_for(lambda: seen.has(root / "n1", made / "early.txt"))
    (made / "later.txt").write_text("seen through n3's own watch\n")
    wait_for(lambda: seen.has(made / "later.txt"))
    assert w.watched() == 6


def test_a_folder_moved_inside_the_tree_is_known_by_its_new_name_and_one_moved_out_is_let_go(
        tree: tuple[Path, Seen, TreeWatch], tmp_path: Path) -> None:
    root, seen, w = tree
    (root / "a").rename(root / "c")
    wait_for(lambda: seen.has(root / "a", root / "c", root / "c" / "b" / "old.txt"))
    (root / "c" / "b" / "after.txt").write_text("x\n")
    wait_for(lambda: seen.has(root / "c" / "b" / "after.txt"))
    assert w.watched() == 3
    outside = tmp_path / "outside"
    (root / "c").rename(outside)
    wait_for(lambda: seen.has(root / "c") and w.watched() == 1)
    (outside / "b" / "not-ours.txt").write_text("x\n")
    (root / "still-ours.txt").write_text("x\n")
    wait_for(lambda: seen.has(root / "still-ours.txt"))
    assert not any("not-ours" in p for p in seen.got)


def test_a_deleted_root_is_said_and_its_watches_end(tree: tuple[Path, Seen, TreeWatch]) -> None:
    root, seen, w = tree
    shutil.rmtree(root)
    wait_for(lambda: seen.gone == [str(root)])
    wait_for(lambda: w.watched() == 0)
    w.remove_root(str(root))


def test_a_queue_overflow_is_said(tmp_path: Path) -> None:
    """The kernel queues 16,384 events by default (``max_queued_events``): more, unread, and it
    drops the rest and says so."""
    root = tmp_path / "wt"
    root.mkdir()
    seen = Seen()
    w = seen.watch()
    w.add_root(str(root))
    try:
        limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        for i in range(limit // 2 + 100):  # IN_CREATE and IN_CLOSE_WRITE each, nobody reading
            os.close(os.open(root / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o644))
        w.start()
        wait_for(seen.overflows.is_set)
    finally:
        w.stop()
        w.join(5)


def test_a_root_that_is_not_a_folder_cannot_be_watched(tmp_path: Path) -> None:
    seen = Seen()
    w = seen.watch()
    (tmp_path / "file").write_text("x\n")
    for bad in (tmp_path / "file", tmp_path / "missing"):
        with pytest.raises(OSError, match="cannot watch"):
            w.add_root(str(bad))
    assert w.watched() == 0
    w.join(0)


def _wide_tree(root: Path, n: int) -> list[Path]:
    """``n`` folders two deep (past ``SHARE_AFTER``: the walk is shared with a helper)."""
    leaves = [root / f"p{i % 40}" / f"c{i}" for i in range(n)]
    for leaf in leaves:
        leaf.mkdir(parents=True)
    return leaves


@pytest.mark.parametrize("helper", ["runs", "fails"])
def test_a_big_tree_is_walked_with_a_helper_and_every_folder_is_watched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: str) -> None:
    from oxide_git.watch.inotify_walk import SHARE_AFTER

    root = tmp_path / "wt"
    leaves = _wide_tree(root, SHARE_AFTER + 1_000)
    seen = Seen()
    w = seen.watch()
    if helper == "fails":  # the helper finds no inotify and ends: its share is walked here
        monkeypatch.setenv("OXIDE_WATCH_INOTIFY", "0")
    w.add_root(str(root))
    w.start()
    try:
        assert w.watched() == 1 + 40 + len(leaves)
        picks = [*leaves[::97], leaves[-1]]
        for leaf in picks:
            (leaf / "x.txt").write_text("x\n")
        wait_for(lambda: seen.has(*[leaf / "x.txt" for leaf in picks]))
        helped = "walking alone" in "\n".join(seen.logged)
        assert helped == (helper == "fails"), seen.logged
    finally:
        w.stop()
        w.join(5)
