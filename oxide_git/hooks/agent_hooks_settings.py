"""Hooks kept in an agent's ``settings.json`` under ``hooks`` (Gemini CLI, Qwen Code), merged and
taken out, and what such a hook does with the payload it gets (``session_id``,
``transcript_path``, ``cwd``, and for a prompt ``prompt``).

The entries run ``git oxide agent-hook AGENT prompt|stop`` from PATH and go into the project's
``<folder>/settings.json``, which projects commit, so every teammate gets the same command. Where
``git-oxide`` is not on PATH the command names this machine's Python, and then it goes into the
user's own settings (these agents have no per-machine project file), never the shared one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from oxide_git.hooks.agent_hooks import hook_command, hook_context, is_ours, load_settings
from oxide_git.store.ties import session_of


@dataclass(frozen=True)
class Settings:
    agent: str  # the oxide agent name
    label: str  # how the agent calls itself
    folder: str  # the project's settings folder: .gemini, .qwen
    user: Callable[[], Path]  # the user's settings.json
    events: Mapping[str, str]  # hook event -> our action (prompt | stop)
    timeout: int  # in the agent's unit


def _merge(settings: dict[str, Any], spec: Settings, commands: dict[str, str] | None) -> bool:
    before = json.dumps(settings, sort_keys=True)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        hooks = settings["hooks"] = {}
    for event, action in spec.events.items():
        entries = [e for e in hooks.get(event, []) if not is_ours(e)]
        if commands:
            hook = {"name": f"git-oxide-{action}", "type": "command", "command": commands[event],
                    "timeout": spec.timeout}
            entries.append({"matcher": "*", "hooks": [hook]})
        if entries:
            hooks[event] = entries
        else:
            hooks.pop(event, None)
    if not hooks:
        settings.pop("hooks")
    return json.dumps(settings, sort_keys=True) != before


def configure(spec: Settings, workdir: Path, *, remove: bool = False, python: str | None = None) -> list[str]:
    """Merge our hooks into the agent's settings (every other entry is kept)."""
    shared, user = workdir / spec.folder / "settings.json", spec.user()
    commands: dict[str, str] = {}
    portable = True
    for event, action in spec.events.items():
        commands[event], portable = hook_command(python, spec.agent, action)
    target = shared if portable else user
    done = []
    for path in (shared, user):
        if not path.exists() and (remove or path != target):
            continue
        settings = load_settings(path)
        if _merge(settings, spec, None if remove or path != target else commands) or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(settings, indent=2) + "\n")
            if remove or path != target:
                done.append(f"removed git oxide's {spec.label} hooks from {path}")
    if not remove:
        done.append(f"set {spec.label} {', '.join(spec.events)} hooks in {target}"
                    + ("" if portable else " (git-oxide is not on PATH: this machine's Python is "
                       f"named, so they go in your own {user})"))
    return done


def handle(spec: Settings, action: str, payload: Mapping[str, Any],
           starting: Callable[[Path, Any], Any] | None = None) -> None:
    """Import the session file the payload names; a prompt also checkpoints. ``starting(path,
    env)`` gives the session a file that holds nothing to import yet will be (its first prompt is
    checkpointed on it, stored before it has messages)."""
    from oxide_git.hooks import ties as hook_ties
    from oxide_git.imports import importing
    from oxide_git.store import writes as store

    ctx = hook_context(payload.get("cwd"))
    if ctx is None:
        return
    path = payload.get("transcript_path")
    if isinstance(path, str) and Path(path).is_file():
        importing.import_file(ctx, spec.agent, Path(path))
    sid = session_of(ctx, spec.agent, payload.get("session_id"))
    if sid is None and action == "prompt" and isinstance(path, str) and starting is not None:
        started = starting(Path(path), importing.agent_env(ctx))
        if started is not None and started.native_id == payload.get("session_id"):
            started = replace(started, project_id=ctx.repo.project_id(),
                              worktree=ctx.repo.worktree_of(started.cwd))
            store.save(ctx, started, {}, summary=f"{spec.agent} session started")
            sid = started.id
    hook_ties.settle(ctx, spec.agent, payload.get("session_id"), sid)
    if action == "prompt" and payload.get("prompt") != "":
        # (Qwen Code fires its UserPromptSubmit again, with an empty prompt, for each batch of
        # tool results it sends back: only the prompt a person submitted is checkpointed.)
        hook_ties.prompt_checkpoint(ctx, spec.agent, payload.get("session_id"), sid,
                                    str(payload.get("prompt") or ""))
