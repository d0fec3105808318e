"""Qwen Code's own hooks (``hooks`` in ``settings.json``, 0.24): capture from inside the agent.

``UserPromptSubmit`` (the prompt's record is already in the file) imports the session file the
hook names and takes a prompt checkpoint (it fires again with an empty ``prompt`` for each batch
of tool results sent back: those only import); ``Stop`` imports it again (``agent_hooks_settings``
does both, and the merge). Qwen Code runs a project's hooks without asking; its timeouts are in
seconds.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from oxide_git.hooks.agent_hooks_settings import Settings
from oxide_git.hooks.agent_hooks_settings import configure as _configure
from oxide_git.hooks.agent_hooks_settings import handle as _handle


def _user_settings() -> Path:
    home = os.environ.get("QWEN_HOME")
    return (Path(home) if home else Path.home() / ".qwen") / "settings.json"


SPEC = Settings(agent="qwen", label="Qwen Code", folder=".qwen", user=_user_settings,
                events={"UserPromptSubmit": "prompt", "Stop": "stop"}, timeout=10)


def configure(workdir: Path, *, remove: bool = False, python: str | None = None) -> list[str]:
    return _configure(SPEC, workdir, remove=remove, python=python)


def handle(action: str, payload: dict[str, Any]) -> None:
    _handle(SPEC, action, payload)
