"""Aider: ``.aider.chat.history.md`` at the top of a worktree, many sessions per file.

Grammar (aider's ``io.py``): ``# aider chat started at YYYY-MM-DD HH:MM:SS`` starts a session,
``#### `` lines are user input (two trailing spaces = markdown hard break), ``> `` lines are tool
and status output, every other line is assistant markdown. Unlike aider's own
``split_chat_history_markdown`` this reader keeps every non-blank line: ``# `` headings stay in the
assistant text, and blank lines are dropped only where they frame a block.

- The header time is local and has no zone; it is read **as if it were UTC** (the raw header is kept
  in ``session.extra["header"]``). Messages have no times of their own: they get the header time.
- Session identity: ``"<header time>#<ordinal of that time in the file>"``.
- A run of ``> `` lines becomes one ``tool`` message: a ``tool_result`` with the lines as output,
  plus a ``file`` part per ``Applied edit to F`` and an ``other``/``commit`` part per ``Commit``.
  ``Tokens: ...`` lines give usage and cost to the assistant message they follow; ``Main model:``
  gives the model.
- Resumable points are the session headers only: the last session may still grow, so a restart
  re-emits it whole and the store must replace what it had for that session.
- Export returns one new section (``files`` maps the history path to that section only); the
  caller **appends** it to the existing file, it never replaces the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oxide_git.agents import (
    AgentEnv,
    Event,
    Export,
    FoundMessage,
    FoundSession,
    Problem,
    Resumable,
)
from oxide_git.model import Message, Part, Role, Session, session_id_for

name = "aider"
HISTORY = ".aider.chat.history.md"
MARKER = "git-oxide: restored session "

_HEADER = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_TOKENS = re.compile(r"([\d.]+)([kKmM]?) (sent|received|cache write|cache hit)")
_COST = re.compile(r"Cost: \$([\d.]+) message, \$([\d.]+) session")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+)")
_WEAK = re.compile(r"^Weak model: (\S+)")
_VERSION = re.compile(r"^Aider (v\S+)")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*?)\s*$")
_ERROR = re.compile(r"^(\^C|Unable to|Traceback)|Error\b|Exception\b|(?i:\berror\b)")
_SEARCH = re.compile(r"^<{5,9} SEARCH>?\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")
_TOKEN_KEYS = {"sent": "input_tokens", "received": "output_tokens",
               "cache write": "cache_write_tokens", "cache hit": "cache_read_tokens"}
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


def discover(env: AgentEnv) -> list[Path]:
    """``.aider.chat.history.md`` (or ``$AIDER_CHAT_HISTORY_FILE``) at the top of each worktree."""
    names = [HISTORY]
    custom = env.environ.get("AIDER_CHAT_HISTORY_FILE")
    if custom and custom not in names:
        names.append(custom)
    found: list[Path] = []
    for top in env.worktrees:
        for n in names:
            p = Path(top) / n  # an absolute name replaces the worktree
            if p not in found and p.is_file() and env.belongs(str(p.parent)):
                found.append(p)
    return found


def _header_ms(stamp: str) -> int | None:
    try:
        dt = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(dt.timestamp() * 1000)


def _kind(line: str) -> str:
    if _HEADER.match(line):
        return "header"
    if line.startswith("#### ") or line == "####":
        return "user"
    if line.startswith("> ") or line == ">":
        return "tool"
    return "blank" if not line.strip() else "assistant"


def _unquote(line: str, prefix_len: int) -> str:
    """A user or tool line without its prefix and the hard break's two trailing spaces."""
    s = line[prefix_len:]
    if s.endswith("  "):
        s = s[:-2]
    return "" if not s.strip() else s


def _patches(lines: Sequence[str]) -> list[Part]:
    """SEARCH/REPLACE blocks and fenced unified diffs, each as a patch part."""
    out: list[Part] = []
    last_path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SEARCH.match(line):
            end = next((j for j in range(i + 1, len(lines)) if _REPLACE.match(lines[j])), None)
            if end is None:
                break
            path = None
            for k in range(i - 1, max(-1, i - 4), -1):
                cand = lines[k].strip()
                if cand.startswith("```") or not cand:
                    continue
                cand = cand.strip("#*:` ")
                path = cand if cand and not any(c.isspace() for c in cand) else None
                break
            last_path = path or last_path
            out.append(Part.patch("\n".join(lines[i : end + 1]), path=last_path))
            i = end + 1
            continue
        if line.strip() in ("```diff", "```patch"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            body = lines[i + 1 : end] if end is not None else []
            if any(b.startswith("@@") for b in body):
                plus = next((b[4:].strip() for b in body if b.startswith("+++ ")), None)
                if plus and plus.startswith("b/"):
                    plus = plus[2:]
                out.append(Part.patch("\n".join(body), path=plus))
                i = end + 1 if end is not None else len(lines)
                continue
        i += 1
    return out


def _usage(line: str) -> tuple[dict[str, Any], float | None]:
    usage: dict[str, Any] = {"raw": line}
    for num, unit, what in _TOKENS.findall(line):
        try:
            usage[_TOKEN_KEYS[what]] = int(float(num) * _SCALE[unit.lower()])
        except ValueError:
            continue
        if unit:
            usage["approximate"] = True
    cost = None
    m = _COST.search(line)
    if m:
        cost = float(m.group(1))
        usage["session_cost"] = float(m.group(2))
    return usage, cost


class _Reader:
    """The state of one pass over a history file."""

    def __init__(self, path: Path, ordinals: Mapping[str, int]) -> None:
        self.path = path
        self.ordinals = dict(ordinals)
        self.session: Session | None = None
        self.model: str | None = None
        self.kind: str | None = None  # the open block: user / assistant / tool
        self.lines: list[str] = []
        self.blanks = 0
        self.pending: list[Message] = []  # an assistant message and the tool runs after it
        self.tools = 0

    def start(self, stamp: str | None, header: str | None, offset: int) -> Iterator[Event]:
        yield from self.close()
        yield from self.flush()
        created = _header_ms(stamp) if stamp else None
        if stamp is None:
            native = "preamble"
        else:
            native = f"{stamp}#{self.ordinals.get(stamp, 0)}"
            self.ordinals[stamp] = self.ordinals.get(stamp, 0) + 1
        cwd = str(self.path.parent)
        extra: dict[str, Any] = {"timezone": "local time read as UTC"}
        if header is not None:
            extra["header"] = header
        self.session = Session(
            id=session_id_for(name, native, created), agent=name, native_id=native,
            created_at=created, worktree=cwd, cwd=cwd,
            source={"path": str(self.path), "offset": offset}, extra=extra,
        )
        self.model, self.tools = None, 0
        yield FoundSession(self.session)

    def feed(self, kind: str, line: str, offset: int) -> Iterator[Event]:
        if kind == "blank":
            if self.kind == "assistant":
                self.blanks += 1
            elif self.kind is not None:
                yield from self.close()
            return
        if self.session is None:
            yield from self.start(None, None, offset)
        if kind != self.kind:
            yield from self.close()
            self.kind = kind
        if kind == "assistant":
            self.lines.extend([""] * self.blanks)
            self.blanks = 0
        self.lines.append(line)

    def close(self) -> Iterator[Event]:
        """Turn the open block into a message."""
        kind, lines = self.kind, self.lines
        self.kind, self.lines, self.blanks = None, [], 0
        if kind is None or not lines or self.session is None:
            return
        created = self.session.created_at
        if kind == "user":
            text = "\n".join(_unquote(ln, 5) for ln in lines)
            yield from self.flush()
            if self.session.title is None and text.strip():
                title = text.strip().splitlines()[0][:100]
                yield from self.update(title=title)
            yield self.found(Message(Role.USER, (Part.text(text),), created_at=created))
        elif kind == "assistant":
            yield from self.flush()
            parts = (Part.text("\n".join(lines)), *_patches(lines))
            self.pending = [Message(Role.ASSISTANT, parts, created_at=created, model=self.model)]
        else:
            yield from self.tool([_unquote(ln, 2) for ln in lines], created)

    def tool(self, out: list[str], created: int | None) -> Iterator[Event]:
        assert self.session is not None
        extra_parts: list[Part] = []
        error = False
        for line in out:
            error = error or bool(_ERROR.search(line))
            if line.startswith(MARKER):
                yield from self.update(extra={**self.session.extra,
                                              "restored_from": line[len(MARKER):].strip()})
            elif m := _MODEL.match(line):
                self.model = m.group(1)
                yield from self.update(model=self.model)
            elif m := _WEAK.match(line):
                yield from self.update(extra={**self.session.extra, "weak_model": m.group(1)})
            elif m := _VERSION.match(line):
                yield from self.update(extra={**self.session.extra, "aider_version": m.group(1)})
            elif m := _APPLIED.match(line):
                extra_parts.append(Part.file(m.group(1), action="edit"))
            elif m := _COMMIT.match(line):
                raw = {"sha": m.group(1), "message": m.group(2), "line": line}
                extra_parts.append(Part.other("commit", raw))
            elif line.startswith("Tokens: ") and self.pending:
                head = self.pending[0]
                if head.role == Role.ASSISTANT and head.usage is None:
                    usage, cost = _usage(line)
                    self.pending[0] = replace(head, usage=usage, cost=cost)
        out = [ln for ln in out if not ln.startswith(MARKER)]
        if not out:
            return
        call_id = f"aider-{self.tools}"
        self.tools += 1
        parts = (Part.tool_result(call_id, "\n".join(out), is_error=error), *extra_parts)
        msg = Message(Role.TOOL, parts, created_at=created)
        if self.pending:
            self.pending.append(msg)
        else:
            yield self.found(msg)

    def update(self, **changes: Any) -> Iterator[Event]:
        assert self.session is not None
        if any(getattr(self.session, k) != v for k, v in changes.items()):
            self.session = replace(self.session, **changes)
            yield FoundSession(self.session)

    def found(self, msg: Message) -> FoundMessage:
        assert self.session is not None
        return FoundMessage(self.session.id, msg)

    def flush(self) -> Iterator[Event]:
        pending, self.pending = self.pending, []
        for msg in pending:
            yield self.found(msg)


def parse(
    path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None
) -> Iterator[Event]:
    """Events for every session of one history file, from ``offset`` (a session header) on."""
    ordinals = dict((state or {}).get("ordinals", {}))
    reader = _Reader(Path(path), ordinals)
    last = Resumable(offset, {"ordinals": dict(ordinals)})
    pos = offset
    with open(path, "rb") as f:
        f.seek(offset)
        for number, raw in enumerate(f, 1):
            line_at, pos = pos, pos + len(raw)
            line = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
            if "\ufffd" in line and b"\xef\xbf\xbd" not in raw:
                yield Problem(number, "invalid UTF-8 replaced")
            kind = _kind(line)
            if line_at == offset and offset and kind != "header":
                yield Problem(number, "offset is not at a session header: the file has changed")
            if kind != "header":
                yield from reader.feed(kind, line, line_at)
                continue
            stamp = _HEADER.match(line).group(1)  # type: ignore[union-attr]
            if _header_ms(stamp) is None:
                yield Problem(number, f"invalid time in session header: {stamp}")
            yield from reader.close()
            yield from reader.flush()
            last = Resumable(line_at, {"ordinals": dict(reader.ordinals)})
            if line_at != offset:
                yield last
            yield from reader.start(stamp, line, line_at)
    yield from reader.close()
    yield from reader.flush()
    yield last




def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """One new ``# aider chat started at`` section for ``session``, to APPEND to the history file
    (see ``aider_export``)."""
    from .aider_export import export as _export

    return _export(session, messages, env)
