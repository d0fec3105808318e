"""What an export shows of a session, whatever its format: the session's and checkpoints' views, and
its messages spooled and replayed (Markdown and HTML read these)."""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from oxide_git.core.model import Message, PartType, Session


@dataclass
class CheckpointView:
    id: str
    kind: str
    message_id: str | None
    branch: str
    worktree: str
    head: str | None
    created_at: str | None
    title: str
    files: list[dict[str, Any]]
    additions: int
    deletions: int
    files_total: int
    patch: str | None = None
    patch_truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("patch", "patch_truncated")}
        return d


@dataclass
class SessionView:
    """One session ready to render: redacted messages stream, counts grow as they do."""

    session: Session
    count: int
    checkpoints: list[CheckpointView]
    stored: dict[str, int]
    extra: Counter[str] = field(default_factory=Counter)
    first_prompt: str | None = None  # the first real prompt, found by the renderer (for the title)
    usage: dict[str, Any] | None = None  # the session's tokens and cost (``usage.session_total``)
    _messages: Iterator[tuple[int, Message]] | None = None

    def messages(self) -> Iterator[tuple[int, Message]]:
        assert self._messages is not None
        return self._messages

    def timeline(self) -> Iterator[tuple[int, Message] | CheckpointView]:
        """Messages in order, each checkpoint where it was taken (those tied to no message of
        this session at the end): a prompt checkpoint (the state before its prompt was worked on)
        just before its message, any other kind just after the last message it saw."""
        before: dict[str | None, list[CheckpointView]] = {}
        after: dict[str | None, list[CheckpointView]] = {}
        for cp in self.checkpoints:
            (before if cp.kind == "prompt" else after).setdefault(cp.message_id, []).append(cp)
        for seq, m in self.messages():
            yield from before.pop(m.id, [])
            yield seq, m
            yield from after.pop(m.id, [])
        for cps in [*before.values(), *after.values()]:
            yield from cps

    @property
    def redactions(self) -> dict[str, int]:
        total = Counter(self.stored) + self.extra
        return dict(sorted(total.items()))


def spool() -> IO[str]:
    """Where a renderer keeps what it drew until the heading that counts it is written: in memory
    up to 4 MB, then in a temporary file, so an export of a million messages stays small."""
    return tempfile.SpooledTemporaryFile(max_size=4 << 20, mode="w+", encoding="utf-8", newline="\n")


def replay(buf: IO[str]) -> Iterator[str]:
    """What ``buf`` (a ``spool``) holds, in chunks, then closes it."""
    buf.seek(0)
    while chunk := buf.read(1 << 16):
        yield chunk
    buf.close()


def tool_names(m: Message, names: dict[str, str]) -> None:
    """Remember each tool call's name by call id (results name the tool they answer)."""
    for p in m.parts:
        if p.type == PartType.TOOL_CALL and p.get("call_id"):
            names[str(p.get("call_id"))] = str(p.get("name") or "tool")
