"""`git oxide resume SESSION --format markdown`: every kind of part, as the reader sees it."""

from __future__ import annotations

from pathlib import Path

from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store
from tests.conftest import make_ctx, oxide

SID = "0" * 12 + "9" * 20


def test_markdown_context_shows_every_part_kind(repo: Path) -> None:
    parts = [
        Part.text("please fix the bug"),
        Part.reasoning("thinking about it"),
        Part.reasoning(""),  # empty reasoning: left out
        Part.tool_call("c1", "shell", {"cmd": "ls ```"}),
        Part.from_dict({"type": "tool_result", "call_id": "c1", "output": "README.md", "is_error": False}),
        Part.from_dict({"type": "tool_result", "call_id": "c2", "output": {"code": 2}, "is_error": True}),
        Part.from_dict({"type": "compaction", "summary": "earlier talk, in short"}),
        Part.from_dict({"type": "patch", "text": "--- a\n+++ b\n"}),
        Part.from_dict({"type": "file", "path": "src/app.py"}),
        Part.from_dict({"type": "image", "mime": "image/png"}),
        Part.from_dict({"type": "other", "kind": "hologram"}),
    ]
    store.append(make_ctx(repo), Session(SID, "claude", title="Markdown check"),
                 [Message("user", tuple(parts[:1])), Message("assistant", tuple(parts[1:]))])
    out = oxide(repo, "resume", SID, "--format", "markdown", "--full").stdout
    assert out.startswith("# Markdown check\n")
    assert "### user · #0" in out and "### assistant · #1" in out
    assert "please fix the bug" in out
    assert "<details><summary>reasoning</summary>\n\nthinking about it\n\n</details>" in out
    assert out.count("<summary>reasoning</summary>") == 1
    assert "<details><summary>tool call: shell</summary>" in out
    assert '````json\n{\n  "cmd": "ls ```"\n}\n````' in out  # a longer fence than the text holds
    assert "<details><summary>tool result</summary>\n\n```\nREADME.md\n```" in out
    assert '<details><summary>tool error</summary>\n\n```\n{\n  "code": 2\n}\n```' in out
    assert "> **Conversation compacted.** Summary:\n\nearlier talk, in short" in out
    assert "```diff\n--- a\n+++ b\n\n```" in out
    assert "*file: src/app.py*" in out and "*image: image/png*" in out and "*(hologram)*" in out
    # without --full the context starts at the last compaction: the messages before it are left out
    short = oxide(repo, "resume", SID, "--format", "markdown").stdout
    assert "### user · #0" not in short and "### assistant · #1" in short
