"""Where Cline keeps its sessions: what the reader and the exporter both need."""

from __future__ import annotations

import re
from pathlib import Path

from oxide_git.agents import AgentEnv

MESSAGES_SUFFIX = ".messages.json"


def sessions_dir(env: AgentEnv) -> Path:
    """Where Cline keeps its session folders (its own order of overrides)."""
    e = env.environ
    if e.get("CLINE_SESSION_DATA_DIR", "").strip():
        return Path(e["CLINE_SESSION_DATA_DIR"].strip())
    if e.get("CLINE_DATA_DIR", "").strip():
        return Path(e["CLINE_DATA_DIR"].strip()) / "sessions"
    base = Path(e["CLINE_DIR"].strip()) if e.get("CLINE_DIR", "").strip() else env.home / ".cline"
    return base / "data" / "sessions"


def created_of(native_id: str) -> int | None:
    """The creation time in a Cline id (``1796162970748_d4qjp``; a sub-agent's ends in its own)."""
    m = _ID_TIME.search(native_id)
    return int(m.group(1)) if m else None


_ID_TIME = re.compile(r"(\d{12,14})_[A-Za-z0-9]+$")  # "<ms>_<5 chars>", a sub-agent's "agent_<ms>_<…>"
