"""Where pi keeps its sessions and how a session file is named: what the reader and the exporter both need."""

from __future__ import annotations

import json
from pathlib import Path

from oxide_git.agents import AgentEnv

name = "pi"


def session_dir(env: AgentEnv, cwd: str) -> Path:
    """Where pi, started in ``cwd``, writes a new session (and looks for one first)."""
    flat = flat_dirs(env)
    return flat[0] if flat else agent_dir(env) / "sessions" / encode_cwd(cwd)


def agent_dir(env: AgentEnv) -> Path:
    """``PI_CODING_AGENT_DIR``, else ``~/.pi/agent``."""
    raw = env.environ.get("PI_CODING_AGENT_DIR")
    return _expand(raw, env.home) if raw else env.home / ".pi" / "agent"


def flat_dirs(env: AgentEnv) -> list[Path]:
    """Session folders that hold every project's files side by side: ``PI_CODING_AGENT_SESSION_DIR``,
    else a ``sessionDir`` of pi's settings (the project's ``.pi/settings.json`` wins, as in pi)."""
    raw = env.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if raw:
        return [_expand(raw, env.home)]
    found = [d for w in env.worktrees if (d := _settings_session_dir(w / ".pi" / "settings.json", env.home))]
    own = _settings_session_dir(agent_dir(env) / "settings.json", env.home)
    return list(dict.fromkeys([*found, *([own] if own else [])]))


def encode_cwd(cwd: str) -> str:
    """The folder pi keeps a working directory's sessions in (``getDefaultSessionDir``)."""
    inner = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + inner.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def _expand(path: str, home: Path) -> Path:
    """pi's ``expandTildePath``: ``~`` and ``~/...`` are the home folder."""
    if path == "~":
        return home
    return home / path[2:] if path.startswith("~/") else Path(path)


def _settings_session_dir(settings: Path, home: Path) -> Path | None:
    try:
        value = json.loads(settings.read_text(encoding="utf-8")).get("sessionDir")
    except (OSError, ValueError, AttributeError):
        return None
    return _expand(value, home) if isinstance(value, str) and value else None
