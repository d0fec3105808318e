"""Where Qwen Code keeps a project's sessions: what the reader and the exporter both need."""

from __future__ import annotations

import re
from pathlib import Path

from oxide_git.agents import AgentEnv


def qwen_dir(env: AgentEnv) -> Path:
    home = env.environ.get("QWEN_HOME")
    return Path(home).expanduser() if home else env.home / ".qwen"


def project_folder(cwd: str) -> str:
    """The folder name Qwen Code keeps a project's sessions under (``sanitizeCwd``)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)
