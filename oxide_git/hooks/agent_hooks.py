"""Agents' own hooks: Claude Code's ``.claude/settings.json`` hooks, Codex's ``notify`` command.

``configure`` writes (or, with ``remove``, takes out) our entries, merging with what is there.
``main`` is what those entries run: ``git oxide agent-hook claude|codex EVENT`` (or, where
``git-oxide`` is not on PATH, ``python -m oxide_git.agent_hooks ...`` in per-machine files). It reads
the agent's JSON, prints nothing on stdout, always exits 0, and logs errors to the oxide log.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from oxide_git.core.errors import OxideError
from oxide_git.store.ties import session_of as _session_of

MODULE = "oxide_git.agent_hooks"
CLAUDE_EVENTS = {"UserPromptSubmit": "prompt", "Stop": "stop", "SubagentStop": "stop"}


PORTABLE = ("git", "oxide", "agent-hook")  # `git oxide` from PATH: the same on every machine


def _argv(python: str | None, *args: str) -> tuple[list[str], bool]:
    """The hook's command and whether it is portable (``git oxide`` from PATH) rather than this
    machine's absolute path to Python (used only when ``git-oxide`` is not on PATH)."""
    import shutil

    if python is None and shutil.which("git-oxide"):
        return [*PORTABLE, *args], True
    return [python or sys.executable, "-m", MODULE, *args], False


def hook_command(python: str | None, *args: str) -> tuple[str, bool]:
    import shlex

    argv, portable = _argv(python, *args)
    return " ".join(shlex.quote(a) for a in argv), portable


def is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and any(
        MODULE in str(h.get("command", "")) or "oxide agent-hook" in str(h.get("command", ""))
        for h in entry.get("hooks", []) if isinstance(h, dict))


def load_settings(path: Path) -> dict[str, Any]:
    try:
        settings = json.loads(path.read_text()) if path.exists() else {}
    except ValueError as e:
        raise OxideError(f"{path} is not valid JSON: {e}", hint="fix it, then run this again") from e
    if not isinstance(settings, dict):
        raise OxideError(f"{path} is not a JSON object", hint="fix it, then run this again")
    return settings


def _merge(settings: dict[str, Any], commands: dict[str, str] | None) -> bool:
    """Our entries out of ``settings``, then ``commands`` (event -> command) in; changed?"""
    before = json.dumps(settings, sort_keys=True)
    hooks = settings.setdefault("hooks", {})
    for event in CLAUDE_EVENTS:
        entries = [e for e in hooks.get(event, []) if not is_ours(e)]
        if commands:
            entries.append({"hooks": [{"type": "command", "timeout": 10, "command": commands[event]}]})
        if entries:
            hooks[event] = entries
        else:
            hooks.pop(event, None)
    if not hooks:
        settings.pop("hooks")
    return json.dumps(settings, sort_keys=True) != before


def configure_claude(workdir: Path, *, remove: bool, python: str | None = None) -> list[str]:
    """Merge our hooks into the project's Claude Code settings (other hooks are kept).

    The hooks call ``git oxide`` from PATH and go into ``.claude/settings.json``, which projects
    commit: every teammate gets the same portable command. Only when ``git-oxide`` is not on PATH
    does the command name this machine's Python, and then it goes into
    ``.claude/settings.local.json`` (Claude Code's per-machine file, not committed), never the
    shared one. Entries of ours in the other file are taken out."""
    shared, local = workdir / ".claude" / "settings.json", workdir / ".claude" / "settings.local.json"
    commands: dict[str, str] = {}
    for event, action in CLAUDE_EVENTS.items():  # every event: portable is set
        commands[event], portable = hook_command(python, "claude", action)
    target = shared if portable else local
    done = []
    for path in (shared, local):
        if not path.exists() and (remove or path != target):
            continue
        settings = load_settings(path)
        if _merge(settings, None if remove or path != target else commands) or not path.exists():
            path.parent.mkdir(exist_ok=True)  # .claude/, in the worktree
            path.write_text(json.dumps(settings, indent=2) + "\n")
            if remove or path != target:
                done.append(f"removed git oxide's Claude Code hooks from {path}")
    if not remove:
        events = ", ".join(CLAUDE_EVENTS)
        done.append(f"set Claude Code {events} hooks in {target}"
                    + ("" if portable else " (git-oxide is not on PATH: this machine's Python is "
                       "named, so they go in the per-machine settings.local.json)"))
    return done


def _codex_config(environ: dict[str, str], home: Path) -> Path:
    return Path(environ.get("CODEX_HOME") or home / ".codex") / "config.toml"


def _notify_span(lines: list[str]) -> tuple[int, int] | None:
    """Lines [start, end) of the top-level ``notify = [...]`` entry, if any."""
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("["):
            return None
        if s.startswith("notify") and s[6:].lstrip().startswith("="):
            # The entry ends at the first line that completes it as TOML (brackets inside its
            # strings are not counted, as a count of "[" and "]" would).
            import tomllib

            for j in range(i + 1, len(lines) + 1):
                try:
                    tomllib.loads("\n".join(lines[i:j]))
                except tomllib.TOMLDecodeError:
                    continue
                return i, j
            return i, len(lines)
    return None


def configure_codex(environ: dict[str, str], home: Path, *, remove: bool = False,
                    python: str | None = None) -> list[str]:
    """Set Codex's top-level ``notify``; a notify already there is chained (run after ours)."""
    import tomllib

    path = _codex_config(environ, home)
    text = path.read_text() if path.exists() else ""
    try:
        current = tomllib.loads(text).get("notify")
    except tomllib.TOMLDecodeError as e:
        raise OxideError(f"{path} is not valid TOML: {e}")
    lines = text.splitlines()
    span = _notify_span(lines)
    ours = isinstance(current, list) and (MODULE in current or "agent-hook" in current)
    chained: list[str] = []
    if ours and isinstance(current, list):
        chained = current[current.index("--") + 1:] if "--" in current else []
    elif isinstance(current, list):
        chained = [str(a) for a in current]
    if remove:
        new = chained
    else:
        new, _portable = _argv(python, "codex", "notify")  # config.toml is per user: either is safe
        new += ["--", *chained] if chained else []
    new_lines = [f"notify = {json.dumps(new)}"] if new else []
    if span:
        lines[span[0]:span[1]] = new_lines
    else:
        lines[0:0] = new_lines
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    verb = "removed" if remove else "set"
    chain = f" (chaining {chained[0]})" if chained and not remove else ""
    return [f"{verb} Codex notify in {path}{chain}"]


def hooked_agents() -> tuple[str, ...]:
    """The agents whose own hooks we configure: Claude's and Codex's here, any other agent's in
    its module ``agent_hooks_<name>`` (``configure(workdir, *, remove=False) -> list[str]`` and
    ``handle(action, payload)``)."""
    from importlib.util import find_spec

    from oxide_git.agents import AGENT_NAMES

    own = ("claude", "codex")
    return (*own, *(n for n in AGENT_NAMES if n not in own and find_spec(f"{__package__}.agent_hooks_{n}")))


def _hooks_module(agent: str) -> Any:
    import importlib

    return importlib.import_module(f"{__package__}.agent_hooks_{agent}")


def configure(ctx: Any, agent: str, *, remove: bool = False) -> list[str]:
    if agent == "claude":
        return configure_claude(ctx.repo.workdir, remove=remove)
    if agent == "codex":
        return configure_codex(dict(ctx.environ), ctx.home, remove=remove)
    if agent in hooked_agents():
        return list(_hooks_module(agent).configure(ctx.repo.workdir, remove=remove))
    raise OxideError(f"no agent hooks for {agent}", hint=f"agents with hooks: {', '.join(hooked_agents())}")


# what the hooks run ---------------------------------------------------------------------------


def hook_context(cwd: str | None) -> Any:
    from oxide_git.git.repo import find_repo
    from oxide_git.store.context import Context

    repo = find_repo(Path(cwd or os.getcwd()), environ={})
    if not repo.initialised:
        return None
    return Context(repo, int(time.time() * 1000), dict(os.environ))


def claude(action: str, payload: dict[str, Any]) -> None:
    from oxide_git.hooks import ties as hook_ties
    from oxide_git.imports import importing

    ctx = hook_context(payload.get("cwd"))
    if ctx is None:
        return
    paths = [payload.get(k) for k in ("transcript_path", "agent_transcript_path")]
    for p in paths:
        if p and Path(p).is_file():
            importing.import_file(ctx, "claude", Path(p))
    native = payload.get("session_id")
    sid = _session_of(ctx, "claude", native)
    hook_ties.settle(ctx, "claude", native, sid)
    if action == "prompt":
        hook_ties.prompt_checkpoint(ctx, "claude", native, sid, str(payload.get("prompt") or ""))
    elif payload.get("hook_event_name") == "Stop":  # a subagent's stop is inside the turn
        hook_ties.turn_checkpoint(ctx, sid)


def codex(payload: dict[str, Any]) -> None:
    from oxide_git.hooks import ties as hook_ties
    from oxide_git.imports import importing
    from oxide_git.store import writes as store

    ctx = hook_context(payload.get("cwd"))
    if ctx is None:
        return
    report = importing.import_sessions(ctx, importing.discover(ctx, ["codex"]))
    sid = _session_of(ctx, "codex", payload.get("thread-id") or payload.get("session-id"))
    if sid is None:
        grown = [s for f in report.files if f.state in ("new", "grown", "changed") for s in f.sessions]
        sid = grown[-1] if grown else None
    if sid:
        store.set_current_session(ctx, sid)
        hook_ties.turn_checkpoint(ctx, sid)  # a notify is the end of a turn


def main(argv: list[str]) -> int:
    """Never blocks the agent: no stdout, exit 0, errors to the oxide log."""
    for k in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        os.environ.pop(k, None)
    payload: dict[str, Any] = {}
    try:
        if argv[:1] == ["claude"]:
            payload = json.loads(sys.stdin.read() or "{}")
            claude(argv[1], payload)
        elif argv[:2] == ["codex", "notify"]:
            rest = argv[2:]  # [-- CHAINED...] JSON: Codex appends the JSON as the last argument
            raw = rest[-1] if rest and rest[-1].lstrip().startswith("{") else "{}"
            body = rest[:-1] if raw != "{}" else rest
            chained = body[body.index("--") + 1:] if "--" in body else []
            payload = json.loads(raw)
            if chained:
                import subprocess

                subprocess.Popen([*chained, raw], stdin=subprocess.DEVNULL, start_new_session=True)
            if payload.get("type", "agent-turn-complete") == "agent-turn-complete":
                codex(payload)
        elif argv and argv[0] in hooked_agents():
            payload = json.loads(sys.stdin.read() or "{}")
            _hooks_module(argv[0]).handle(argv[1] if len(argv) > 1 else "", payload)
    except Exception:
        _log(payload.get("cwd"), f"agent hook {argv!r} failed:\n{traceback.format_exc()}")
    return 0


def _log(cwd: str | None, text: str) -> None:
    try:
        from oxide_git.core.oxide_log import log
        from oxide_git.git.repo import find_repo

        log(find_repo(Path(cwd or os.getcwd()), environ={}).oxide_dir, text)
    except Exception:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
