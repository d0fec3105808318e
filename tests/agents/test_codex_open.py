"""The message a Codex reader builds (codex_open): ``agent_message`` / ``agent_reasoning`` events
paired with the items they repeat, when the lines carry no envelope to keep them in place (bare
items, or envelope lines a tool stripped of their timestamp), the prompt the user typed against
the item Codex sent, and the TypeScript-era single file when it is damaged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oxide_git.agents import FoundMessage, Problem, Resumable
from oxide_git.agents.codex import agent as codex
from oxide_git.agents.codex.open import said_again
from oxide_git.core.model import Message, Part

SID = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
META = {"id": SID, "timestamp": "2025-08-01T10:00:00.000Z", "instructions": None}
IMAGE = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}


def _parse(tmp_path: Path, *lines: dict[str, Any], name: str = f"rollout-2025-08-01T10-00-00-{SID}.jsonl"
           ) -> list[Message]:
    path = tmp_path / name
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return [e.message for e in codex.parse(path) if isinstance(e, FoundMessage)]


def _event(t: str, **payload: Any) -> dict[str, Any]:
    return {"type": "event_msg", "payload": {"type": t, **payload}}  # no timestamp: no envelope kept


def _parts(m: Message) -> list[tuple[str, dict[str, Any]]]:
    return [(p.type, dict(p.data)) for p in m.parts]


def test_events_that_repeat_their_items_are_not_said_twice(tmp_path: Path) -> None:
    user, assistant = _parse(
        tmp_path, META,
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Add a README"}]},
        _event("agent_reasoning", text="thinking"),  # before its item: it waits for it
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
        _event("agent_message", message="Done.", phase="final"))  # after its item
    assert _parts(user) == [("text", {"text": "Add a README"})]
    assert _parts(assistant) == [("reasoning", {"text": "thinking", "id": "rs_1"}),
                                 ("text", {"text": "Done.", "event_extra": {"phase": "final"}})]


def test_an_event_with_no_item_to_repeat_is_a_part_of_its_own(tmp_path: Path) -> None:
    [_user, assistant] = _parse(
        tmp_path, META,
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
        _event("agent_message", message="Done."),
        _event("agent_message", message="One more thing", turn=2),
        _event("agent_reasoning", text="why"))
    assert _parts(assistant) == [
        ("text", {"text": "Done."}),
        ("text", {"text": "One more thing", "source": "agent_message", "turn": 2}),
        ("reasoning", {"text": "why", "source": "agent_reasoning"})]


def test_the_prompt_the_user_typed_wins_over_the_item_and_the_item_is_kept(tmp_path: Path) -> None:
    content = [{"type": "input_text", "text": "Add a README"}, IMAGE, {"type": "input_file", "name": "x"}]
    [user] = _parse(tmp_path, META, {"type": "message", "role": "user", "content": content},
                    _event("user_message", message="Add a README please", kind="plain"))
    assert user.role == "user"
    assert _parts(user) == [
        ("text", {"text": "Add a README please"}),
        ("image", {"mime": "image/png", "url": "data:image/png;base64,AAAA"}),
        ("other", {"kind": "input_file", "raw": {"type": "input_file", "name": "x"}, "line": "content"})]
    assert user.extra == {"event": {"kind": "plain"}, "content": content}


def test_a_typescript_era_file_that_is_not_json_is_a_problem_and_odd_items_are_skipped(tmp_path: Path) -> None:
    bad = tmp_path / "rollout-2025-05-01-bad.json"
    bad.write_text("{not json")
    assert list(codex.parse(bad)) == [Problem(None, "not JSON, skipped")]
    ok = tmp_path / "rollout-2025-05-01-ok.json"
    ok.write_text(json.dumps({"session": {"id": "x", "timestamp": "2025-05-01T00:00:00Z"}, "items": [
        1, "x", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}))
    events = list(codex.parse(ok))
    assert [m.text() for m in (e.message for e in events if isinstance(e, FoundMessage))] == ["hi"]
    assert isinstance(events[-1], Resumable) and events[-1].offset == ok.stat().st_size


def test_an_event_whose_item_was_changed_under_it_is_written_as_stored() -> None:
    raw = {"type": "agent_message", "message": None, "phase": "final"}
    d = {"kind": "agent_message", "raw": raw, "text_of": 3}  # its item, part 3, is no longer there
    assert said_again(d, (Part.text("only one part"),)) == raw
    d = {"kind": "agent_reasoning", "raw": {"type": "agent_reasoning", "text": None}, "text_of": [0, 5]}
    assert said_again(d, (Part.reasoning("x", summary=["a"]),)) == {"type": "agent_reasoning", "text": None}
    d = {"kind": "agent_message", "raw": raw, "text_of": 0}
    assert said_again(d, (Part.text("Done."),)) == {**raw, "message": "Done."}
