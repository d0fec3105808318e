"""Which agent wrote a file, told from its first bytes: `git oxide import FILE` without ``--agent``,
and the check that refuses a file given as another agent's (a Claude Code transcript read as a
Codex rollout yields one message and records of unknown types, and nothing says it is wrong).

A cheap sniff, not a parse: the first ``HEAD_BYTES`` of the file; the whole lines among them that
are JSON objects are tested record by record, and a whole-file JSON document (or a first line
longer than the head) by the keys that appear in the head. Each agent's test looks for what its
own importer needs and no other agent writes (docs/agents/*.md); a file may match none (a new
format, or not a transcript at all), never, for the agents' real files (fixtures/), more than one.
Pure: it reads the file and imports nothing of the agents' modules.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

HEAD_BYTES = 64 * 1024
MAX_LINES = 64
# What each agent's files are called in a message: "this looks like a Claude Code transcript, not
# a Codex rollout".
KINDS = {
    "claude": "a Claude Code transcript",
    "codex": "a Codex rollout",
    "opencode": "an OpenCode session",
    "aider": "an Aider chat history",
    "copilot": "a Copilot CLI session",
    "cline": "a Cline session",
    "pi": "a pi session",
    "gemini": "a Gemini CLI chat",
    "qwen": "a Qwen Code chat",
}

_KEY = re.compile(rb'"([A-Za-z_$][\w$.-]{0,40})"\s*:')
_SQLITE = b"SQLite format 3\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"
_AIDER = re.compile(rb"(?m)^# aider chat started at \d")
_AIDER_INPUT = re.compile(rb"\A\s*# \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\r?\n\+")
_CLINE_START = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,')
_CODEX_TYPES = frozenset(("session_meta", "response_item", "event_msg", "turn_context", "compacted"))


class Head:
    """What the tests look at: the head's bytes, its whole JSON-object lines (parsed as far as a
    test reads them: most answer at the first record), the keys that appear in it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._lines = iter(data.split(b"\n", MAX_LINES)[:MAX_LINES])
        self._records: list[dict[str, Any]] = []

    def records(self) -> Iterator[dict[str, Any]]:
        yield from self._records
        for line in self._lines:
            line = line.strip()
            if not line.startswith(b"{"):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # not JSON, or the head ends inside it
            if isinstance(rec, dict):
                self._records.append(rec)
                yield rec

    @property
    def lines(self) -> bool:
        """Is it JSON lines (one whole object at least), not one JSON document or text?"""
        return next(self.records(), None) is not None

    @functools.cached_property
    def keys(self) -> set[str]:
        return {m.decode("ascii") for m in _KEY.findall(self.data)}

    def has(self, *keys: str) -> bool:
        return all(k in self.keys for k in keys)

    def any(self, test: Callable[[dict[str, Any]], bool]) -> bool:
        return any(test(r) for r in self.records())


def _message(rec: dict[str, Any], key: str) -> bool:
    msg = rec.get("message")
    return isinstance(msg, dict) and key in msg


def _claude(h: Head) -> bool:
    if h.lines:
        return h.any(lambda r: (r.get("type") in ("user", "assistant") and _message(r, "content")
                                and ("uuid" in r or "sessionId" in r))
                     or (r.get("type") == "summary" and "leafUuid" in r)
                     or r.get("type") == "file-history-snapshot")
    return h.has("parentUuid", "isSidechain", "userType")


def _qwen(h: Head) -> bool:
    if h.lines:
        return h.any(lambda r: "uuid" in r and "sessionId" in r
                     and (_message(r, "parts") or "systemPayload" in r))
    return h.has("parentUuid", "sessionId", "parts") and "isSidechain" not in h.keys


def _gemini(h: Head) -> bool:
    if h.lines:
        return h.any(lambda r: ("projectHash" in r and "sessionId" in r) or "$set" in r or "$rewindTo" in r
                     or (r.get("type") == "gemini" and "message" not in r))
    return h.has("projectHash", "sessionId")


def _codex(h: Head) -> bool:
    if h.data.startswith(_ZSTD):
        return True  # a compressed rollout (.jsonl.zst): only Codex writes them
    if h.lines:
        return h.any(lambda r: (r.get("type") in _CODEX_TYPES and "payload" in r)
                     or ("instructions" in r and "id" in r and "timestamp" in r)
                     or r.get("record_type") == "state" or ("session" in r and "items" in r))
    return re.match(rb'\s*\{\s*"session"\s*:\s*\{', h.data) is not None and h.has("items")


def _copilot(h: Head) -> bool:
    return h.any(lambda r: isinstance(r.get("type"), str) and "." in r["type"]
                 and isinstance(r.get("data"), dict))


def _pi(h: Head) -> bool:
    return h.any(lambda r: (r.get("type") == "session" and "cwd" in r and "version" in r)
                 or (r.get("type") == "message" and "parentId" in r and isinstance(r.get("message"), dict)))


def _cline(h: Head) -> bool:
    if _CLINE_START.match(h.data) is None:  # every file of a Cline session opens with its version
        return False
    return (h.has("sessionId", "messages", "origin") or h.has("session_id", "started_at")
            or h.has("conversation_id", "source_message_count"))


def _opencode(h: Head) -> bool:
    if h.data.startswith(_SQLITE):
        return True  # opencode.db: no other agent's file given to `import` is a database
    return b'"ses_' in h.data and (h.has("projectID") or h.has("info", "messages"))


def _aider(h: Head) -> bool:
    if b"\0" in h.data:
        return False
    return _AIDER.search(h.data) is not None or _AIDER_INPUT.match(h.data) is not None


SNIFFERS: dict[str, Callable[[Head], bool]] = {
    "claude": _claude, "codex": _codex, "opencode": _opencode, "aider": _aider, "copilot": _copilot,
    "cline": _cline, "pi": _pi, "gemini": _gemini, "qwen": _qwen,
}


def head(path: Path) -> Head:
    """The first bytes of ``path`` (OSError when it cannot be read)."""
    with open(path, "rb") as f:
        return Head(f.read(HEAD_BYTES))


def recognise(path: Path, names: Iterable[str] = SNIFFERS) -> list[str]:
    """The agents (of ``names``) whose files ``path`` looks like: usually one, or none."""
    try:
        h = head(path)
    except OSError:
        return []
    return [n for n in names if n in SNIFFERS and SNIFFERS[n](h)]


def instead(agent: str, path: Path) -> list[str]:
    """The agents ``path`` looks like when it does not look like ``agent``'s (empty when it does,
    or when it looks like nobody's); the head is read once and ``agent``'s test runs first."""
    try:
        h = head(path)
    except OSError:
        return []
    if SNIFFERS[agent](h):
        return []
    return [n for n, test in SNIFFERS.items() if n != agent and test(h)]


def looks_like(agent: str, path: Path) -> bool:
    """Does ``path`` look like one of ``agent``'s files?"""
    return bool(recognise(path, (agent,)))


def kind(agent: str) -> str:
    """How an agent's files are called: "a Claude Code transcript"."""
    return KINDS.get(agent, f"a {agent} session")
