"""One pass over ``.aider.chat.history.md``: lines in, sessions and messages out (see ``aider``).

Every message keeps the exact text it was read from in ``extra["raw"]`` (the blank lines before
it included, line endings as in the file), a session's first header in ``extra["lead"]``: the
concatenation gives back the file byte for byte, which is what the exporter writes for a session
oxide did not change. A section whose opening status lines say ``Restored previous conversation
history.`` (``aider --restore-chat-history``) continues the session before it: its header becomes
part of its first message's raw text, and no new session starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oxide_git.agents import Event, FoundMessage, FoundSession, Resumable
from oxide_git.agents.aider.input import Entry
from oxide_git.core.model import Message, Part, Role, Session, session_id_for

name = "aider"
MARKER = "git-oxide: restored session "
RESTORED = "Restored previous conversation history."

_TOKENS = re.compile(r"([\d.]+)([kKmM]?) (sent|received|cache write|cache hit)")
_COST = re.compile(r"Cost: \$([\d.]+) message, \$([\d.]+) session")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+)")
_WEAK = re.compile(r"^Weak model: (\S+)")
_VERSION = re.compile(r"^Aider (v\S+)")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*?)\s*$")
_ERROR = re.compile(r"^(\^C|Unable to|Traceback)|Error\b|Exception\b|(?i:\berror\b)")
_ANSWER = re.compile(r"\? .*\[[^\]]*\]: (\S.*?)\s*$")  # "Add file? (Y)es/(N)o [Yes]: y"
_SEARCH = re.compile(r"^<{5,9} SEARCH>?\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")
_TOKEN_KEYS = {"sent": "input_tokens", "received": "output_tokens",
               "cache write": "cache_write_tokens", "cache hit": "cache_read_tokens"}
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


def header_ms(stamp: str) -> int | None:
    try:
        dt = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(dt.timestamp() * 1000)


def unquote(line: str, prefix_len: int) -> str:
    """A user or tool line without its prefix and the hard break's two trailing spaces."""
    s = line[prefix_len:]
    if s.endswith("  "):
        s = s[:-2]
    return "" if not s.strip() else s


def patches(lines: Sequence[str]) -> list[Part]:
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


def usage_of(line: str) -> tuple[dict[str, Any], float | None]:
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


def _lines(text: str) -> list[str]:
    """A prompt's lines as compared with the chat history (which has no trailing spaces, and
    not every empty last line)."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _with_raw(m: Message, more: str) -> Message:
    return replace(m, extra={**m.extra, "raw": str(m.extra.get("raw", "")) + more})


class Reader:
    """The state of one pass over a history file."""

    def __init__(self, path: Path, ordinals: Mapping[str, int], inputs: Sequence[Entry],
                 input_at: int) -> None:
        self.path = path
        self.ordinals = dict(ordinals)
        self.inputs, self.input_at = inputs, input_at
        self.session: Session | None = None
        self.model: str | None = None
        self.kind: str | None = None  # the open block: user / assistant / tool
        self.lines: list[str] = []
        self.raw: list[str] = []  # the open block's exact text
        self.blanks: list[str] = []  # blank lines not placed yet
        self.carry = ""  # text that belongs to no message yet (a header, a marker line)
        self.pending: list[Message] = []  # messages held until the next block settles them
        self.emitted = 0  # messages of this session emitted so far
        self.stamp = ""  # the open section's header time: prompts typed in it are not older
        self.tools = 0

    # -- sections -----------------------------------------------------------------------------

    def start(self, stamp: str | None, header: str | None, raw: str, offset: int) -> Iterator[Event]:
        """A new session at this header (or at the lines before the first one)."""
        created = header_ms(stamp) if stamp else None
        self.stamp = stamp or ""
        native = "preamble" if stamp is None else f"{stamp}#{self.ordinals.get(stamp, 0) - 1}"
        cwd = str(self.path.parent)
        lead = self.carry + self.take_blanks() + raw
        extra: dict[str, Any] = {"timezone": "local time read as UTC", "lead": lead}
        if header is not None:
            extra["header"] = header
        self.session = Session(
            id=session_id_for(name, native, created), agent=name, native_id=native,
            created_at=created, worktree=cwd, cwd=cwd,
            source={"path": str(self.path), "offset": offset}, extra=extra,
        )
        self.model, self.tools, self.emitted, self.carry = None, 0, 0, ""
        yield FoundSession(self.session)

    def continue_(self, stamp: str, header: str, raw: str) -> Iterator[Event]:
        """A restored section: the same session goes on; its header is kept as raw text."""
        assert self.session is not None
        self.stamp = stamp
        self.carry += self.take_blanks() + raw
        sections = [*self.session.extra.get("restored_sections", []), header]
        yield from self.update(extra={**self.session.extra, "restored_sections": sections})

    def end_section(self) -> Iterator[Event]:
        """Before a header or at the end: the open block closes; blank lines go to the last
        message (or the session's lead when it has none)."""
        yield from self.close()
        rest = self.carry + self.take_blanks()
        self.carry = ""
        if rest:
            if self.pending:
                self.pending[-1] = _with_raw(self.pending[-1], rest)
            elif self.session is not None and not self.emitted:
                lead = str(self.session.extra.get("lead", "")) + rest
                yield from self.update(extra={**self.session.extra, "lead": lead})
            else:
                self.carry = rest
        yield from self.flush()

    def take_blanks(self) -> str:
        out, self.blanks = "".join(self.blanks), []
        return out

    # -- lines --------------------------------------------------------------------------------

    def feed(self, kind: str, line: str, raw: str, offset: int) -> Iterator[Event]:
        if kind == "blank":
            if self.kind is not None and self.kind != "assistant":
                yield from self.close()
            self.blanks.append(raw)
            return
        if self.session is None:
            yield from self.start(None, None, "", offset)
        if kind == "assistant" and self.kind == "tool":
            # aider's tool_output quotes a multi-line message on its first line only (its command
            # line with a two-line --message, a command's output); ai_output and user_input always
            # start with a blank line, so an unquoted line right after a status line is its rest
            kind, line = "tool", "> " + line
        if kind != self.kind:
            yield from self.close()
            self.kind = kind
            self.raw = [self.carry]
            self.carry = ""
        elif kind == "assistant":
            self.lines.extend([""] * len(self.blanks))
        self.raw.append(self.take_blanks() + raw)
        self.lines.append(line)

    def close(self) -> Iterator[Event]:
        """Turn the open block into a message."""
        kind, lines, raw = self.kind, self.lines, "".join(self.raw)
        self.kind, self.lines, self.raw = None, [], []
        if kind is None or not lines or self.session is None:
            self.carry += raw
            return
        created = self.session.created_at
        if kind == "user":
            text = "\n".join(unquote(ln, 5) for ln in lines)
            before = self.pending[0].text() if len(self.pending) == 1 and (
                self.pending[0].role == Role.USER) else ""
            yield from self.flush()
            if self.session.title is None and text.strip():
                yield from self.update(title=text.strip().splitlines()[0][:100])
            extra: dict[str, Any] = {"raw": raw}
            # "/code X" (or /ask, /architect...) is logged as "#### /code X" then "#### X": the
            # echo was never typed, and must not take a later prompt's entry
            echo = before.startswith("/") and before.partition(" ")[2] == text
            entry = None if echo else self.typed(text)
            if entry is not None:
                extra["input"] = entry.raw
                extra["typed_at"] = entry.time
            self.pending = [Message(Role.USER, (Part.text(text),), created_at=created, extra=extra)]
        elif kind == "assistant":
            yield from self.flush()
            parts = (Part.text("\n".join(lines)), *patches(lines))
            self.pending = [Message(Role.ASSISTANT, parts, created_at=created, model=self.model,
                                    extra={"raw": raw})]
        else:
            yield from self.tool([unquote(ln, 2) for ln in lines], raw, created)

    def typed(self, text: str, answer: bool = False, run: bool = False) -> Entry | None:
        """The input-history entry typed as ``text`` in this section: the next prompt with that
        text (``user_input`` writes ``splitlines()``, so a trailing line break is not in the
        chat); for a confirmation's logged answer (``y``, ``n``...: ``confirm_ask`` logs it
        lower-cased) or a ``/run`` entry, only the very next entries of that kind (an answer
        taken by default was never typed, and must not take one typed later)."""
        for i in range(self.input_at, len(self.inputs)):
            e = self.inputs[i]
            said = e.text.strip().lower()
            if answer or run:
                short = len(said) <= 12 and "\n" not in said
                if not (short if answer else said.startswith("/run ")):
                    return None
            if e.time < self.stamp:
                continue
            if (said[:1] == text[:1].lower() if answer else
                    said == text.lower() if run else _lines(e.text) == _lines(text)):
                self.input_at = i + 1
                return e
            if answer or run:
                return None
        return None

    def tool(self, out: list[str], raw: str, created: int | None) -> Iterator[Event]:
        assert self.session is not None
        extra_parts: list[Part] = []
        error = False
        typed: list[str] = []
        own: tuple[dict[str, Any], float | None] | None = None
        for line in out:
            error = error or bool(_ERROR.search(line))
            if (answer := _ANSWER.search(line)) and (e := self.typed(answer.group(1), answer=True)):
                typed.append(e.raw)  # a confirmation the user typed (not --yes-always's)
            elif line.startswith("Running "):
                # a shell command aider ran goes into the input history as "/run CMD", twice
                # (prompt_toolkit's own history is the same file)
                for _ in range(2):
                    if (e := self.typed(f"/run {line[8:].strip()}", run=True)) is not None:
                        typed.append(e.raw)
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
                extra_parts.append(Part.other("commit", {"sha": m.group(1), "message": m.group(2),
                                                         "line": line}))
            elif line.startswith("Tokens: "):
                usage, cost = usage_of(line)
                head = self.pending[0] if self.pending else None
                if head is not None and head.role == Role.ASSISTANT and head.usage is None:
                    self.pending[0] = replace(head, usage=usage, cost=cost)
                else:  # a request that got no answer (an error) spent these: kept on this record
                    own = (usage, cost)
        out = [ln for ln in out if not ln.startswith(MARKER)]
        if not out:
            self.carry += raw  # the marker line alone: the next message's text
            return
        call_id = f"aider-{self.tools}"
        self.tools += 1
        parts = (Part.tool_result(call_id, "\n".join(out), is_error=error), *extra_parts)
        extra: dict[str, Any] = {"raw": raw}
        if typed:
            extra["input"] = "".join(typed)
        self.pending.append(Message(Role.TOOL, parts, created_at=created, extra=extra,
                                    usage=own[0] if own else None, cost=own[1] if own else None))

    def update(self, **changes: Any) -> Iterator[Event]:
        assert self.session is not None
        if any(getattr(self.session, k) != v for k, v in changes.items()):
            self.session = replace(self.session, **changes)
            yield FoundSession(self.session)

    def flush(self) -> Iterator[Event]:
        pending, self.pending = self.pending, []
        assert self.session is not None or not pending
        for msg in pending:
            self.emitted += 1
            yield FoundMessage(self.session.id, msg)  # type: ignore[union-attr]

    def resumable(self, offset: int, ordinals: Mapping[str, int]) -> Resumable:
        return Resumable(offset, {"ordinals": dict(ordinals), "input_at": self.input_at})


HEADER = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")


def kind_of(line: str) -> str:
    """header, user, tool, blank or assistant: the five kinds of line aider writes."""
    if HEADER.match(line):
        return "header"
    if line.startswith("#### ") or line == "####":
        return "user"
    if line.startswith("> ") or line == ">":
        return "tool"
    return "blank" if not line.strip() else "assistant"
