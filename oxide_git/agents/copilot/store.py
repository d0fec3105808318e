"""Where GitHub Copilot CLI keeps its sessions: what the reader and the exporter both need."""

from __future__ import annotations

from pathlib import Path

from oxide_git.agents import AgentEnv


def home(env: AgentEnv) -> Path:
    """Copilot's folder: ``COPILOT_HOME``, else ``~/.copilot`` (XDG variables do not move it)."""
    raw = env.environ.get("COPILOT_HOME")
    return Path(raw).expanduser() if raw else env.home / ".copilot"


def events_file(env: AgentEnv, native_id: str) -> Path:
    """Session ``native_id``'s events, ``<home>/session-state/<id>/events.jsonl``."""
    return home(env) / "session-state" / native_id / "events.jsonl"


def sub_agent_id(parent: str, agent_id: str) -> str:
    """The session git oxide makes of a sub-agent (``agentId``), whose events are in its parent's
    file: its own hooks name it by ``agentId`` alone."""
    return f"{parent}/agent-{agent_id}"
