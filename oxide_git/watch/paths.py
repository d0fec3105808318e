"""What `watch` looks at: the folders the agents write sessions into, and what a changed path there
means (a database's own file for a change to its write-ahead log; a file named like a session)."""

from __future__ import annotations

import os
import stat
from typing import Any

from oxide_git.store.context import Context


def store_roots(ctx: Context) -> dict[str, str]:
    """The folders the agents write their sessions into (existing or not) -> agent name."""
    from oxide_git.agents import watch_roots

    return watch_roots(_agent_env(ctx))


def inode(path: str) -> tuple[int, int] | None:
    """(device, inode) of the folder at ``path``, or None when there is no folder there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


_SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def database_of(path: str) -> str:
    """A SQLite database's own path for a change to its write-ahead log or journal: a database an
    agent keeps open (OpenCode's) writes its turns to ``-wal``, not to the file discover names."""
    for suffix in _SQLITE_SIDECARS:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def may_hold_sessions(agent: str, path: str) -> bool:
    """Is ``path`` named like the agent's session files (so a new one is worth a discover)? Lock
    files, caches and metadata under a store do not make the daemon list every session again."""
    from fnmatch import fnmatch

    from oxide_git.agents import file_patterns

    name = os.path.basename(path)
    return any(fnmatch(name, pat) for pat in file_patterns(agent))


def _agent_env(ctx: Context) -> Any:
    from oxide_git.imports.importing import agent_env

    return agent_env(ctx)
