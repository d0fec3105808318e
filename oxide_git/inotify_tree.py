"""Recursive inotify watches on whole worktrees (Linux), set from one walk of each tree.

watchdog's recursive inotify watch costs 6.0 s on a worktree of 142,422 folders (1M files), of
which the walk is 2.3 s: the rest is its per-folder bookkeeping. `watch` must set every watch
before it takes its baseline `git status` (a change made between a folder's listing and its
watch would never be journaled), so that cost comes before it watches anything. Here a folder
costs one ``inotify_add_watch`` and one dict entry, on one inotify descriptor shared by every
tree, read by one thread that forwards each changed path (``forward``), in the kernel's order.

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
import ctypes.util
import errno
import os
import select
import struct
import sys
import threading
from collections.abc import Callable

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_FILE_EVENTS = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of NUL-padded name)
_SEP = os.sep.encode()
LIMIT_FILE = "/proc/sys/fs/inotify/max_user_watches"


class WatchLimit(OSError):
    """The kernel's limit on inotify watches was reached (ENOSPC)."""


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux") or os.environ.get("OXIDE_WATCH_INOTIFY") == "0":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        return libc
    except (OSError, AttributeError):
        return None


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

    # watches -------------------------------------------------------------------------------

    def add_root(self, root: str) -> str:
        """Watch every folder under ``root`` (raises when the root itself cannot be watched)."""
        top = os.fsencode(root)
        with self._lock:
            self._roots.add(top)
        try:
            self._add_tree(top, emit=False, root=True)
        except OSError:
            with self._lock:
                self._roots.discard(top)
                self._drop_under(top)
            raise
        return root

    def remove_root(self, root: str) -> None:
        top = os.fsencode(root)
        with self._lock:
            self._roots.discard(top)
            self._drop_under(top)

    def _add_tree(self, top: bytes, *, emit: bool, root: bool = False) -> None:
        """Watch ``top`` and the folders under it (the walk is the cost: one ``scandir`` each);
        with ``emit``, forward every path found, as it may have changed before its watch."""
        add, fd = self._lib.inotify_add_watch, self._fd
        stack = [top]
        while stack:
            d = stack.pop()
            with self._lock:
                wd = add(fd, d, MASK)
                if wd < 0:
                    err = ctypes.get_errno()
                    if err == errno.ENOSPC:
                        raise WatchLimit(err, limit_hint())
                    if d == top and root:
                        raise OSError(err, f"cannot watch {os.fsdecode(d)}: {os.strerror(err)}")
                    continue  # gone or unreadable meanwhile: its parent's event said so
                old = self._dir.get(wd)
                if old is not None and old != d:
                    self._wd.pop(old, None)  # the same folder, moved: known by its new name
                self._dir[wd], self._wd[d] = d, wd
            try:
                with os.scandir(d) as it:
                    for e in it:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        if emit:
                            self.forward(os.fsdecode(e.path))
            except OSError:
                pass

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
                d = self._dir.get(wd)
                if d is None:
                    continue
                if mask & IN_IGNORED:  # the folder is gone (or its watch was removed)
                    self._dir.pop(wd, None)
                    if self._wd.get(d) == wd:
                        del self._wd[d]
                    continue
                if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                    if d in self._roots:
                        self.gone(os.fsdecode(d))
                        self.forward(os.fsdecode(d))
                    continue
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
