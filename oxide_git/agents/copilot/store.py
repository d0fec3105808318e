"""Where GitHub Copilot CLI keeps its sessions: what the reader and the exporter both need."""

from __future__ import annotations

from pathlib import Path

from oxide_git.agents import AgentEnv


def home(env: AgentEnv) -> Path:
    """Copilot's folder: ``COPILOT_HOME``, else ``~/.copilot`` (XDG variables do not move it)."""
    raw = env.environ.get("COPILOT_HOME")
    return Path(raw).expanduser() if raw else env.home / ".copilot"
