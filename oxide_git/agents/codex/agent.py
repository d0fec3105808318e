"""OpenAI Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]``, archived ones,
and any the thread store names: ``codex_store``), see formats.md §2 and docs/agents/codex.md.

Reads all eras: the RolloutLine envelope ``{timestamp,type,payload}``, the bare Rust era (a bare meta
line, bare ResponseItems, ``record_type`` lines) and the TypeScript ``rollout-*.json`` single file.

Grouping rule (one open message at a time; a line either joins it or closes it and opens the next):

- a ``response_item`` ``message`` from ``developer``/``system``, a ``compacted`` line, and a user
  ``message`` item each open their own message. A user item immediately followed by
  ``event_msg/user_message`` (only neutral lines between) is the human's prompt: one ``user`` message
  whose text is what the event says. A user item without that event is injected context
  (environment_context, AGENTS.md...) and becomes a ``system`` message (``extra.codex_role``); in the
  bare/TS eras, which have no events, only items that start with a tag are treated as injected.
- assistant-side items (reasoning, assistant message, function/custom/local-shell calls, web search,
  image generation, and the ``agent_message``/``agent_reasoning`` events) join the open ``assistant``
  message, or open one; consecutive tool outputs make one ``tool`` message.
- ``event_msg/task_started`` closes the open message and opens one whose role is decided by the next
  item; every other line (other events, turn_context when it changed, ghost_snapshot, a second
  session_meta, unknown types) is *neutral*: a ``Part.other`` on the open message.
- ``agent_message``/``agent_reasoning`` events duplicate the items of the same message: they are
  paired with them (FIFO per kind) and only kept in the part's data (``events``) when they differ;
  an unpaired event becomes its own text/reasoning part (``source``).
- ``token_count`` sets ``usage`` of the open assistant message (last wins: per-request
  ``last_token_usage`` fields, cumulative ``total``); elsewhere it is kept as a ``Part.other`` only
  when its total changed, identical repeats and rate-limit-only updates are dropped.
- Paginated rollouts (0.155+, every line has an ``ordinal``; docs/agents/codex.md): no line is
  dropped or merged away. A user item's own provenance (``internal_chat_message_metadata_passthrough``)
  says prompt (``user``) or injected context (``system``, ``extra.harness``); ``item_completed``
  events are neutral parts (an ``AgentMessage``/``Reasoning``/``Plan`` one joins or opens the
  assistant message); ``token_count`` lines stay parts; each part keeps its line's envelope
  (``codex_items.envelope``) so the exporter writes the line back byte for byte.
- Injected context of every era is marked ``extra.harness``; types this reader does not know are
  kept as ``other`` parts and reported as ``Unknown`` events.

The last ``Resumable`` is at the end of what was consumed: lines appended later that continue the
last message start a new one; restart from the ``Resumable`` before the last message (and replace
that message) to get exactly the grouping of a single parse.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Event, Export
from oxide_git.agents.codex.parse import Parser
from oxide_git.core.model import Message, Session

__all__ = ["discover", "export", "name", "parse"]

name = "codex"


def discover(env: AgentEnv) -> list[Path]:
    """Every rollout of this project: plain, compressed, archived, or named by Codex's thread store."""
    from oxide_git.agents.codex.store import discover as _discover

    return _discover(env)


FILE_PATTERNS = ("*.jsonl", "*.json", "*.jsonl.zst")


def watch_roots(env: AgentEnv) -> list[Path]:
    home = env.environ.get("CODEX_HOME")
    return [(Path(home).expanduser() if home else env.home / ".codex") / "sessions"]


def parse(path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None) -> Iterator[Event]:
    return Parser(Path(path), state if offset else None).run(offset)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """A rollout Codex resumes (see ``codex_export``; not loaded by an import)."""
    from oxide_git.agents.codex.export import export as _export

    return _export(session, messages, env)
