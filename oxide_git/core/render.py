"""Messages as Markdown: for `resume --format markdown` and the Markdown export."""

from __future__ import annotations

import json
from typing import Any

from oxide_git.core.model import Message


def _fence(text: str, lang: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text}\n{fence}"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


def markdown_message(seq: int, m: Message) -> str:
    """One message as Markdown: text as is, tool calls and results folded in <details>."""
    head = f"### {m.role} · #{seq}" + (" · compacted" if m.compacted else "")
    out = [head, ""]
    for p in m.parts:
        d = p.data
        if p.type == "text":
            out.append(str(d.get("text", "")))
        elif p.type == "reasoning":
            if d.get("text"):
                out.append(f"<details><summary>reasoning</summary>\n\n{d.get('text')}\n\n</details>")
        elif p.type == "tool_call":
            out.append(f"<details><summary>tool call: {d.get('name')}</summary>\n\n"
                       f"{_fence(_as_text(d.get('input')), 'json')}\n\n</details>")
        elif p.type == "tool_result":
            label = "tool error" if d.get("is_error") else "tool result"
            out.append(f"<details><summary>{label}</summary>\n\n{_fence(_as_text(d.get('output')))}\n\n</details>")
        elif p.type == "compaction":
            out.append(f"> **Conversation compacted.** Summary:\n\n{d.get('summary')}")
        elif p.type == "patch":
            out.append(_fence(str(d.get("text", "")), "diff"))
        elif p.type in ("file", "image"):
            out.append(f"*{p.type}: {d.get('path') or d.get('url') or d.get('mime') or ''}*")
        else:
            out.append(f"*({d.get('kind', p.type)})*")
        out.append("")
    return "\n".join(out)
