"""What changed in a worktree, according to git itself (no pygit2 here: this runs first, hot).

One ``git status --porcelain=v2 -z --untracked-files=all`` pass, run with ``--no-optional-locks``
so that git's opportunistic index refresh never writes the user's index file. It can be started
before the rest of the program has imported (``start``) and collected later (``collect``).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .errors import OxideError
from .repo import clean_git_env

_STATUS_ARGS = [
    "git", "--no-optional-locks", "-c", "core.quotePath=false", "status",
    "--porcelain=v2", "-z", "--untracked-files=all", "--ignore-submodules=none",
]


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


_PREFETCHED: dict[Path, subprocess.Popen[bytes]] = {}


def prefetch(workdir: Path) -> None:
    """Start the status pass now (before heavy imports); the next ``run`` of ``workdir`` takes it."""
    _PREFETCHED[workdir] = start(workdir)


def run(workdir: Path) -> Status:
    proc = _PREFETCHED.pop(workdir, None)
    return collect(proc if proc is not None else start(workdir))


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
