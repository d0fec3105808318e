"""Aider's ``.aider.input.history``: every prompt typed (or given with ``--message``), with its time.

prompt_toolkit's ``FileHistory.store_string`` appends ``"\\n# <datetime.now()>\\n"`` (local time,
microseconds) and one ``+<line>`` per line of the prompt; its loader joins consecutive ``+`` lines
and ignores every other line. The chat history has no per-prompt times, so the importer gives
each user message the entry it was typed as (``extra["input"]``: the entry's exact text, blank
lines before it included), and the exporter writes those entries back unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from oxide_git.core.agent_files import AIDER_INPUT_HISTORY

INPUT_HISTORY = AIDER_INPUT_HISTORY


@dataclass(frozen=True, slots=True)
class Entry:
    raw: str  # exactly as in the file: the blank lines before it, "# <time>", the "+" lines
    time: str  # "YYYY-MM-DD HH:MM:SS.ffffff" (local, no zone)
    text: str  # the prompt: the "+" lines joined with "\n"


def input_history_of(chat_history: Path) -> Path:
    """Aider resolves both files against the same folder (the git root, else the cwd)."""
    return chat_history.parent / INPUT_HISTORY


def read_entries(path: Path) -> list[Entry]:
    """The entries of an input history file; [] when there is none (or it is not text)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    if b"\0" in data[:8000]:
        return []
    return parse_entries(data.decode("utf-8", errors="replace"))


def parse_entries(text: str) -> list[Entry]:
    entries: list[Entry] = []
    raw: list[str] = []  # the open entry's text (or the blank lines before the first one)
    time: str | None = None
    lines: list[str] = []

    def close() -> None:
        if time is not None:
            entries.append(Entry("".join(raw), time, "\n".join(lines)))

    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare.startswith("# ") and (time is None or lines):
            # a new entry; the blank lines that ended the previous one are this one's lead
            lead: list[str] = []
            while raw and not raw[-1].strip():
                lead.insert(0, raw.pop())
            close()
            raw, time, lines = [*lead, line], bare[2:].strip(), []
        else:
            raw.append(line)
            if bare.startswith("+") and time is not None:
                lines.append(bare[1:])
    close()
    return entries


def render(time: str, text: str) -> str:
    """A new entry as ``store_string`` writes it."""
    return f"\n# {time}\n" + "".join(f"+{ln}\n" for ln in text.split("\n"))


def missing(entries: Sequence[str], existing: str) -> list[str]:
    """The entries not already in ``existing`` (a second resume appends nothing)."""
    return [e for e in entries if e and e not in existing]
