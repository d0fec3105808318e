"""Gemini CLI sessions (``~/.gemini/tmp/<slug>/chats/session-<ts>-<id8>.jsonl``): discover, parse.

Where they are: ``gemini_store``; how a file replays (a patch log with upserts, ``$set`` and
``$rewindTo``): ``gemini_log``; one record as a Message: ``gemini_records``; writing a session back
(``gemini --resume <uuid>``): ``gemini_export``. docs/agents/gemini.md has what 0.61 writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Event, Export, jsonline
from oxide_git.agents.gemini.store import gemini_dir, project_dirs, session_files
from oxide_git.core.model import Message, Session

name = "gemini"

FILE_PATTERNS = ("*.jsonl", "session-*.json")


def expand_dir(path: Path) -> list[Path]:
    """A folder's session files that hold a session (``import --agent gemini DIR``): the startup
    file a resume leaves behind, and a ``.json`` the CLI went on with as ``.jsonl``, are not."""
    found = sorted({*path.rglob("*.jsonl"), *path.rglob("session-*.json")})
    return [p for p in found if p.is_file() and not (p.suffix == ".json" and p.with_suffix(".jsonl").exists())
            and _resumable_file(p)]


def watch_roots(env: AgentEnv) -> list[Path]:
    return [gemini_dir(env) / "tmp"]


def _resumable_file(path: Path) -> bool:
    """Does the file hold what the CLI would resume (a prompt or an answer)? The file a resume
    leaves behind with only the CLI's session context does not. Read until the first such line."""
    from oxide_git.agents.gemini.log import resumable_at

    if path.suffix == ".json":  # an older release's whole-file JSON
        try:
            msgs = jsonline.loads(path.read_bytes()).get("messages")
        except (OSError, ValueError, RecursionError, AttributeError):
            return False
        return isinstance(msgs, list) and any(isinstance(m, dict) and resumable_at(m) for m in msgs)
    try:
        with path.open("rb") as f:
            for raw in f:
                if b'"type":"gemini"' in raw:
                    return True
                if b'"user"' in raw and _holds_a_prompt(raw):
                    return True
    except OSError:
        return False
    return False


def _holds_a_prompt(raw: bytes) -> bool:
    from oxide_git.agents.gemini.log import resumable_at

    try:
        obj = jsonline.loads(raw)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict):
        return False
    recs = [obj] if "id" in obj else []
    for holder in (obj.get("$set"), obj):
        msgs = holder.get("messages") if isinstance(holder, dict) else None
        recs += [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []
    return any(resumable_at(r) for r in recs)


def discover(env: AgentEnv) -> list[Path]:
    """This project's session files (and sub-agents'), those the CLI would list."""
    out: list[Path] = []
    for folder in project_dirs(env):
        out += [p for p in session_files(folder) if p not in out and _resumable_file(p)]
    return out


def parse(path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None,
          env: AgentEnv | None = None) -> Iterator[Event]:
    """Events for the session(s) of one file (see ``agents`` for the contract); a rewind in the
    file makes a second session (``gemini_log``)."""
    path = Path(path).absolute()
    if path.suffix == ".json":
        from oxide_git.agents.gemini.legacy import parse as legacy

        yield from legacy(path, env)
        return
    from oxide_git.agents.gemini.log import Parser

    yield from Parser(path, state if offset else None, env).run(offset)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as a file ``gemini --resume`` accepts (``gemini_export``)."""
    from oxide_git.agents.gemini.export import export as _export

    return _export(session, messages, env)
