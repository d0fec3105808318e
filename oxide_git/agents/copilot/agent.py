"""GitHub Copilot CLI sessions (``$COPILOT_HOME/session-state/<uuid>/events.jsonl``, default
``~/.copilot``): discover and parse; see docs/agents/copilot.md.

The file is an append-only log of typed events ``{"type","data",["agentId"],"id","timestamp",
"parentId"}`` (``parentId`` chains each event to the one before it). Grouping, one open message per
stream (the main agent's, and one per sub-agent ``agentId``, which is a session of its own):

- ``user.message`` opens a ``user`` message, ``system.message`` a ``system`` one (the system prompt:
  ``extra.harness``), ``assistant.turn_start`` an ``assistant`` one; ``assistant.message`` and
  ``assistant.reasoning`` join the open assistant message (or open one); ``tool.execution_start`` /
  ``tool.execution_complete`` join the open ``tool`` message (or open one);
- ``session.start``, ``session.resume`` and the main agent's ``session.compaction_start`` open a
  ``system`` message; every other event joins the open message of its stream;
- a compaction runs in the background: Copilot cuts its history at the start, and the turn it
  began in goes on (its ``session.usage_record`` opens that turn's ``assistant`` message again).
  The start's message is held back, with every event after it, until the
  ``session.compaction_complete`` of that attempt: on success its ``summaryContent`` becomes a
  ``compaction`` part of the start's message (the complete line keeps it too); a complete whose
  start was not seen opens a compaction message of its own (Copilot cuts there);
- a sub-agent's stream closes at its ``subagent.completed`` / ``subagent.failed``.

Every line becomes parts that keep all of it (``copilot_lines``), so ``copilot_export`` writes the
line back byte for byte; types this reader does not know are ``other`` parts and ``Unknown`` events.
A ``Resumable`` comes before each line that opens a message while no other stream is open and no
compaction is under way; the
messages after the last one are the file's open tail, emitted again (complete) on restart.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Event, Export
from oxide_git.agents.copilot.store import home as home
from oxide_git.core.model import Message, Session

__all__ = ["FILE_PATTERNS", "discover", "export", "name", "parse", "watch_roots"]

name = "copilot"
FILE_PATTERNS = ("events.jsonl",)


def watch_roots(env: AgentEnv) -> list[Path]:
    return [home(env) / "session-state"]


def first_cwd(path: Path) -> str | None:
    """The working folder the first line (``session.start``) names."""
    from oxide_git.agents import jsonline

    try:
        with path.open("rb") as f:
            line = f.readline(1 << 20)
        obj = jsonline.loads(line)
    except (OSError, ValueError, RecursionError):
        return None
    data = obj.get("data") if isinstance(obj, dict) else None
    ctx = data.get("context") if isinstance(data, dict) else None
    cwd = ctx.get("cwd") if isinstance(ctx, dict) else None
    return cwd if isinstance(cwd, str) and cwd else None


def discover(env: AgentEnv) -> list[Path]:
    """Every session whose first working folder lies in a worktree of this repository."""
    root = home(env) / "session-state"
    if not root.is_dir():
        return []
    return [p for p in sorted(root.glob("*/events.jsonl")) if p.is_file() and env.belongs(first_cwd(p))]


def parse(path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None) -> Iterator[Event]:
    """Events for the session in ``path`` and its sub-agents (see ``agents`` for the contract)."""
    from oxide_git.agents.copilot.parse import Parser

    return Parser(Path(path), state if offset else None).run(offset)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as an ``events.jsonl`` that ``copilot --resume ID`` accepts."""
    from oxide_git.agents.copilot.export import export as _export

    return _export(session, messages, env)
