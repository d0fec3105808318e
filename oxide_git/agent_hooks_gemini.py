"""Gemini CLI's own hooks (``hooks`` in ``settings.json``, 0.61): capture from inside the agent.

``BeforeAgent`` (a prompt was submitted) imports the session file the hook names and takes a
prompt checkpoint; ``AfterAgent`` (the turn is over) imports it again. The entries run
``git oxide agent-hook gemini prompt|stop`` from PATH and go into the project's
``.gemini/settings.json``, which projects commit, so every teammate gets the same command. Where
``git-oxide`` is not on PATH the command names this machine's Python, and then it goes into the
user's ``~/.gemini/settings.json`` (Gemini CLI has no per-machine project file), never the shared
one. Gemini CLI runs a project's hooks once it has seen them (it warns about a new one).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from .agent_hooks import _command, _context, _is_ours, _load, _session_of

EVENTS = {"BeforeAgent": "prompt", "AfterAgent": "stop"}
TIMEOUT_MS = 10000


def _merge(settings: dict[str, Any], commands: dict[str, str] | None) -> bool:
    before = json.dumps(settings, sort_keys=True)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        hooks = settings["hooks"] = {}
    for event in EVENTS:
        entries = [e for e in hooks.get(event, []) if not _is_ours(e)]
        if commands:
            hook = {"name": f"git-oxide-{EVENTS[event]}", "type": "command", "command": commands[event],
                    "timeout": TIMEOUT_MS}
            entries.append({"matcher": "*", "hooks": [hook]})
        if entries:
            hooks[event] = entries
        else:
            hooks.pop(event, None)
    if not hooks:
        settings.pop("hooks")
    return json.dumps(settings, sort_keys=True) != before


def _user_settings() -> Path:
    home = os.environ.get("GEMINI_CLI_HOME") or str(Path.home())
    return Path(home) / ".gemini" / "settings.json"


def configure(workdir: Path, *, remove: bool = False, python: str | None = None) -> list[str]:
    """Merge our hooks into Gemini CLI's settings (every other entry is kept)."""
    shared, user = workdir / ".gemini" / "settings.json", _user_settings()
    commands: dict[str, str] = {}
    portable = True
    for event, action in EVENTS.items():
        commands[event], portable = _command(python, "gemini", action)
    target = shared if portable else user
    done = []
    for path in (shared, user):
        if not path.exists() and (remove or path != target):
            continue
        settings = _load(path)
        if _merge(settings, None if remove or path != target else commands) or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(settings, indent=2) + "\n")
            if remove or path != target:
                done.append(f"removed git oxide's Gemini CLI hooks from {path}")
    if not remove:
        done.append(f"set Gemini CLI {', '.join(EVENTS)} hooks in {target}"
                    + ("" if portable else " (git-oxide is not on PATH: this machine's Python is "
                       "named, so they go in your own ~/.gemini/settings.json)"))
    return done


def handle(action: str, payload: dict[str, Any]) -> None:
    """What the hook runs: import the session file Gemini names; a prompt also checkpoints."""
    from . import importing, store

    ctx = _context(payload.get("cwd"))
    if ctx is None:
        return
    path = payload.get("transcript_path")
    if isinstance(path, str) and Path(path).is_file():
        importing.import_file(ctx, "gemini", Path(path))
    sid = _session_of(ctx, "gemini", payload.get("session_id"))
    if sid is None and action == "prompt" and isinstance(path, str):
        # The first prompt: the file holds only its header yet. The session it will be is stored
        # (no messages), so that the checkpoint is this session's; the next import fills it.
        from .agents.gemini_log import starting_session
        from .importing import agent_env

        started = starting_session(Path(path), agent_env(ctx))
        if started is not None and started.native_id == payload.get("session_id"):
            started = replace(started, project_id=ctx.repo.project_id(),
                              worktree=ctx.repo.worktree_of(started.cwd))
            store.save(ctx, started, {}, summary="gemini session started")
            sid = started.id
    if sid:
        store.set_current_session(ctx, sid)
    if action == "prompt":
        from .checkpoint import checkpoint

        prompt = str(payload.get("prompt") or "")
        checkpoint(ctx, text=prompt.strip()[:200] or "prompt", kind="prompt", session=sid)
