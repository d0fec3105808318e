"""What an agent's parser emits and what a parser or exporter is handed (see the package's
docstring): re-exported by ``oxide_git.agents``, which imports this module when one is first named."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oxide_git.core.model import Message, Session


@dataclass(frozen=True, slots=True)
class FoundSession:
    session: Session


@dataclass(frozen=True, slots=True)
class FoundMessage:
    session_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class Resumable:
    offset: int
    state: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Problem:
    line: int | None
    text: str


@dataclass(frozen=True, slots=True)
class Unknown:
    kind: str  # the record's type as the agent names it, e.g. "event_msg/foo" or "api-request"
    version: str | None = None  # the agent version that wrote it, when the file says


Event = FoundSession | FoundMessage | Resumable | Problem | Unknown


@dataclass(frozen=True, slots=True)
class AgentEnv:
    """Where the agents keep their files, and which project we are in.

    ``environ`` is the process environment as the CLI saw it (CLAUDE_CONFIG_DIR, CODEX_HOME,
    XDG_DATA_HOME...), ``home`` the user's home, ``worktrees`` the top folders of every worktree of
    the repository (a session belongs to the project when its cwd is inside one of them).
    """

    home: Path
    environ: Mapping[str, str]
    worktrees: Sequence[Path] = ()
    project_id: str | None = None

    def belongs(self, cwd: str | None) -> bool:
        """True when ``cwd`` is one of the worktrees or inside one."""
        if not cwd:
            return False
        try:
            p = Path(os.path.normpath(cwd))
        except (TypeError, ValueError):
            return False
        return any(p == w or w in p.parents for w in self.worktrees)


@dataclass(frozen=True, slots=True)
class Export:
    """An agent's files for one session, ready to write, and how to continue it there."""

    files: Mapping[Path, bytes]  # absolute paths in the agent's store -> content
    native_id: str  # the id the agent will know the session by
    command: Sequence[str]  # argv that continues the session, run in ``cwd``
    cwd: str
    lost: Sequence[str] = ()  # what could not be carried over, one sentence each
    # database path -> what the agent module's ``write_database(path, rows, rewound=...)`` writes
    # there in one transaction (OpenCode 1.18 keeps sessions in SQLite, not in files)
    databases: Mapping[Path, Any] = field(default_factory=dict)
    # Files written whole instead of appending ``files`` when the conversation was rewound: the
    # agent's file with the rewound session in place of the longer one it holds (Aider's history).
    rewritten: Mapping[Path, bytes] = field(default_factory=dict)
