"""Gemini CLI's own hooks (``hooks`` in ``settings.json``, 0.61): capture from inside the agent.

``BeforeAgent`` (a prompt was submitted) imports the session file the hook names and takes a
prompt checkpoint; ``AfterAgent`` (the turn is over) imports it again (``agent_hooks_settings``
does both, and the merge). Gemini CLI runs a project's hooks only in a folder the user trusted,
and warns the first time it sees each one; its timeouts are in milliseconds. At the first prompt
the file holds only its header: the session it names is stored then, for the checkpoint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from oxide_git.hooks.agent_hooks_settings import Settings
from oxide_git.hooks.agent_hooks_settings import configure as _configure
from oxide_git.hooks.agent_hooks_settings import handle as _handle


def _user_settings() -> Path:
    home = os.environ.get("GEMINI_CLI_HOME") or str(Path.home())
    return Path(home) / ".gemini" / "settings.json"


SPEC = Settings(agent="gemini", label="Gemini CLI", folder=".gemini", user=_user_settings,
                events={"BeforeAgent": "prompt", "AfterAgent": "stop"}, timeout=10000)


def configure(workdir: Path, *, remove: bool = False, python: str | None = None) -> list[str]:
    return _configure(SPEC, workdir, remove=remove, python=python)


def handle(action: str, payload: dict[str, Any]) -> None:
    from oxide_git.agents.gemini.log import starting_session

    _handle(SPEC, action, payload, starting=starting_session)
