"""A session's title as every view shows it: the agent's own title, else its first real prompt.

A "real" prompt is one a person typed: not context the agent's harness injected (marked by the
importer, ``Message.is_harness()``, or Claude Code's ``isMeta``), and not a wrapped harness block
such as ``<system-reminder>`` or ``<environment_context>`` that older imports did not mark. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oxide_git.core.model import Message

# Blocks the agents' harnesses put in a user turn (Claude Code, Codex, Gemini CLI), by their opening tag.
_HARNESS_TAGS = ("<system-reminder>", "<environment_context>", "<user_instructions>", "<permissions",
                 "<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-caveat>",
                 "<user-prompt-submit-hook>", "<turn_aborted>", "<INSTRUCTIONS>",
                 "<session_context>", "<hook_context>")  # the last two: Gemini CLI's
_HARNESS_STARTS = ("# AGENTS.md instructions", "Caveat: The messages below were generated")


def is_harness_text(text: str) -> bool:
    t = text.lstrip()
    return t.startswith(_HARNESS_TAGS) or t.startswith(_HARNESS_STARTS)


def is_real_prompt(m: Message) -> bool:
    if m.role != "user" or m.is_harness() or m.extra.get("isMeta"):
        return False
    text = m.text()
    return bool(text.strip()) and not is_harness_text(text)


def first_prompt(messages: Iterable[Message]) -> str | None:
    for m in messages:
        if is_real_prompt(m):
            return m.text()
    return None


def display(title: str | None, first: str | None, session_id: str = "", width: int = 0) -> str:
    """One line: the title, else the first real prompt, else ``Session <id>``; clipped to
    ``width`` characters (0: not clipped)."""
    s = " ".join(str(title or first or "").split()) or (f"Session {session_id[:12]}" if session_id else "-")
    return s if not width or len(s) <= width else s[: width - 1] + "…"
