"""`git blame` for `git oxide blame FILE` spawned first thing, with nothing imported but ``os``.

The committed lines' commits come from `git blame`, which is most of the command's time on a
long history; started before click and pygit2 are imported, it runs while Python starts.
``take`` hands its output over when it was started for the same file, revision and lines as
``blame_porcelain.git_blame`` asks for (anything else is ended and git runs again as usual).
"""

from __future__ import annotations

import os

GIT_VARS = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_PREFIX", "GIT_COMMON_DIR")
_FLAGS = ("--porcelain", "--json", "--summary")
_started: tuple[tuple[str, str | None, str | None], int, int, int] | None = None


def _plan(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """(absolute path, rev, -L value) of a plain `blame FILE` command line, else None."""
    path = rev = lines = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _FLAGS:
            i += 1
        elif a in ("-L", "--rev") and i + 1 < len(argv):
            if a == "-L":
                lines = argv[i + 1]
            else:
                rev = argv[i + 1]
            i += 2
        elif a.startswith("-") or path is not None:
            return None  # --range, -h, or what click will have to say something about
        else:
            path = a
            i += 1
    if path is None or (lines is not None and not _simple_range(lines)):
        return None
    return os.path.abspath(path), rev, lines


def _simple_range(value: str) -> bool:
    first, _, last = value.partition(",")
    return first.isdigit() and (not last or last.isdigit() or (last[:1] == "+" and last[1:].isdigit()))


def start(argv: list[str]) -> None:
    global _started
    plan = _plan(argv)
    if plan is None or _started is not None or not hasattr(os, "posix_spawnp") or os.environ.get("GIT_DIR"):
        return
    path, rev, lines = plan
    args = ["git", "blame", "--porcelain"]
    if lines:
        first, _, last = lines.partition(",")
        end = str(int(first) + int(last[1:]) - 1) if last.startswith("+") else (last or str(1 << 31))
        args += ["-L", f"{first},{end}"]
    args += [rev] if rev else []
    args += ["--", path]
    env = {k: v for k, v in os.environ.items() if k not in GIT_VARS}
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawnp("git", args, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)])
        _started = (plan, pid, out_r, err_r)
    except OSError:
        os.close(out_r)
        os.close(err_r)
    finally:
        os.close(out_w)
        os.close(err_w)


def take(path: str, rev: str | None, lines: tuple[int, int] | None) -> tuple[int, bytes, bytes] | None:
    """(exit status, stdout, stderr) of the `git blame` started for this file, revision and
    lines; None when none was (one for anything else is ended)."""
    global _started
    started, _started = _started, None
    if started is None:
        return None
    (p, r, ln), pid, out_fd, err_fd = started
    want_lines = None
    if ln is not None:
        first, _, last = ln.partition(",")
        end = int(first) + int(last[1:]) - 1 if last.startswith("+") else int(last or 1 << 31)
        want_lines = (int(first), end)
    if os.path.realpath(p) != os.path.realpath(path) or r != rev or want_lines != lines:
        os.close(out_fd)
        os.close(err_fd)
        _reap(pid)
        return None
    out = _read_all(out_fd)
    err = _read_all(err_fd)
    return _reap(pid), out, err


def cancel() -> None:
    """End the `git blame` started, if any (its answer is not needed)."""
    global _started
    started, _started = _started, None
    if started is None:
        return
    _, pid, out_fd, err_fd = started
    try:
        os.kill(pid, 9)  # SIGKILL: it holds no lock and writes nothing but its output
    except OSError:
        pass
    os.close(out_fd)
    os.close(err_fd)
    _reap(pid)


def _read_all(fd: int) -> bytes:
    chunks = []
    try:
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(fd)
    return b"".join(chunks)


def _reap(pid: int) -> int:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return 1
    return os.waitstatus_to_exitcode(status)
