"""One walk of folders, each watched on an inotify descriptor before it is listed, and the helper
process that walks part of a big tree on the same descriptor, so that a worktree's watches are
set on both cores.

The walk is what a worktree's watches cost (one ``scandir`` and one ``inotify_add_watch`` a
folder; 2.1 s for the 142,840 folders of a 1M-file tree), and `watch` pays it before its baseline
`git status`. Past ``SHARE_AFTER`` folders, half of what is left to walk goes to a helper
(``python -m oxide_git.watch.inotify_walk FD``, the descriptor inherited: its watches are on the same
inotify instance, so their events reach the watcher's reader). It reads the folders to walk,
NUL-separated, on stdin, and writes each folder it watched as (watch descriptor, length, path).
Its exit status 3 means the kernel's limit on watches was reached. The two walks contend in the
kernel, so the gain is small: at 1M files, the daemon's start took 5.28 s with the helper and
5.67 s without (medians of three interleaved starts; the walk alone, 1.7 s, is most of it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from collections.abc import Callable, Iterator
from typing import Any

SHARE_AFTER = 2_000  # folders walked alone before a helper takes half of the rest
RECORD = struct.Struct("iI")  # watch descriptor, length of the path that follows
LIMIT_EXIT = 3

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)


def libc() -> ctypes.CDLL | None:
    """The C library with the inotify calls typed (None: not Linux, or turned off)."""
    if not sys.platform.startswith("linux") or os.environ.get("OXIDE_WATCH_INOTIFY") == "0":
        return None
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        return lib
    except (OSError, AttributeError):
        return None


def walk(lib: Any, fd: int, mask: int, stack: list[bytes], *, limit: int | None = None,
         on_entry: Callable[[bytes], None] | None = None) -> Iterator[tuple[int, bytes]]:
    """(watch descriptor, folder) for each folder of ``stack`` and below, depth first, each
    watched before it is listed; a folder that cannot be watched comes as (-errno, folder). With
    ``limit``, stops after that many and leaves the rest in ``stack``. ``on_entry``: each path
    listed (files and folders). Raises ``ENOSPC`` (the watch limit) as an OSError."""
    add, n = lib.inotify_add_watch, 0
    while stack and (limit is None or n < limit):
        d = stack.pop()
        n += 1
        wd = add(fd, d, mask)
        if wd < 0:
            err = ctypes.get_errno()
            if err == errno.ENOSPC:
                raise OSError(err, os.strerror(err))
            yield -err, d
            continue
        yield wd, d
        try:
            with os.scandir(d) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    if on_entry is not None:
                        on_entry(e.path)
        except OSError:
            pass  # gone or unreadable meanwhile: its parent's event says so


def records(data: bytes) -> Iterator[tuple[int, bytes]]:
    """The helper's output: (watch descriptor, folder); a record cut short ends it."""
    pos, n = 0, len(data)
    while pos + RECORD.size <= n:
        wd, size = RECORD.unpack_from(data, pos)
        pos += RECORD.size
        if pos + size > n:
            return
        yield wd, data[pos:pos + size]
        pos += size


def main(argv: list[str]) -> int:
    lib = libc()
    if lib is None or len(argv) != 1:
        return 2
    fd = int(argv[0])
    stack = [p for p in sys.stdin.buffer.read().split(b"\0") if p]
    out = sys.stdout.buffer
    try:
        for wd, d in walk(lib, fd, MASK, stack):
            if wd >= 0:
                out.write(RECORD.pack(wd, len(d)) + d)
    except OSError:
        out.flush()
        return LIMIT_EXIT
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
