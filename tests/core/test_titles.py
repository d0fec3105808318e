"""A session's first real prompt: what a person typed, not what the agent's harness put in."""

from __future__ import annotations

from oxide_git.core.model import Message, Part
from oxide_git.core.titles import display, first_prompt, is_harness_text


def _user(text: str, **extra: object) -> Message:
    return Message("user", (Part.text(text),), extra=dict(extra))


def test_first_prompt_skips_harness_meta_empty_and_assistant_turns() -> None:
    msgs = [
        Message("assistant", (Part.text("hello, how can I help"),)),
        _user("<environment_context>cwd=/x</environment_context>"),
        _user("   "),
        _user("injected", isMeta=True),
        _user("from the harness", harness=True),
        _user("  # AGENTS.md instructions for /x"),
        _user("fix the failing test"),
        _user("and then this"),
    ]
    assert first_prompt(msgs) == "fix the failing test"
    assert first_prompt(msgs[:6]) is None and first_prompt([]) is None
    assert is_harness_text("\n <system-reminder>x") and not is_harness_text("a <system-reminder> later")
    assert display(None, first_prompt(msgs)) == "fix the failing test"
