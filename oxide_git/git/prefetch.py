"""Start the worktree's `git status` pass first thing, with nothing imported but ``os``.

`rewind` and `undo` snapshot the worktree before anything else, and that one pass over it is
the critical path: every millisecond between the process start and git's start is added to the
command. Finding the repository (pathlib), ``subprocess`` and ``dataclasses`` cost ~25 ms of
imports, so here git is spawned in the current folder and finds the worktree itself (porcelain
paths are relative to the worktree's top from any folder). ``status.run`` takes the process only
for the worktree it was started in, and runs git again if this one failed.
"""

from __future__ import annotations

import os

STATUS_ARGS = [
    "git", "--no-optional-locks", "-c", "core.quotePath=false", "status",
    "--porcelain=v2", "-z", "--untracked-files=all", "--ignore-submodules=none",
]
# What a hook inherits from git: never passed on (git would look at that repository instead).
GIT_VARS = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_PREFIX", "GIT_COMMON_DIR")

_started: tuple[str, int, int, int] | None = None  # (folder, pid, stdout fd, stderr fd)


def start() -> None:
    """Spawn `git status` in the current folder, when that is where the command's worktree is."""
    global _started
    if _started is not None or not hasattr(os, "posix_spawnp") or os.environ.get("GIT_DIR"):
        return  # with GIT_DIR, the repository is not the one of this folder: the usual path
    env = {k: v for k, v in os.environ.items() if k not in GIT_VARS}
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawnp("git", STATUS_ARGS, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)])
        _started = (os.getcwd(), pid, out_r, err_r)
    except OSError:
        os.close(out_r)
        os.close(err_r)
    finally:
        os.close(out_w)
        os.close(err_w)


def take(workdir: str) -> tuple[int, int, int] | None:
    """(pid, stdout fd, stderr fd) of the pass started in ``workdir`` or a folder inside it;
    None if there is none. A pass for another folder is ended."""
    global _started
    started, _started = _started, None
    if started is None:
        return None
    folder, pid, out_fd, err_fd = started
    top = os.path.realpath(workdir)
    here = os.path.realpath(folder)
    if here == top or here.startswith(top.rstrip(os.sep) + os.sep):
        return pid, out_fd, err_fd
    discard(pid, out_fd, err_fd)
    return None


def cancel() -> None:
    """End the pass started, if any, that no command took (one that failed before it got there)."""
    global _started
    started, _started = _started, None
    if started is not None:
        _, pid, out_fd, err_fd = started
        try:
            os.kill(pid, 9)  # SIGKILL: --no-optional-locks, it holds no lock and writes nothing
        except OSError:
            pass
        discard(pid, out_fd, err_fd)


def discard(pid: int, out_fd: int, err_fd: int) -> None:
    os.close(out_fd)
    os.close(err_fd)
    try:
        os.waitpid(pid, 0)  # a closed pipe ends it
    except ChildProcessError:
        pass
