"""Qwen Code sessions (``~/.qwen/projects/<cwd as ->/chats/<id>.jsonl``): discover, parse.

A Gemini CLI fork whose records are Claude-like (``uuid``/``parentUuid``) around Gemini-shaped
messages (``gemini_parts``). The replay: ``qwen_log``; one record: ``qwen_records``; writing a
session back (``qwen --resume <id>``): ``qwen_export``. docs/agents/qwen.md has what 0.24 writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Event, Export
from oxide_git.agents.qwen.store import project_folder as project_folder
from oxide_git.agents.qwen.store import qwen_dir as qwen_dir
from oxide_git.core.model import Message, Session

name = "qwen"

FILE_PATTERNS = ("*.jsonl",)
_SESSION_FILE = re.compile(r"^[0-9a-fA-F-]{36}\.jsonl$")


def watch_roots(env: AgentEnv) -> list[Path]:
    return [qwen_dir(env) / "projects"]


def _first_cwd(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            first = json.loads(f.readline())
    except (OSError, ValueError, RecursionError):
        return None
    cwd = first.get("cwd") if isinstance(first, dict) else None
    return cwd if isinstance(cwd, str) else None


def discover(env: AgentEnv) -> list[Path]:
    """Session files whose first record's ``cwd`` lies in a worktree (what ``--resume`` checks),
    each followed by its sub-agents' files."""
    projects = qwen_dir(env) / "projects"
    try:
        folders = sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        return []
    out: list[Path] = []
    for d in folders:
        for f in sorted((d / "chats").glob("*.jsonl")):
            if _SESSION_FILE.match(f.name) and env.belongs(_first_cwd(f)):
                out.append(f)  # then its sub-agents' files: subagents/<id>/agent-<agent id>.jsonl
                out += sorted((d / "subagents" / f.stem).glob("agent-*.jsonl"))
    return out


def parse(path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None,
          env: AgentEnv | None = None) -> Iterator[Event]:
    from oxide_git.agents.qwen.log import Parser

    yield from Parser(Path(path).absolute(), state if offset else None, env).run(offset)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as a file ``qwen --resume`` accepts (``qwen_export``)."""
    from oxide_git.agents.qwen.export import export as _export

    return _export(session, messages, env)
