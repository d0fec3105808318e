"""The Message a Codex reader's open message (``Open``) becomes when the next one starts: the
events that never met their item placed as parts, who wrote it decided (a user item is the
person's prompt, or context the harness injected: instructions, environment, AGENTS.md), and the
session's title taken from its first prompt.
"""

from __future__ import annotations

import re
from typing import Any

from oxide_git.agents.codex.open import Open, unpaired_events
from oxide_git.core.model import Message, Part

_INJECTED = re.compile(r"\s*(<[A-Za-z_]+[ >]|# AGENTS\.md)")


def message_of(c: Open, st: dict[str, Any]) -> Message:
    """``c`` as the Message it is, read with the rollout's state ``st`` (its ``title`` is set
    here, from the first prompt)."""
    for kind, p in c.queue:  # events that never met their item
        text = p.get("message") if kind == "message" else p.get("text")
        rest = {k: v for k, v in p.items() if k not in ("type", "message", "text")}
        ptype = "text" if kind == "message" else "reasoning"
        c.parts.append([ptype, {"text": text, "source": p.get("type"), **rest}])
    for idx, _kind, want, got in c.wants:
        if got != want and st.get("era") == "envelope":
            c.parts[idx][1]["events"] = got
    if c.role == "assistant":
        unpaired_events(c.parts)
    role = c.role or "system"
    if role == "user-item":
        injected = _INJECTED.match(c.item_text or "") is not None
        if c.prov is not None:  # paginated: the item says who wrote it
            role = "user" if c.prov == "user" else "system"
        else:
            role = "user" if c.merged or not (injected or st.get("era") == "envelope") else "system"
        if role == "system":
            c.extra["codex_role"] = "user"
    elif role == "compaction":
        role = "system"
    if role == "system" and "codex_role" in c.extra:
        c.extra["harness"] = True  # injected context: instructions, environment, AGENTS.md
    if role == "user" and not st.get("title"):
        text = " ".join(" ".join(str(d.get("text", "")) for t, d in c.parts
                                 if t == "text").split())
        if text:
            st["title"] = text if len(text) <= 80 else text[:79] + "…"
    if st.get("forked_from") and c.created is not None and c.created < (st.get("created") or 0):
        c.extra["copied"] = True
    return Message(role=role, parts=tuple([Part(t, d) for t, d in c.parts]), created_at=c.created,
                   model=c.model, usage=c.usage, extra=c.extra)
