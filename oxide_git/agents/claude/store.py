"""Where Claude Code keeps its transcripts: what the reader and the exporter both need."""

from __future__ import annotations

from pathlib import Path

from oxide_git.agents import AgentEnv


def roots(env: AgentEnv) -> list[Path]:
    """Claude's config folders: each of ``CLAUDE_CONFIG_DIR`` (comma separated) or ``~/.claude``."""
    raw = env.environ.get("CLAUDE_CONFIG_DIR", "")
    found = [Path(p.strip()).expanduser() for p in raw.split(",") if p.strip()]
    return found or [env.home / ".claude"]
