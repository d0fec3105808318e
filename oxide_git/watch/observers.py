"""What `watch` watches, and with what: the worktrees with ``inotify_tree`` (Linux), the agents'
stores (and every tree elsewhere) with watchdog. Every change arrives as a path on one queue.

A folder deleted and made again between two rescans is another folder: the old watch saw its
deletion and nothing since, so it is watched anew (known by the deletion event, as the new folder
may get the old one's inode number). A folder that cannot be watched is tried again after
``RETRY_S``, not at every rescan (a tree's walk can take seconds).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from oxide_git.watch.paths import inode

RETRY_S = 30.0


class Observers:
    def __init__(self, events: queue.Queue[str], log: Callable[[str], None]) -> None:
        from watchdog import events as ev
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        self.log = log
        self.deleted: set[str] = set()  # watched folders the kernel said were deleted
        deleted = self.deleted

        class _Forward(FileSystemEventHandler):  # the thin adapter: paths only
            def on_any_event(self, event: Any) -> None:
                if event.is_directory and event.event_type in ("modified", "opened", "closed_no_write"):
                    return
                if event.event_type in ("opened", "closed_no_write"):
                    return
                if event.is_directory and event.event_type == "deleted":
                    deleted.add(os.fsdecode(event.src_path))  # a root's watch dies with it
                events.put(os.fsdecode(event.src_path))
                if getattr(event, "dest_path", ""):
                    events.put(os.fsdecode(event.dest_path))

        self.handler = _Forward()
        # only what can change a file: no open/close-without-write events, which a `git status`
        # reading 100,000 files would turn into a flood that overflows the kernel's queue
        self.event_filter = [ev.FileCreatedEvent, ev.DirCreatedEvent, ev.FileDeletedEvent,
                             ev.DirDeletedEvent, ev.FileMovedEvent, ev.DirMovedEvent,
                             ev.FileModifiedEvent, ev.FileClosedEvent]
        self.overflowed = threading.Event()  # events were lost: the journals cannot be trusted
        self.observer = Observer()
        self.trees: Any = None  # inotify_tree.TreeWatch, where inotify is
        try:
            from oxide_git.watch.inotify_tree import TreeWatch

            self.trees = TreeWatch(events.put, deleted.add, self.overflowed.set, log)
        except OSError:
            pass
        self.watches: dict[str, Any] = {}  # path -> its watch (watchdog's, or the path: a tree's)
        self.inodes: dict[str, tuple[int, int]] = {}  # watched folder -> (st_dev, st_ino) then
        self.failed: dict[str, float] = {}  # path -> when it may be tried again

    def schedule(self, path: str, tree: bool) -> bool:
        """Watch ``path`` if it exists (True when newly watched); forget it when it is gone.
        ``tree``: a worktree (a walk of many folders), else an agent's store."""
        ino = inode(path)
        if path in self.watches:
            died = path in self.deleted
            self.deleted.discard(path)
            if ino is not None and ino == self.inodes.get(path) and not died:
                return False
            self._unwatch(self.watches.pop(path))
            if ino is None:
                self.log(f"{path} is gone; watching for it to come back")
                return False
            self.log(f"{path} was made again; watching the new one")
        if ino is not None and time.monotonic() >= self.failed.get(path, 0.0):
            try:
                if tree and self.trees is not None:
                    self.watches[path] = self.trees.add_root(path)
                else:
                    self.watches[path] = self.observer.schedule(self.handler, path, recursive=True,
                                                                event_filter=self.event_filter)
                self.inodes[path] = ino
                self.failed.pop(path, None)
                return True
            except Exception as e:
                self.failed[path] = time.monotonic() + RETRY_S
                self.log(f"cannot watch {path}: {e}")
        return False

    def _unwatch(self, handle: Any) -> None:
        try:
            if isinstance(handle, str):
                self.trees.remove_root(handle)
            else:
                self.observer.unschedule(handle)
        except Exception:
            pass

    def watching(self, path: str) -> bool:
        """``path`` is watched, by an observer that is running."""
        h = self.watches.get(path)
        if h is None:
            return False
        return bool((self.trees if isinstance(h, str) else self.observer).is_alive())

    def same_queue_tree(self, path: str, inside: str) -> str | None:
        """A watched tree holding the real path ``inside`` whose events come in order with those
        of the tree ``path`` (both inotify_tree's: one descriptor, read in the kernel's order), or
        None (watchdog's watches race each other)."""
        if not isinstance(self.watches.get(path), str):
            return None
        for top, handle in self.watches.items():
            real = os.path.realpath(top)
            if isinstance(handle, str) and (inside == real or inside.startswith(real + os.sep)) \
                    and self.watching(top):
                return top
        return None

    def start(self) -> None:
        self.observer.start()
        if self.trees is not None:
            self.trees.start()

    def stop(self) -> None:
        for o in (self.observer, self.trees):
            if o is not None and o.is_alive():
                o.stop()
                o.join(timeout=5)
        if self.trees is not None:
            self.trees.join(timeout=0)  # its descriptors closed (a reader never started, too)
