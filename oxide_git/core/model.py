"""Sessions, messages and parts: plain values, stdlib only, no I/O.

Encoding decisions, made once here:
- timestamps are integers, milliseconds since the epoch, UTC (``None`` when the agent did not record one);
- repository-relative paths are POSIX ``str``;
- a part is a type name plus a flat mapping of fields, so fields this build does not know
  survive a round trip;
- ``extra`` on sessions and messages keeps the agent's native fields that have no column of their own.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from oxide_git.core.ago import ago_secs
from oxide_git.core.log_layout import SCHEMA_VERSION as SCHEMA_VERSION


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class PartType(StrEnum):
    TEXT = "text"  # text
    REASONING = "reasoning"  # text, [signature | encrypted]
    TOOL_CALL = "tool_call"  # call_id, name, input
    TOOL_RESULT = "tool_result"  # call_id, output, is_error
    FILE = "file"  # path, [mime, text, url]
    IMAGE = "image"  # mime, [data (base64) | url | path]
    PATCH = "patch"  # text (unified diff or agent patch), [files]
    COMPACTION = "compaction"  # summary, [replaces: list of message ids | None = all before]
    OTHER = "other"  # kind, raw: the native object, unchanged


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of a message. ``data`` holds the type's fields (see PartType) and any others."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Part:
        data = dict(d)
        kind = str(data.pop("type", PartType.OTHER))
        return cls(kind, data)

    @classmethod
    def text(cls, text: str, **extra: Any) -> Part:
        return cls(PartType.TEXT, {"text": text, **extra})

    @classmethod
    def reasoning(cls, text: str, **extra: Any) -> Part:
        return cls(PartType.REASONING, {"text": text, **extra})

    @classmethod
    def tool_call(cls, call_id: str, name: str, input: Any, **extra: Any) -> Part:
        return cls(PartType.TOOL_CALL, {"call_id": call_id, "name": name, "input": input, **extra})

    @classmethod
    def tool_result(cls, call_id: str, output: Any, is_error: bool = False, **extra: Any) -> Part:
        return cls(
            PartType.TOOL_RESULT, {"call_id": call_id, "output": output, "is_error": is_error, **extra}
        )

    @classmethod
    def file(cls, path: str, **extra: Any) -> Part:
        return cls(PartType.FILE, {"path": path, **extra})

    @classmethod
    def image(cls, mime: str | None = None, **extra: Any) -> Part:
        return cls(PartType.IMAGE, {"mime": mime, **extra})

    @classmethod
    def patch(cls, text: str, **extra: Any) -> Part:
        return cls(PartType.PATCH, {"text": text, **extra})

    @classmethod
    def compaction(cls, summary: str, replaces: list[str] | None = None, **extra: Any) -> Part:
        return cls(PartType.COMPACTION, {"summary": summary, "replaces": replaces, **extra})

    @classmethod
    def other(cls, kind: str, raw: Any, **extra: Any) -> Part:
        return cls(PartType.OTHER, {"kind": kind, "raw": raw, **extra})


MERGED_FROM = "merged_from"
"""A message `git oxide merge` brought from a fork names in its extra where it came from: the
session, the seq, and the agent whose record it is (another agent's, in a session of this one)."""
MERGE_MARKER = "oxide_merge"
"""The marker message a merge puts before what it brought holds its record in its extra."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a session with all its parts.

    ``id`` is assigned by the store (time-ascending, unique in the session); importers leave it
    empty and set ``native_id`` to the agent's own id where it has one.
    """

    role: str
    parts: tuple[Part, ...] = ()
    id: str = ""
    created_at: int | None = None
    native_id: str | None = None
    model: str | None = None
    usage: Mapping[str, Any] | None = None
    cost: float | None = None
    compacted: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    unknown: Mapping[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The message's readable text: text parts, then compaction summaries."""
        out = [str(p.get("text", "")) for p in self.parts if p.type == PartType.TEXT]
        out += [str(p.get("summary", "")) for p in self.parts if p.type == PartType.COMPACTION]
        return "\n".join(t for t in out if t)

    def is_harness(self) -> bool:
        """Context the agent's harness injected (see agents/__init__.py), not a user's turn."""
        return bool(self.extra.get("harness"))

    def made_by(self, session_agent: str) -> str:
        """The agent whose record this message is: a merged one's (``MERGED_FROM``), else the
        session's. An exporter writes only its own agent's records as they were."""
        came = self.extra.get(MERGED_FROM)
        agent = came.get("agent") if isinstance(came, Mapping) else None
        return agent if isinstance(agent, str) and agent else session_agent

    def is_compaction(self) -> bool:
        return any(p.type == PartType.COMPACTION for p in self.parts)

    def with_id(self, id: str) -> Message:
        """This message with ``id`` (``dataclasses.replace`` costs twice as much on the import path)."""
        return Message(role=self.role, parts=self.parts, id=id, created_at=self.created_at,
                       native_id=self.native_id, model=self.model, usage=self.usage, cost=self.cost,
                       compacted=self.compacted, extra=self.extra, unknown=self.unknown)


@dataclass(frozen=True, slots=True)
class Session:
    """A conversation with one agent, in one project; forks point at their parent."""

    id: str
    agent: str
    native_id: str | None = None
    title: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    parent_id: str | None = None
    fork_message_id: str | None = None
    fork_checkpoint: str | None = None
    project_id: str | None = None
    worktree: str | None = None
    branch: str | None = None
    cwd: str | None = None
    model: str | None = None
    redactions: Mapping[str, int] = field(default_factory=dict)
    source: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    unknown: Mapping[str, Any] = field(default_factory=dict)


@functools.lru_cache(maxsize=4096)
def _second(s: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s))


def to_iso(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds and ``Z``."""
    if ms is None:
        return None
    try:
        return _second(ms // 1000) + f".{ms % 1000:03d}Z"
    except (OverflowError, OSError, ValueError):
        return datetime.fromtimestamp(0, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def ago(iso: str | int | None, now_ms: int) -> str:
    """How long ago: an ISO time or milliseconds since the epoch."""
    if iso is None or iso == "":
        return "-"
    if isinstance(iso, int):
        secs = max(0, (now_ms - iso) / 1000)
    else:
        try:
            t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
        except ValueError:
            return iso
        secs = max(0, now_ms / 1000 - t.replace(tzinfo=t.tzinfo or UTC).timestamp())
    return ago_secs(secs)


def from_iso(text: str | None) -> int | None:
    """Parse ISO 8601 (``Z`` or offset; naive taken as UTC) to epoch milliseconds; None if unparsable."""
    if not text or not isinstance(text, str):
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def session_id_for(agent: str, native_id: str, created_at: int | None) -> str:
    """The deterministic oxide id of an imported session: time prefix, then a hash of its identity.

    Importing the same native session twice, in any clone, gives the same id.
    """
    digest = hashlib.sha1(f"{agent}:{native_id}".encode()).hexdigest()
    return f"{(created_at or 0) & 0xFFFFFFFFFFFF:012x}{digest[:20]}"


def new_session_id(now_ms: int, entropy: bytes) -> str:
    """A fresh oxide session id (forks, sessions started here): time prefix, then entropy."""
    return f"{now_ms & 0xFFFFFFFFFFFF:012x}{hashlib.sha1(entropy).hexdigest()[:20]}"


def message_id_for(session_id: str, seq: int, created_at: int | None) -> str:
    """The id of the message at ``seq`` of a session: time-ascending within a session, deterministic."""
    digest = hashlib.sha1(f"{session_id}:{seq}".encode()).hexdigest()
    return f"{(created_at or 0) & 0xFFFFFFFFFFFF:012x}{digest[:8]}"


def message_key(m: Message) -> str:
    """What makes two versions of a message the same message: the agent's own id, else its role,
    time and whole content (every part: texts, tool calls and results). An agent without ids
    writes the same line the same way; its messages can share a time and a text (aider stamps
    every message of a section with the section's time, and its status lines have no text), so
    the text alone would make two messages one."""
    if m.native_id:
        return "n:" + m.native_id
    parts = json.dumps([p.to_dict() for p in m.parts], sort_keys=True, default=str, ensure_ascii=False)
    digest = hashlib.sha1(parts.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return f"c:{m.role}:{m.created_at}:{digest}"


def merge_key(m: Message) -> str | None:
    """What a merge brought (a merged message, a merge's marker) is known by where it came from:
    the same in the merge's copy and in what an agent's file gives back of it after `resume
    --into` (the agent's line id is another). None for any other message."""
    came = m.extra.get(MERGED_FROM)
    if isinstance(came, Mapping) and came.get("session") and isinstance(came.get("seq"), int):
        return f"m:{came['session']}:{came['seq']}"
    rec = m.extra.get(MERGE_MARKER)
    if isinstance(rec, Mapping) and rec.get("fork"):
        return "x:" + json.dumps([rec.get("fork"), rec.get("tip"), rec.get("segments")], default=str)
    return None


def mark_compacted(messages: Iterable[Message]) -> list[Message]:
    """Mark every message before the last compaction message as compacted (originals are kept)."""
    msgs = list(messages)
    last = max((i for i, m in enumerate(msgs) if m.is_compaction()), default=-1)
    return [replace(m, compacted=True) if i < last and not m.compacted else m for i, m in enumerate(msgs)]
