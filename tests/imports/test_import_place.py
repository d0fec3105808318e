"""imports/place.py: which place of a session's log an imported message goes to when the tip
moved since the file's last import."""

from __future__ import annotations

from oxide_git.core.model import Message, Part, Role
from oxide_git.core.model import message_key as key
from oxide_git.imports.place import Placement


def _tool(out: str, at: int = 1000) -> Message:
    return Message(Role.TOOL, (Part.tool_result("c", out),), created_at=at)


def test_messages_without_ids_are_told_apart_by_their_whole_content() -> None:
    # aider: one time for a whole section, no text in a status line
    assert key(_tool("Aider v0.86.2")) != key(_tool("Tokens: 1 sent"))
    assert key(_tool("x")) == key(_tool("x"))
    assert key(_tool("x", 1000)) != key(_tool("x", 2000))
    assert key(Message(Role.USER, (Part.text("hi"),), native_id="u1")) == key(
        Message(Role.USER, (Part.text("changed"),), native_id="u1"))


def test_held_messages_go_back_to_their_place_and_new_ones_after_the_tip() -> None:
    a, b, c = _tool("a"), _tool("b"), _tool("c")
    p = Placement({key(a): [0], key(b): [1]}, next=2)
    for m in (b, c):
        p.note(m)
    assert p.projected() == 3
    assert p.place([b, c]) == [(1, [b, c])]
    assert p.place([a]) == [(0, [a])] and p.next == 3


def test_the_same_message_said_twice_takes_two_places() -> None:
    t = _tool("Tokens: 100 sent, 20 received.")
    p = Placement({key(t): [3]}, next=5)
    p.note(t)
    p.note(t)
    assert p.projected() == 6
    assert p.place([t, t]) == [(3, [t]), (5, [t])]
    assert p.next == 6
