"""What changed in a worktree, according to git itself (no pygit2 here: this runs first, hot).

One ``git status --porcelain=v2 -z --untracked-files=all`` pass, run with ``--no-optional-locks``
so that git's opportunistic index refresh never writes the user's index file. The console script
may have started it before anything was imported (``prefetch``); ``run`` takes that pass.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from oxide_git.core.errors import OxideError
from oxide_git.git import prefetch as early_pass
from oxide_git.git.prefetch import STATUS_ARGS as _STATUS_ARGS
from oxide_git.git.repo import clean_git_env


@dataclass
class Status:
    """Paths (relative to the worktree top, POSIX) that may differ between HEAD and the worktree."""

    changed: set[str] = field(default_factory=set)  # tracked or staged paths git listed
    untracked: set[str] = field(default_factory=set)  # untracked, not ignored
    submodules: set[str] = field(default_factory=set)
    unmerged: set[str] = field(default_factory=set)

    @property
    def paths(self) -> set[str]:
        return self.changed | self.untracked


def start(workdir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        _STATUS_ARGS, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=clean_git_env(),
    )


def collect(proc: subprocess.Popen[bytes]) -> Status:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise OxideError(f"git status failed: {err.decode(errors='replace').strip()}")
    return parse(out)


def run(workdir: Path) -> Status:
    early = early_pass.take(str(workdir))  # started by the console script in this worktree
    if early is not None:
        rc, out, _ = _wait(*early)
        if rc == 0:
            return parse(out)  # else: git once more, as usual, for its error message
    return collect(start(workdir))


def _wait(pid: int, out_fd: int, err_fd: int) -> tuple[int, bytes, bytes]:
    """Read a spawned git's output (both pipes at once: neither may fill up) and its exit code."""
    import selectors

    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                data = os.read(key.fd, 1 << 20)
                if data:
                    chunks[key.fd].append(data)
                else:
                    sel.unregister(key.fd)
    os.close(out_fd)
    os.close(err_fd)
    _, code = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(code), b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def parse(out: bytes) -> Status:
    st = Status()
    fields = out.split(b"\0")
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        if not rec:
            continue
        kind = rec[:1]
        if kind == b"1":
            parts = rec.split(b" ", 8)
            path = parts[8].decode("utf-8", "surrogateescape")
            st.changed.add(path)
            if parts[2].startswith(b"S"):
                st.submodules.add(path)
        elif kind == b"2":
            parts = rec.split(b" ", 9)
            st.changed.add(parts[9].decode("utf-8", "surrogateescape"))
            st.changed.add(fields[i].decode("utf-8", "surrogateescape"))  # the original path
            i += 1
        elif kind == b"u":
            parts = rec.split(b" ", 10)
            path = parts[10].decode("utf-8", "surrogateescape")
            st.changed.add(path)
            st.unmerged.add(path)
        elif kind == b"?":
            st.untracked.add(rec[2:].decode("utf-8", "surrogateescape"))
    return st
