"""GitHub Copilot CLI's own hooks: a checkpoint at every prompt, the session imported when a turn ends.

Copilot (1.0.102, offline too) runs the ``command`` hooks of ``.github/hooks/*.json`` and the
``hooks`` of ``.github/copilot/settings.local.json`` in a folder the user trusts, with a JSON
payload on stdin: ``userPromptSubmitted`` ``{sessionId, timestamp, cwd, prompt}`` (before the
prompt reaches ``events.jsonl``), ``agentStop`` / ``subagentStop`` ``{sessionId, cwd,
transcriptPath, stopReason}``, ``sessionEnd`` ``{sessionId, cwd, reason}``.

Copilot appends ``events.jsonl`` in batches, in the background: when its ``agentStop`` hook begins,
the file can still end before the turn's prompt (seen on every run of 1.0.102 here). Before each
hook it writes a ``hook.start`` event whose ``input`` is the hook's payload, timestamp included, so
a stop hook waits (up to ``WAIT_S``) until its own ``hook.start`` is in the file: everything of the
turn is then there, and the import takes the whole turn, not the one before it.

``configure`` writes our own file ``.github/hooks/oxide.json`` (which projects commit) with the
portable ``git oxide agent-hook copilot ...``; only where ``git-oxide`` is not on PATH does the
command name this machine's Python, and then it goes into the ``hooks`` of
``.github/copilot/settings.local.json`` (Copilot's per-machine file), never the shared one.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv
from oxide_git.agents.copilot.store import events_file, sub_agent_id
from oxide_git.core.oxide_log import log
from oxide_git.hooks.agent_hooks import MODULE, hook_command, hook_context, load_settings
from oxide_git.store.ties import session_of

EVENTS = {"userPromptSubmitted": "prompt", "agentStop": "stop", "subagentStop": "stop",
          "sessionEnd": "stop"}
WAIT_S = 10.0  # for the turn to reach events.jsonl; Copilot gives each of our hooks 30 s (timeoutSec)
POLL_S = 0.05


def _entry(command: str) -> dict[str, Any]:
    return {"type": "command", "bash": command, "timeoutSec": 30}


def _is_ours(entry: Any) -> bool:
    cmd = str(entry.get("bash", "")) if isinstance(entry, dict) else ""
    return MODULE in cmd or "oxide agent-hook" in cmd


def _merge(settings: dict[str, Any], commands: dict[str, str] | None) -> bool:
    before = json.dumps(settings, sort_keys=True)
    found = settings.get("hooks")
    hooks: dict[str, Any] = found if isinstance(found, dict) else {}
    for event in EVENTS:
        entries = [e for e in hooks.get(event, []) if not _is_ours(e)]
        if commands:
            entries.append(_entry(commands[event]))
        if entries:
            hooks[event] = entries
        else:
            hooks.pop(event, None)
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    return json.dumps(settings, sort_keys=True) != before


def configure(workdir: Path, *, remove: bool = False, python: str | None = None) -> list[str]:
    """Set (or take out) our Copilot CLI hooks; other hooks are kept."""
    shared = workdir / ".github" / "hooks" / "oxide.json"
    local = workdir / ".github" / "copilot" / "settings.local.json"
    commands: dict[str, str] = {}
    portable = True
    for event, action in EVENTS.items():
        commands[event], portable = hook_command(python, "copilot", action)
    done: list[str] = []
    if shared.exists() and (remove or not portable):
        shared.unlink()
        done.append(f"removed git oxide's Copilot CLI hooks ({shared})")
    elif not remove and portable:
        shared.parent.mkdir(parents=True, exist_ok=True)
        body = {"version": 1, "hooks": {e: [_entry(c)] for e, c in commands.items()}}
        shared.write_text(json.dumps(body, indent=2) + "\n")
    if local.exists() or (not remove and not portable):
        settings = load_settings(local)
        if _merge(settings, None if remove or portable else commands) or not local.exists():
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_text(json.dumps(settings, indent=2) + "\n")
            if remove or portable:
                done.append(f"removed git oxide's Copilot CLI hooks from {local}")
    if not remove:
        target = shared if portable else local
        done.append(f"set Copilot CLI {', '.join(EVENTS)} hooks in {target}" + (
            "" if portable else " (git-oxide is not on PATH: this machine's Python is named, so they go "
            "in the per-machine settings.local.json)") + "; Copilot runs them in folders you trust")
    return done


def _ids(payload: dict[str, Any]) -> tuple[Any, Any]:
    """The session a hook is about, as the importer names it, and the session whose
    ``events.jsonl`` holds it. A sub-agent's own hooks (its prompt, its ``agentStop``) carry its
    ``agentId`` as ``sessionId`` and its parent's as ``parentAgentId``; ``subagentStop`` carries the
    parent's ``sessionId`` and the sub-agent's ``agentId``. The importer makes a sub-agent the
    session ``<parent>/agent-<agentId>`` (``store.sub_agent_id``), kept in its parent's file."""
    sid, agent, parent = payload.get("sessionId"), payload.get("agentId"), payload.get("parentAgentId")
    if isinstance(agent, str) and agent and "/" not in agent:
        if isinstance(parent, str) and parent and parent != agent:
            return sub_agent_id(parent, agent), parent
        if isinstance(sid, str) and sid and sid != agent:
            return sub_agent_id(sid, agent), sid
    return sid, sid


def _transcript(payload: dict[str, Any], root: Any) -> Path | None:
    path = payload.get("transcriptPath")
    if isinstance(path, str) and path:
        return Path(path)
    if not isinstance(root, str) or not root or "/" in root:
        return None
    return events_file(AgentEnv(home=Path.home(), environ=os.environ), root)


def _is_own_start(line: bytes, stamp: int) -> bool:
    try:
        event = json.loads(line)
    except ValueError:
        return False
    data = event.get("data") if isinstance(event, dict) else None
    hook_input = data.get("input") if isinstance(data, dict) else None
    return (event.get("type") == "hook.start" and isinstance(hook_input, dict)
            and hook_input.get("timestamp") == stamp)


def await_own_start(path: Path, payload: dict[str, Any], wait_s: float = WAIT_S) -> bool:
    """Wait until ``path`` holds the ``hook.start`` Copilot wrote for this very hook (its input's
    timestamp is the payload's): the turn before it is then all in the file. False: it did not come
    within ``wait_s`` (the import takes what is there; the next hook or import takes the rest)."""
    stamp = payload.get("timestamp")
    if not isinstance(stamp, int) or isinstance(stamp, bool):
        return True  # nothing to know it by
    needle = str(stamp).encode()
    deadline = time.monotonic() + wait_s
    offset, partial = 0, b""
    while True:
        try:
            with path.open("rb") as f:
                if f.seek(0, os.SEEK_END) < offset:  # rewritten: read it again
                    offset, partial = 0, b""
                f.seek(offset)
                chunk = f.read()
        except OSError:
            chunk = b""
        offset += len(chunk)
        *lines, partial = (partial + chunk).split(b"\n")
        if any(b'"hook.start"' in line and needle in line and _is_own_start(line, stamp) for line in lines):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)


def handle(action: str, payload: dict[str, Any]) -> None:
    from oxide_git.hooks import ties as hook_ties
    from oxide_git.imports import importing

    ctx = hook_context(payload.get("cwd"))
    if ctx is None:
        return
    native, root = _ids(payload)
    path = _transcript(payload, root)
    if path is not None and action == "stop" and not await_own_start(path, payload):
        log(ctx.repo.oxide_dir, f"copilot: this stop hook's own hook.start did not reach {path} in "
            f"{WAIT_S:g} s; imported what the file held")
    if path is not None and path.is_file():
        importing.import_file(ctx, "copilot", path)
    main = session_of(ctx, "copilot", root)
    hook_ties.settle(ctx, "copilot", root, main)  # the parent is the current session, a sub-agent's too
    sid = main if native == root else session_of(ctx, "copilot", native)
    if native != root and sid:
        hook_ties.tie_pending(ctx, "copilot", native, sid)  # a sub-agent's prompt checkpoint, once it is here
    if action == "prompt":
        hook_ties.prompt_checkpoint(ctx, "copilot", native, sid, str(payload.get("prompt") or ""))
