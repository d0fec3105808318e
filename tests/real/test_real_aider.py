"""Aider over the real history files in OXIDE_REAL_FIXTURES: nothing lost, counts from raw text."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from oxide_git.agents import FoundMessage, FoundSession, Problem, Resumable
from oxide_git.agents.aider import agent as aider

pytestmark = pytest.mark.real

ROOT = os.environ.get("OXIDE_REAL_FIXTURES")
HEADER = re.compile(r"^# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s*$")


def _files() -> list[Path]:
    if not ROOT:
        return []
    return sorted(Path(ROOT).rglob(".aider.chat.history.md"))


def _skip_reason() -> str | None:
    if not ROOT:
        return "set OXIDE_REAL_FIXTURES=../shared/fixtures/real to run"
    return None if _files() else f"no .aider.chat.history.md under {ROOT}"


needs_real = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def _sections(path: Path) -> list[list[str]]:
    """The raw lines of each session, split on headers, computed without the parser."""
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    out: list[list[str]] = []
    for line in lines:
        if HEADER.match(line):
            out.append([])
        elif out:
            out[-1].append(line)
        elif line.strip():
            out.append([line])  # text before the first header: its own session
    return out


def _user_runs(lines: list[str]) -> int:
    runs, inside = 0, False
    for line in lines:
        is_user = line.startswith("#### ") or line == "####"
        runs += is_user and not inside
        inside = is_user
    return runs


def _part_lines(parts: list) -> set[str]:
    out: set[str] = set()
    for p in parts:
        for key in ("text", "output"):
            value = p.get(key)
            if isinstance(value, str):
                out.update(v.strip() for v in value.splitlines())
    return out


def _content(line: str) -> str:
    for prefix in ("#### ", "> "):
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return line.strip()


@needs_real
@pytest.mark.parametrize("path", _files(), ids=lambda p: p.parent.name)
def test_real_history(path: Path) -> None:
    sessions: dict[str, object] = {}
    parts: dict[str, list] = {}
    users: dict[str, int] = {}
    problems = []
    events = list(aider.parse(path))
    for e in events:
        if isinstance(e, FoundSession):
            sessions[e.session.id] = e.session
            parts.setdefault(e.session.id, [])
            users.setdefault(e.session.id, 0)
        elif isinstance(e, FoundMessage):
            parts[e.session_id].extend(e.message.parts)
            users[e.session_id] += e.message.role == "user"
        elif isinstance(e, Problem):
            problems.append(e)
    assert not problems
    sections = _sections(path)
    assert len(sessions) == len(sections)
    for sid, raw in zip(sessions, sections, strict=True):
        assert users[sid] == _user_runs(raw)
        seen = _part_lines(parts[sid])
        lost = [ln for ln in raw if ln.strip() and _content(ln) not in seen]
        assert lost == [], f"lines lost in session {sid}"
    # restarting at any Resumable gives exactly what followed it
    for i, e in enumerate(events[:-1]):
        if isinstance(e, Resumable):
            assert list(aider.parse(path, offset=e.offset, state=e.state)) == events[i + 1 :]
