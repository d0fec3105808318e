"""The agents git oxide reads and writes: a Protocol and an explicit registry.

An agent module is pure: it turns the agent's own files into model objects (``parse``) and model
objects back into the agent's files (``export``). It never touches git, oxide's SQLite index, the
clock or the terminal; everything it needs arrives as arguments (``AgentEnv``). Adding a fifth agent
means adding one package (``agents/<name>/``, its ``agent`` module the face) and one line in
``AGENT_NAMES``.

Besides the protocol (``discover``, ``parse``, ``export``), a module may define:

- ``FILE_PATTERNS``: the globs ``git oxide import --agent NAME DIR`` looks for (default ``*.jsonl``),
  and ``expand_dir(path) -> list[Path] | None`` when a folder needs more than globbing;
- ``watch_roots(env) -> list[Path]``: the folders (existing or not) the ``watch`` daemon observes
  for this agent; a changed file under one is re-imported as this agent's;
- ``WORKTREE_FILES``: names of files the agent keeps in the worktree itself (Aider's history),
  which ``watch`` imports as this agent's instead of journaling them;
- ``APPEND_EXPORT = True`` when a resume appends to the agent's file instead of writing it whole;
- ``write_database(path, rows, rewound=...)`` when ``Export.databases`` is used.

Agent hooks live in ``oxide_git/hooks/agent_hooks_<name>.py`` (see ``agent_hooks``).

Parsing is a stream of events so that a 200 MB transcript never sits in memory:

- ``FoundSession(session)``: a session begins (or its metadata is now better known; the last one
  wins). ``session.id`` is ``model.session_id_for(agent, native_id, created_at)`` and must stay the
  same when parsing restarts from a ``Resumable`` offset (carry what is needed in its ``state``).
- ``FoundMessage(session_id, message)``: the next message of that session, complete. The store gives
  it the next sequence number of that session and its id.
- ``Resumable(offset, state)``: parsing may restart here later, ``parse(path, offset=offset,
  state=state)``, and will emit exactly the events that followed this point (same ids). An importer
  emits one before each message that is safe to restart at (JSONL: at the start of a line that
  begins a new message; never inside a split response), and a last one at the end of what it
  consumed (never past a trailing partial line).
- ``Problem(line, text)``: something was skipped; parsing goes on.
- ``Unknown(kind, version)``: a record of a type this importer does not know (kept whole as an
  ``other`` part, never dropped); one event per such record, so ``import`` can count and report
  them per type with the agent version that wrote them (format drift is never silent).

Harness context: a message the agent's harness injected rather than the user typed (Codex's
``<environment_context>``, permission and skills instructions, AGENTS.md) keeps its role and gets
``extra["harness"] = True``. It stays in the store; a resume into *another* agent leaves it out and
names it in ``lost`` (one agent's harness must never become another agent's user turns).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: listing agent names must not import the model
    from oxide_git.agents.events import AgentEnv as AgentEnv
    from oxide_git.agents.events import Event as Event
    from oxide_git.agents.events import Export as Export
    from oxide_git.agents.events import FoundMessage as FoundMessage
    from oxide_git.agents.events import FoundSession as FoundSession
    from oxide_git.agents.events import Problem as Problem
    from oxide_git.agents.events import Resumable as Resumable
    from oxide_git.agents.events import Unknown as Unknown
    from oxide_git.core.model import Message, Session

# The events and the values a parser or exporter is handed (dataclasses) are in ``events`` and
# imported when first named: `git oxide blame` replays a tool call through ``file_effects`` and
# ``tools`` (in this package) without importing dataclasses.
_EVENTS = frozenset(("FoundSession", "FoundMessage", "Resumable", "Problem", "Unknown", "Event",
                     "AgentEnv", "Export"))


def __getattr__(name: str) -> Any:
    if name in _EVENTS:
        from oxide_git.agents import events

        value = getattr(events, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")



class Agent(Protocol):
    name: str

    def discover(self, env: AgentEnv) -> list[Path]:
        """The files (or folders) in the agent's store that hold sessions of this project."""
        ...

    def parse(
        self, path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None
    ) -> Iterator[Event]:
        """Events for the sessions in ``path`` (see the module docstring)."""
        ...

    def export(self, session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
        """``session`` in the agent's own format; ``parse`` of the result gives it back."""
        ...


AGENT_NAMES = ("claude", "codex", "opencode", "aider", "copilot", "cline", "pi", "gemini", "qwen")


def agent(name: str) -> Agent:
    """One agent's module, imported on demand: hooks and checkpoints never pay for parsers, and
    importing a Claude transcript does not load the Codex reader."""
    if name not in AGENT_NAMES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}.agent")


def registry() -> dict[str, Agent]:
    """Agent name -> module, every agent."""
    return {n: agent(n) for n in AGENT_NAMES}


def file_patterns(name: str) -> tuple[str, ...]:
    """The globs ``import --agent NAME DIR`` looks for."""
    return tuple(getattr(agent(name), "FILE_PATTERNS", ("*.jsonl",)))


def watch_roots(env: AgentEnv) -> dict[str, str]:
    """Every agent's store folders for ``watch`` (existing or not) -> agent name."""
    out: dict[str, str] = {}
    for name in AGENT_NAMES:
        roots = getattr(agent(name), "watch_roots", None)
        for root in roots(env) if roots else ():
            out.setdefault(str(root), name)
    return out


def worktree_files() -> dict[str, str]:
    """File names agents keep in the worktree itself -> agent name (Aider's history)."""
    return {f: name for name in AGENT_NAMES for f in getattr(agent(name), "WORKTREE_FILES", ())}


def appends_export(name: str) -> bool:
    """Does a resume into ``name`` append to its file rather than write it whole?"""
    return bool(getattr(agent(name), "APPEND_EXPORT", False))
