"""Aider: ``.aider.chat.history.md`` at the top of a worktree, many sessions per file.

Grammar (aider's ``io.py``, checked against aider 0.86.2, see docs/agents/aider.md):
``# aider chat started at YYYY-MM-DD HH:MM:SS`` starts a section (one aider run), ``#### `` lines
are user input (two trailing spaces = markdown hard break), ``> `` lines are tool and status output
(the first one of a section is aider's whole command line), every other line is assistant markdown.
Unlike aider's own ``split_chat_history_markdown`` this reader keeps every line: ``# `` headings
stay in the assistant text, and each message keeps its exact text (``aider_read``).

- Sessions: a section starts one, unless its opening status lines say ``Restored previous
  conversation history.`` (``aider --restore-chat-history``): then it continues the session of
  the section before it, and its header is listed in ``extra["restored_sections"]``.
- The header time is local and has no zone; it is read **as if it were UTC** (the raw header is
  kept in ``session.extra["header"]``). Messages have no times of their own: they get the header
  time; a user message also gets its ``.aider.input.history`` entry (``aider_input``).
- Session identity: ``"<header time>#<ordinal of that time in the file>"`` of its first section.
- A run of ``> `` lines becomes one ``tool`` message: a ``tool_result`` with the lines as output,
  plus a ``file`` part per ``Applied edit to F`` and an ``other``/``commit`` part per ``Commit``.
  ``Tokens: ...`` lines give usage and cost to the assistant message they follow; ``Main model:``
  gives the model.
- Every line is one of the grammar's five kinds (header, user, tool, blank, assistant), so the
  importer has no record of unknown type to report (no ``Unknown`` event).
- Resumable points are the headers of sections that start a session: the last session may still
  grow (aider appends, and a restored section continues it), so a restart re-emits it whole and
  the store must replace what it had for that session.
- A last section without aider's announcements yet (a run starting) is left for the next read.
- Input that is not text (a NUL byte in its first 8 KB) is refused with ``UnsupportedFormat``.
- Export returns the sections to append (``aider_export``); the caller appends, never replaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Event, Export, Problem, Resumable
from oxide_git.agents.aider.input import input_history_of, read_entries
from oxide_git.agents.aider.read import HEADER, MARKER, RESTORED, Reader, header_ms, kind_of, name, unquote
from oxide_git.core.agent_files import AIDER_HISTORY
from oxide_git.core.errors import UnsupportedFormat
from oxide_git.core.model import Message, Session

__all__ = ["HISTORY", "MARKER", "discover", "export", "kind_of", "name", "parse"]

HISTORY = AIDER_HISTORY
FILE_PATTERNS = (HISTORY,)
WORKTREE_FILES = (HISTORY,)  # `watch` imports it wherever it changes in a worktree
APPEND_EXPORT = True  # a resume appends its turns to the history Aider keeps appending to
SNIFF = 8000  # bytes looked at for a NUL, as git does to call a file binary

_ANNOUNCED = re.compile(r"^Aider v\d")
_INPUT_ENTRY = re.compile(rb"^# \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\r?$")


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


@dataclass
class _Section:
    """A header whose section is not known yet to start a session or to continue one."""

    stamp: str
    header: str
    raw: str
    offset: int
    ordinals: dict[str, int]  # before this header
    prelude: list[tuple[str, str, str, int]] = field(default_factory=list)

    def add(self, kind: str, line: str, raw: str, at: int) -> bool:
        """Buffer a line of the opening status block; False when the block is over."""
        if kind not in ("tool", "blank") and not (
                kind == "assistant" and self.prelude and self.prelude[-1][0] == "tool"):
            return False  # (an unquoted line right after a status line goes on with it)
        self.prelude.append((kind, line, raw, at))
        return True

    def announced(self) -> bool:
        """Aider's announcements are written ("Aider vX" first, "Restored ..." among them)."""
        return any(k == "tool" and _ANNOUNCED.match(unquote(ln, 2)) for k, ln, _r, _o in self.prelude)

    def restored(self) -> bool:
        return any(k == "tool" and unquote(ln, 2).strip() == RESTORED for k, ln, _r, _o in self.prelude)


def _settle(reader: Reader, sec: _Section, start: int) -> Iterator[Event | Resumable]:
    """Start the section's session, or continue the one before; then its buffered lines."""
    if sec.restored() and reader.session is not None:
        yield from reader.continue_(sec.stamp, sec.header, sec.raw)
    else:
        if sec.offset != start and reader.session is not None:
            # (blank lines alone before the first header: the restart point stays before them)
            yield reader.resumable(sec.offset, sec.ordinals)
        yield from reader.start(sec.stamp, sec.header, sec.raw, sec.offset)
    for kind, line, raw, at in sec.prelude:
        yield from reader.feed(kind, line, raw, at)


def parse(
    path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None
) -> Iterator[Event]:
    """Events for every session of one history file, from ``offset`` (a session header) on."""
    st = state or {}
    ordinals = dict(st.get("ordinals", {}))
    reader = Reader(Path(path), ordinals, read_entries(input_history_of(Path(path))),
                    int(st.get("input_at", 0)))
    last = reader.resumable(offset, ordinals)
    sec: _Section | None = None
    pos = offset
    with open(path, "rb") as f:
        f.seek(offset)
        head = f.read(SNIFF)
        if b"\0" in head:
            raise UnsupportedFormat("not a text file (it holds NUL bytes), so not an aider chat history")
        if not offset and _INPUT_ENTRY.match(head.lstrip().split(b"\n", 1)[0]):
            yield Problem(1, "an aider input history, not a chat history: it is read with the "
                             f"{HISTORY} beside it")
            yield last
            return
        f.seek(offset)
        for number, data in enumerate(f, 1):
            line_at, pos = pos, pos + len(data)
            raw = data.decode("utf-8", errors="replace")
            line = raw.rstrip("\n").rstrip("\r")
            if "\ufffd" in line and b"\xef\xbf\xbd" not in data:
                yield Problem(number, "invalid UTF-8 replaced")
            kind = kind_of(line)
            if line_at == offset and offset and kind != "header":
                yield Problem(number, "offset is not at a session header: the file has changed")
            if kind == "header":
                if sec is not None:
                    for ev in _settle(reader, sec, offset):
                        last = ev if isinstance(ev, Resumable) else last
                        yield ev
                yield from reader.end_section()
                stamp = HEADER.match(line).group(1)  # type: ignore[union-attr]
                if header_ms(stamp) is None:
                    yield Problem(number, f"invalid time in session header: {stamp}")
                before = dict(reader.ordinals)
                reader.ordinals[stamp] = reader.ordinals.get(stamp, 0) + 1
                sec = _Section(stamp, line, raw, line_at, before)
                if line_at == offset:
                    last = reader.resumable(offset, before)
                continue
            if sec is not None and sec.add(kind, line, raw, line_at):
                continue
            if sec is not None:
                for ev in _settle(reader, sec, offset):
                    last = ev if isinstance(ev, Resumable) else last
                    yield ev
                sec = None
            yield from reader.feed(kind, line, raw, line_at)
    if sec is not None and (sec.restored() or sec.announced()):
        for ev in _settle(reader, sec, offset):
            last = ev if isinstance(ev, Resumable) else last
            yield ev
    # else aider is starting: its header (and command line) are written a second or more before
    # its announcements say whether it restored the history; the section is read once they are
    yield from reader.end_section()
    yield last


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """The session as sections to APPEND to the history file, and its prompts to append to the
    input history (see ``aider_export``)."""
    from oxide_git.agents.aider.export import export as _export

    return _export(session, messages, env)
