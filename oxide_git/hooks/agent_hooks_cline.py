"""Cline's own hooks: a script per event in the project's ``.clinerules/hooks/``.

Cline 3 runs every file of a hooks folder named after an event (``TaskStart``, ``PostToolUse``,
``TaskComplete``...; no extension or ``.sh``, ``.bash``...) with the event's JSON on stdin; every
such file runs, so ours sits beside the user's own (``<Event>.sh``, or ``<Event>.bash`` when that
name is taken) and chains nothing. They run ``git oxide agent-hook cline ACTION`` from PATH in
``.clinerules/hooks/``, which projects commit. Only where ``git-oxide`` is not on PATH does the
script name this machine's Python, and then it goes into ``.cline/hooks/`` in the worktree (Cline
reads it too; it is this machine's). What the scripts run (``handle``) imports the session the
payload names and, for a new task, takes a checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oxide_git.core.errors import OxideError

EVENTS = {"TaskStart": "prompt", "PostToolUse": "tool", "TaskComplete": "stop", "TaskError": "stop",
          "TaskCancel": "stop"}
MARK = "# git oxide agent hook"
_NAMES = (".sh", ".bash")  # what our script may be called, after the event


def _script(command: str) -> str:
    return (f"#!/bin/sh\n{MARK} (`git oxide init --agent-hooks cline`; `--remove` takes it out)\n"
            f"exec {command}\n")


def _ours(path: Path) -> bool:
    try:
        return MARK in path.read_text(errors="replace")
    except OSError:
        return False


def configure(workdir: Path, *, remove: bool = False, python: str | None = None) -> list[str]:
    """Write (or take out) our hook scripts; the user's own hooks are left as they are."""
    from oxide_git.hooks.agent_hooks import hook_command

    shared, local = workdir / ".clinerules" / "hooks", workdir / ".cline" / "hooks"
    scripts: dict[str, str] = {}
    portable = True
    for event, action in EVENTS.items():
        command, portable = hook_command(python, "cline", action)
        scripts[event] = _script(command)
    target = shared if portable else local
    done: list[str] = []
    for folder in (shared, local):
        if remove or folder != target:
            gone = [p for e in EVENTS for p in (folder / f"{e}{x}" for x in _NAMES) if _ours(p)]
            for p in gone:
                p.unlink()
            if gone:
                done.append(f"removed git oxide's Cline hooks from {folder}")
    if remove:
        return done
    plan: dict[Path, str] = {}
    for event, text in scripts.items():
        free = [folder for folder in (target / f"{event}{x}" for x in _NAMES)
                if not folder.exists() or _ours(folder)]
        if not free:
            raise OxideError(f"{target / (event + '.sh')} and {event}.bash are hooks of your own",
                             hint="rename one of them; Cline runs every hook file of an event")
        plan[free[0]] = text
    target.mkdir(parents=True, exist_ok=True)
    for path, text in plan.items():
        if not (path.exists() and path.read_text() == text):
            path.write_text(text)
        path.chmod(0o755)
    done.append(f"set Cline {', '.join(EVENTS)} hooks in {target}"
                + ("" if portable else " (git-oxide is not on PATH: this machine's Python is named, "
                   "so they go in the worktree's .cline/hooks, not the shared .clinerules)"))
    return done


def handle(action: str, payload: dict[str, Any]) -> None:
    """Import the session the payload names (and its sub-agents); a new task gets a checkpoint."""
    from oxide_git.agents.cline import agent as cline
    from oxide_git.hooks import ties as hook_ties
    from oxide_git.hooks.agent_hooks import hook_context
    from oxide_git.imports import importing
    from oxide_git.store.ties import session_of

    roots = payload.get("workspaceRoots")
    info: dict[str, Any] = payload["workspaceInfo"] if isinstance(payload.get("workspaceInfo"), dict) else {}
    first = roots[0] if isinstance(roots, list) and roots else None
    cwd = first if isinstance(first, str) else info.get("rootPath")
    ctx = hook_context(cwd if isinstance(cwd, str) else None)
    if ctx is None:
        return
    context: dict[str, Any] = (payload["sessionContext"] if isinstance(payload.get("sessionContext"), dict)
                               else {})
    native = context.get("rootSessionId")
    if not isinstance(native, str) or not native or "/" in native or native.startswith("."):
        return
    folder = cline.sessions_dir(importing.agent_env(ctx)) / native
    own = folder / f"{native}{cline.MESSAGES_SUFFIX}"
    files = [own, *sorted(p for p in folder.glob(f"*{cline.MESSAGES_SUFFIX}") if p != own)]
    for path in files:
        if path.is_file():
            importing.import_file(ctx, "cline", path)
    sid = session_of(ctx, "cline", native)
    hook_ties.settle(ctx, "cline", native, sid, why="Cline's hook reported it")
    if action == "prompt":
        manifest = cline.manifest_of(folder) or {}
        text = manifest.get("prompt") if isinstance(manifest.get("prompt"), str) else ""
        hook_ties.prompt_checkpoint(ctx, "cline", native, sid, str(text))
