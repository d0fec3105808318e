"""A session as text for `git oxide show`: the conversation by default, everything with ``full``.

The conversation is what people read: prompts and answers, each tool call on one line with the
gist of its input, tool results and reasoning folded to a few lines. Records the importers keep
whole (``other`` parts: progress and hook events, snapshots) are left out and counted. ``full``
prints every part, structured values as indented JSON (never a Python repr). Pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from oxide_git.core.model import Message, PartType

EMPTY = "empty message"  # how `show` counts a message with nothing to read among those it leaves out
RESULT_LINES = 4  # lines of a tool result shown before folding
TEXT_LINES = 40  # lines of a long answer shown before folding
_GIST_KEYS = ("command", "cmd", "file_path", "filePath", "path", "pattern", "query", "url",
              "description", "prompt", "title", "name")


def as_json_text(value: Any) -> str:
    """A value as readable text: strings as they are, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _one_line(text: str, width: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= width else s[: width - 1] + "…"


def tool_gist(value: Any, width: int = 100) -> str:
    """One line saying what a tool call does: its command, path or query, else compact JSON."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return _one_line(value, width)
        value = parsed if isinstance(parsed, dict) else value
    if isinstance(value, Mapping):
        for k in _GIST_KEYS:
            v = value.get(k)
            if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                v = " ".join(v)
            if isinstance(v, str) and v.strip():
                return _one_line(v, width)
        return _one_line(json.dumps(value, ensure_ascii=False, default=str), width)
    return _one_line(as_json_text(value), width)


def _fold(text: str, keep: int, indent: str, what: str) -> list[str]:
    lines = text.rstrip("\n").splitlines() or [""]
    out = [indent + ln for ln in lines[:keep]]
    if len(lines) > keep:
        out.append(f"{indent}… {len(lines) - keep} more line(s) of {what} (--full shows them)")
    return out


def counted(messages: int, records: int, *, noun: bool = False) -> str:
    """How a session, or its first ``records``, is counted everywhere (git-oxide(1), COUNTING):
    its messages (the conversation) and, when they differ, its records (everything stored, each
    numbered #N from #0), e.g. ``5 (8 records, #0-#7)``; ``noun``: ``5 messages (...)``."""
    head = f"{messages} message{'' if messages == 1 else 's'}" if noun else f"{messages}"
    span = f"#0-#{records - 1}" if records > 1 else "#0" if records else ""
    if messages == records:
        return head + (f" ({span})" if span else "")
    return f"{head} ({records} records, {span})"


def is_conversation(m: Message) -> bool:
    """A message people count: it holds something besides records kept whole."""
    return any(p.type != PartType.OTHER for p in m.parts)


def message_lines(seq: int, m: Message, names: dict[str, str], *, full: bool = False,
                  label: str = "") -> list[str]:
    head = f"#{seq} {m.role}" + (f" · {label}" if label else "") + (" · compacted" if m.compacted else "")
    out = [head]
    for p in m.parts:
        d = p.data
        if p.type == PartType.TEXT:
            text = str(d.get("text") or "")
            if text.strip():
                out += ([f"  {ln}" for ln in text.strip("\n").splitlines()] if full
                        else _fold(text.strip("\n"), TEXT_LINES, "  ", "text"))
        elif p.type == PartType.REASONING:
            text = str(d.get("text") or "")
            if full:
                out += ["  (reasoning)"] + [f"    {ln}" for ln in text.splitlines()]
            elif text.strip():
                n = len(text.strip().splitlines())
                out.append(f"  (reasoning, {n} line(s)) {_one_line(text.strip().splitlines()[0], 80)}")
        elif p.type == PartType.TOOL_CALL:
            name = str(d.get("name") or "tool")
            names[str(d.get("call_id"))] = name
            if full:
                out.append(f"  → {name} [{d.get('call_id')}]")
                out += [f"    {ln}" for ln in as_json_text(d.get("input")).splitlines()]
            else:
                out.append(f"  → {name}: {tool_gist(d.get('input'))}")
        elif p.type == PartType.TOOL_RESULT:
            name = names.get(str(d.get("call_id")), "tool")
            err = " (error)" if d.get("is_error") else ""
            text = as_json_text(d.get("output"))
            out.append(f"  ← {name}{err}" + (f" [{d.get('call_id')}]" if full else ""))
            out += ([f"    {ln}" for ln in text.splitlines()] if full
                    else _fold(text, RESULT_LINES, "    ", "output"))
        elif p.type == PartType.COMPACTION:
            summary = str(d.get("summary") or "")
            out.append("  (conversation compacted; summary:)")
            out += ([f"    {ln}" for ln in summary.splitlines()] if full
                    else _fold(summary, RESULT_LINES, "    ", "summary"))
        elif p.type in (PartType.FILE, PartType.IMAGE, PartType.PATCH):
            what = d.get("path") or d.get("mime") or ""
            out.append(f"  ({p.type}) {what}".rstrip())
            if p.type == PartType.PATCH and d.get("text"):
                out += ([f"    {ln}" for ln in str(d["text"]).splitlines()] if full
                        else _fold(str(d["text"]), RESULT_LINES, "    ", "patch"))
        elif full:  # a record kept whole
            out.append(f"  (record: {d.get('kind') or p.type})")
            out += [f"    {ln}" for ln in as_json_text(d.get("raw")).splitlines()]
    return out


def merge_label(m: Message) -> str:
    """`show`'s mark on a merged block (`git oxide merge`): its marker, and each message it brought."""
    if isinstance(m.extra.get("oxide_merge"), dict):
        return f"merge of fork {str(m.extra['oxide_merge'].get('fork') or '')[:8]}"
    came = m.extra.get("merged_from")
    return f"merged from {str(came.get('session') or '')[:8]}" if isinstance(came, dict) else ""


def conversation(messages: Iterable[tuple[int, Message]], *, full: bool = False,
                 hidden: dict[str, int] | None = None, names: dict[str, str] | None = None
                 ) -> Iterator[str]:
    """The lines of `show` after the header; ``hidden`` counts the left-out records by kind;
    ``names`` (tool call id -> tool name) carries over from an earlier page."""
    names = {} if names is None else names
    for seq, m in messages:
        if not full and not is_conversation(m):
            if hidden is not None:  # one a record (a record may hold several parts)
                kind = str(m.parts[0].get("kind") or "record").split("/")[0] if m.parts else EMPTY
                hidden[kind] = hidden.get(kind, 0) + 1
            continue
        harness = m.is_harness() or m.extra.get("isMeta")
        label = "harness context" if harness else merge_label(m)
        if harness and not full:  # what the agent's harness injected, on one line
            text = m.text().strip()
            n = len(text.splitlines())
            yield ""
            yield f"#{seq} {m.role} · {label} ({n} line(s), --full shows it): {_one_line(text, 70)}"
            continue
        lines = message_lines(seq, m, names, full=full, label=label)
        if len(lines) == 1 and not full:  # nothing to read (an empty assistant turn)
            if hidden is not None:
                hidden[EMPTY] = hidden.get(EMPTY, 0) + 1
            continue
        yield ""
        yield from lines
