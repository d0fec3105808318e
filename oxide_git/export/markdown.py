"""Markdown export for pull requests and CI job summaries: prompts and answers as text, tool calls
and results folded in ``<details>``, each checkpoint's files with a diffstat, redaction counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import IO, Any

from oxide_git.core.model import Message, PartType
from oxide_git.export.render_text import counted
from oxide_git.export.views import CheckpointView, SessionView, replay, spool, tool_names

CLIP = 4000  # characters of a tool input or output shown in Markdown


def fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    f = "`" * max(3, longest + 1)
    return f"{f}{lang}\n{text.rstrip()}\n{f}"


def clip(text: str, n: int = CLIP) -> str:
    return text if len(text) <= n else text[:n] + f"\n… ({len(text) - n} more characters)"


def as_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, dict) and "text" in x for x in v):
        return "\n".join(str(x["text"]) for x in v)
    return json.dumps(v, ensure_ascii=False, indent=2, sort_keys=True, default=str)


def _esc(text: str) -> str:
    """Text safe inside a ``<summary>``: no HTML, one line."""
    one = " ".join(text.split())
    one = one if len(one) <= 80 else one[:79] + "…"
    return one.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _fold(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def redactions_line(counts: dict[str, int]) -> str:
    if not counts:
        return "none"
    return ", ".join(f"{k} × {v}" for k, v in sorted(counts.items()))


def diffstat(cp: CheckpointView) -> str:
    width = max((len(f["path"]) for f in cp.files), default=0)
    lines = []
    for f in cp.files:
        n = f["additions"] + f["deletions"]
        bar = "Bin" if f["binary"] else (
            f"{n} " + "+" * min(f["additions"], 40) + "-" * min(f["deletions"], 40))
        lines.append(f" {f['path'].ljust(width)} | {bar}")
    if cp.files_total > len(cp.files):
        lines.append(f" … {cp.files_total - len(cp.files)} more file(s)")
    lines.append(f" {cp.files_total} file(s) changed, {cp.additions} insertion(s)(+), "
                 f"{cp.deletions} deletion(s)(-)")
    return "\n".join(lines)


def checkpoint_md(cp: CheckpointView) -> str:
    head = (f"**Checkpoint `{cp.id[:12]}`** ({cp.kind}, {cp.branch or '-'}, {cp.created_at or '-'}): "
            f"{cp.files_total} file(s) changed, +{cp.additions} −{cp.deletions}")
    if not cp.files_total:
        return head + "\n"
    return head + "\n\n" + fence(diffstat(cp)) + "\n"


def part_md(kind: str, d: dict[str, Any], names: dict[str, str]) -> str:
    if kind == PartType.TEXT:
        return str(d.get("text") or "")
    if kind == PartType.REASONING:
        return _fold("Reasoning", fence(clip(str(d.get("text") or ""))))
    if kind == PartType.TOOL_CALL:
        inp = as_text(d.get("input"))
        lang = "" if isinstance(d.get("input"), str) else "json"
        return _fold(f"Tool call: {_esc(str(d.get('name') or 'tool'))} — {_esc(inp)}", fence(clip(inp), lang))
    if kind == PartType.TOOL_RESULT:
        name = names.get(str(d.get("call_id")), "tool")
        err = " (error)" if d.get("is_error") else ""
        out = as_text(d.get("output"))
        return (f"<details><summary>Tool result: {_esc(name)}{err} — {_esc(out)}</summary>\n\n"
                f"{fence(clip(out))}\n\n</details>")
    if kind == PartType.PATCH:
        return _fold("Patch", fence(clip(str(d.get("text") or "")), "diff"))
    if kind == PartType.COMPACTION:
        return f"> **Compaction summary:** {' '.join(str(d.get('summary') or '').split())[:CLIP]}"
    if kind == PartType.FILE:
        return f"*File:* `{d.get('path')}`"
    if kind == PartType.IMAGE:
        return f"*Image* ({d.get('mime') or 'unknown type'})"
    return ""


def message_md(seq: int, m: Message, names: dict[str, str]) -> str:
    tool_names(m, names)
    body = [t for t in (part_md(p.type, dict(p.data), names) for p in m.parts) if t.strip()]
    if not body:
        return ""
    label = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}.get(m.role, m.role)
    only_tools = all(p.type in (PartType.TOOL_RESULT, PartType.TOOL_CALL) for p in m.parts)
    heading = "" if only_tools and m.role != "assistant" else f"#### {label} · #{seq}" + (
        " · compacted" if m.compacted else "") + "\n\n"
    if m.is_harness():  # what the agent's harness injected, not a turn anybody typed: folded
        folded = _fold("harness context", "\n\n".join(body))
        return f"#### {label} · #{seq} · harness context\n\n{folded}\n"
    return heading + "\n\n".join(body) + "\n"


def session_md(v: SessionView) -> Iterator[str]:
    s = v.session
    names: dict[str, str] = {}
    from oxide_git.core.titles import display, is_real_prompt

    body = spool()
    shown = 0
    for item in v.timeline():
        if isinstance(item, CheckpointView):
            text = checkpoint_md(item)
        else:
            if v.first_prompt is None and is_real_prompt(item[1]):
                v.first_prompt = item[1].text()
            text = message_md(*item, names)
            shown += bool(text)
        if text:
            body.write(text + "\n")
    # the title list, show, search and the HTML export give it
    yield f"## {display(s.title, v.first_prompt, s.id, 120)}\n\n"
    count = counted(shown, v.count)
    yield (f"- **Session:** `{s.id}` ({s.agent}{', ' + s.model if s.model else ''})\n"
           f"- **Branch:** {s.branch or '-'} · **Worktree:** {s.worktree or '-'}\n"
           f"- **When:** {_iso(s.created_at)} → {_iso(s.updated_at)}\n"
           f"- **Messages:** {count} · **Checkpoints:** {len(v.checkpoints)}\n"
           f"- **Redacted:** {redactions_line(v.redactions)}\n")
    if s.parent_id:
        yield f"- **Forked from:** `{s.parent_id}`\n"
    yield "\n"
    yield from replay(body)


def _iso(ms: int | None) -> str:
    from oxide_git.core.model import to_iso

    return to_iso(ms) or "-"


def write_markdown(views: Iterator[SessionView], out: IO[str], preface: str = "") -> None:
    out.write("# Agent sessions\n\n")
    if preface:
        out.write(preface.rstrip("\n") + "\n\n")
    n = 0
    for v in views:
        n += 1
        out.writelines(session_md(v))
    if n == 0:
        out.write("_No agent session is linked to these commits._\n")
