"""A rebuilt Claude line as Claude wrote it (agents/claude/shape.py)."""

from __future__ import annotations

from oxide_git.agents.claude import shape as claude_shape
from oxide_git.core.model import Message, Part


def test_reorder_follows_the_recorded_key_order_and_keeps_what_it_does_not_name() -> None:
    line = {"type": "user", "uuid": "u", "extra": 1,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                     "content": "x"}]}}
    shape = ["uuid,type,message", "content,role", ["tool_use_id,type,content,is_error"]]
    out = claude_shape.reorder(line, shape)
    assert list(out) == ["uuid", "type", "message", "extra"]
    assert list(out["message"]) == ["content", "role"]
    assert out["message"]["content"] == [{"tool_use_id": "t", "type": "tool_result", "content": "x",
                                          "is_error": False}]  # written as false, as Claude does
    assert claude_shape.reorder(line, None) is line  # nothing recorded: as built


def test_groups_split_a_response_into_its_lines() -> None:
    a, b, c = {"type": "thinking"}, {"type": "text"}, {"type": "tool_use"}
    two = [["k", "m", ["x"]], ["k", "m", ["y", "z"]]]
    assert claude_shape.groups([a, b, c], ["u1", "u2"], two) == [[a], [b, c]]  # as the shape says
    assert claude_shape.groups([a, b, c], ["u1", "u2", "u3"], None) == [[a], [b], [c]]  # a block a line
    assert claude_shape.groups([a, b, c], ["u1", "u2"], [["k"], ["k"]]) == [[a, b, c]]  # unknown: one


def test_native_uuids_are_every_line_a_native_export_writes() -> None:
    msgs = [Message("user", (Part.text("hi"),), native_id="u1"),
            Message("assistant", (Part.text("a"),), native_id="a1", extra={"uuids": ["a1", "a2"]}),
            Message("system", (Part.other("progress", {"uuid": "p1"}), Part.other("x", "raw")))]
    assert claude_shape.native_uuids(msgs) == {"u1", "a1", "a2", "p1"}
