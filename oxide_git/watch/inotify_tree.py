"""Recursive inotify watches on whole worktrees (Linux), set from one walk of each tree.

watchdog's recursive inotify watch costs 6.0 s on a worktree of 142,422 folders (1M files), of
which the walk is 2.3 s: the rest is its per-folder bookkeeping. `watch` must set every watch
before it takes its baseline `git status` (a change made between a folder's listing and its
watch would never be journaled), so that cost comes before it watches anything. Here a folder
costs one ``inotify_add_watch`` and one dict entry, on one inotify descriptor shared by every
tree, read by one thread that forwards each changed path (``forward``), in the kernel's order; a
big tree is walked on both cores (``inotify_walk``). At 1M files: 1.7–2.2 s for the watches,
54 MB resident for the daemon (watchdog: 104 MB).

What it forwards is what `watch` journals: a file created, written, closed after writing,
changed in mode, deleted or moved (both names); a folder created, deleted or moved (its path: the
journal reads a folder as everything in it). A folder that appears is watched at once and
everything already in it forwarded, as it may have been written before its watch. A root that
is deleted or moved away is said (``gone``), and an overflow of the kernel's queue too
(``overflowed``: events were lost). When the kernel's watch limit is reached for a tree, none of
it is watched (``WatchLimit``, with the fix), since a tree watched in part would lose events
without a sound.

Agents' stores (a few folders) stay with watchdog, as does every tree off Linux.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

from oxide_git.watch.inotify_walk import (
    IN_ATTRIB,
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_IGNORED,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    IN_Q_OVERFLOW,
    LIMIT_EXIT,
    MASK,
    SHARE_AFTER,
    records,
    walk,
)
from oxide_git.watch.inotify_walk import libc as _libc

_FILE_EVENTS = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of NUL-padded name)
_SEP = os.sep.encode()
LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"


_Helper = tuple[subprocess.Popen[bytes], threading.Thread, list[bytes]]  # the process, its reader, output


class WatchLimit(OSError):
    """The kernel's limit on inotify watches was reached (ENOSPC)."""


def limit_hint() -> str:
    try:
        with open(LIMIT_FILE) as f:
            now = f" (now {int(f.read())})"
    except (OSError, ValueError):
        now = ""
    return (f"the kernel's limit on inotify watches{now} is reached: raise it with "
            "`sudo sysctl fs.inotify.max_user_watches=1048576` (and in /etc/sysctl.conf to keep it)")


class TreeWatch:
    """Every folder of each root watched; ``forward(path)`` for each change, from one thread."""

    def __init__(self, forward: Callable[[str], None], gone: Callable[[str], None],
                 overflowed: Callable[[], None], log: Callable[[str], None]) -> None:
        lib = _libc()
        if lib is None:
            raise OSError("inotify is not available here")
        self._lib = lib
        self._fd = lib.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._wake_r, self._wake_w = os.pipe()
        self.forward, self.gone, self.overflowed, self.log = forward, gone, overflowed, log
        self._dir: dict[int, bytes] = {}  # watch descriptor -> folder
        self._wd: dict[bytes, int] = {}  # folder -> watch descriptor
        self._roots: set[bytes] = set()
        # the maps: the reader adds folders, `watch` adds roots (held a folder at a time, so the
        # reader goes on while a big tree is walked)
        self._lock = threading.RLock()
        self._thread = threading.Thread(target=self._read, name="oxide-inotify", daemon=True)
        self._stopping = False
        self._pending: list[tuple[int, int, bytes]] | None = None  # held while a root is walked

    # watches -------------------------------------------------------------------------------

    def add_root(self, root: str) -> str:
        """Watch every folder under ``root`` (raises when the root itself cannot be watched)."""
        top = os.fsencode(root)
        with self._lock:
            self._roots.add(top)
            self._pending = []  # events of folders watched but not registered yet wait here
        try:
            self._add_tree(top, emit=False, root=True)
        except OSError:
            with self._lock:
                self._roots.discard(top)
                self._drop_under(top)
            raise
        finally:
            with self._lock:
                pending, self._pending = self._pending or [], None
                for event in pending:
                    self._one(*event)
        return root

    def remove_root(self, root: str) -> None:
        top = os.fsencode(root)
        with self._lock:
            self._roots.discard(top)
            self._drop_under(top)

    def _add_tree(self, top: bytes, *, emit: bool, root: bool = False) -> None:
        """Watch ``top`` and the folders under it; with ``emit``, forward every path found, as
        it may have changed before its watch. A root past ``SHARE_AFTER`` folders is walked on
        both cores (``inotify_walk``)."""
        stack = [top]
        on_entry = (lambda p: self.forward(os.fsdecode(p))) if emit else None
        self._register(walk(self._lib, self._fd, MASK, stack, on_entry=on_entry,
                            limit=SHARE_AFTER if root else None), top if root else None)
        if not stack:
            return
        theirs, mine = stack[1::2], stack[0::2]
        helper = self._helper(theirs)
        self._register(walk(self._lib, self._fd, MASK, mine if helper else stack), None)
        if helper is not None:
            self._merge(helper, theirs)

    def _register(self, walked: Iterator[tuple[int, bytes]], root: bytes | None) -> None:
        try:
            for wd, d in walked:
                if wd < 0:
                    if d == root:
                        raise OSError(-wd, f"cannot watch {os.fsdecode(d)}: {os.strerror(-wd)}")
                    continue
                with self._lock:
                    self._known(wd, d)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                raise WatchLimit(e.errno, limit_hint()) from None
            raise

    def _known(self, wd: int, d: bytes) -> None:
        old = self._dir.get(wd)
        if old is not None and old != d:
            self._wd.pop(old, None)  # the same folder, moved: known by its new name
        self._dir[wd], self._wd[d] = d, wd

    def _helper(self, folders: list[bytes]) -> _Helper | None:
        """Start a helper walking ``folders`` on our descriptor (None: it could not start)."""
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "oxide_git.watch.inotify_walk", str(self._fd)], pass_fds=(self._fd,),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as e:
            self.log(f"walking alone: no helper ({e})")
            return None
        got: list[bytes] = []  # its output, read while we walk our half (a pipe holds 64 KB)
        t = threading.Thread(target=lambda: got.append(proc.communicate(b"\0".join(folders))[0]),
                             daemon=True)
        t.start()
        return proc, t, got

    def _merge(self, helper: _Helper, folders: list[bytes]) -> None:
        proc, t, got = helper
        t.join()
        with self._lock:
            for wd, d in records(got[0] if got else b""):
                self._known(wd, d)
        if proc.returncode == LIMIT_EXIT:
            raise WatchLimit(errno.ENOSPC, limit_hint())
        if proc.returncode != 0:  # walk its share here (what it watched is kept: the same watches)
            self.log(f"the walk's helper ended with status {proc.returncode}; walking alone")
            self._register(walk(self._lib, self._fd, MASK, list(folders)), None)

    def _drop_under(self, top: bytes) -> None:
        prefix = top + _SEP
        rm = self._lib.inotify_rm_watch
        for d in [d for d in self._wd if d == top or d.startswith(prefix)]:
            wd = self._wd.pop(d)
            self._dir.pop(wd, None)
            rm(self._fd, wd)

    def watched(self) -> int:
        return len(self._dir)

    # the reader ----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stopping = True
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def join(self, timeout: float | None = None) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout)
        if not self._thread.is_alive():
            for fd in (self._fd, self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._fd = -1

    def _read(self) -> None:
        poll = select.poll()
        poll.register(self._fd, select.POLLIN)
        poll.register(self._wake_r, select.POLLIN)
        while not self._stopping:
            try:
                if any(fd == self._wake_r for fd, _ in poll.poll()):
                    return
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                continue
            except OSError as e:
                self.log(f"the inotify reader stopped: {e}")
                return
            try:
                self._dispatch(data)
            except Exception as e:  # a path we cannot forward must not end the watch
                self.log(f"inotify events dropped: {e!r}")
                self.overflowed()

    def _dispatch(self, data: bytes) -> None:
        pos, n = 0, len(data)
        while pos + _HEADER.size <= n:
            wd, mask, _cookie, size = _HEADER.unpack_from(data, pos)
            name = data[pos + _HEADER.size:pos + _HEADER.size + size].rstrip(b"\0")
            pos += _HEADER.size + size
            if mask & IN_Q_OVERFLOW:
                self.overflowed()
                continue
            with self._lock:
                self._one(wd, mask, name)

    def _one(self, wd: int, mask: int, name: bytes) -> None:
        d = self._dir.get(wd)
        if d is None:
            if self._pending is not None:  # a folder watched, not registered yet (or the helper's)
                self._pending.append((wd, mask, name))
            return
        if mask & IN_IGNORED:  # the folder is gone (or its watch was removed)
            self._dir.pop(wd, None)
            if self._wd.get(d) == wd:
                del self._wd[d]
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            if d in self._roots:
                self.gone(os.fsdecode(d))
                self.forward(os.fsdecode(d))
            return
        path = d + _SEP + name if name else d
        if mask & IN_ISDIR:
            if mask & (IN_CREATE | IN_MOVED_TO):
                self.forward(os.fsdecode(path))
                try:
                    self._add_tree(path, emit=True)
                except WatchLimit as e:  # the tree is watched in part: not to be trusted
                    self.log(f"{os.fsdecode(path)} is not watched: {e.strerror}")
                    for top in self._roots:
                        if path.startswith(top + _SEP):
                            self.gone(os.fsdecode(top))  # watched anew, or not at all
            elif mask & (IN_DELETE | IN_MOVED_FROM):
                self.forward(os.fsdecode(path))
                if mask & IN_MOVED_FROM:  # out of the tree, or back under a new name
                    self._drop_under(path)
        elif mask & _FILE_EVENTS:
            self.forward(os.fsdecode(path))
