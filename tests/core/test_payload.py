"""``payload``: a message read as plain values (what `git oxide blame` reads of a call's message)
gives what the codec's model gives: the same model name, the same parts' types and fields, the
same calls' effects on files, and the same refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgpack
import pytest

from oxide_git.agents import AGENT_NAMES, FoundMessage, agent, file_effects, file_patterns, tools
from oxide_git.core import codec, payload
from oxide_git.core.errors import UnsupportedPayload
from oxide_git.core.model import Message, Part

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _fixture_messages() -> list[Message]:
    out = []
    for name in AGENT_NAMES:
        for pattern in file_patterns(name):
            for path in sorted((FIXTURES / name).rglob(pattern)):
                out += [ev.message for ev in agent(name).parse(path) if isinstance(ev, FoundMessage)]
    return out


def _same(blob: bytes) -> None:
    m = codec.decode_message(blob)
    model, parts = payload.message_parts(blob)
    assert model == m.model and len(parts) == len(m.parts)
    for plain, part in zip(parts, m.parts, strict=True):
        assert payload.part_type(plain) == part.type
        for key in {"type", "input", "path", "files", "name", "kind", "raw", *part.data}:
            assert payload.part_get(plain, key) == part.get(key)


def test_every_agents_fixture_reads_the_same_as_the_model() -> None:
    messages = _fixture_messages()
    calls = 0
    for m in messages:
        blob = codec.encode_message(m)
        _same(blob)
        for plain, part in zip(payload.message_parts(blob)[1], m.parts, strict=True):
            name = str(part.get("name") or "")
            if part.type == "tool_call":
                calls += 1
                args = tools.args_of(payload.part_get(plain, "input"))
                assert args == tools.args_of(part.get("input"))
                assert file_effects.effects(name, args) == file_effects.effects(name, tools.args_of(part.get("input")))
    assert len(messages) > 400 and calls > 80  # every agent's fixtures, their calls among them


def _pack(obj: Any) -> bytes:
    return bytes(msgpack.packb(obj, use_bin_type=True))


@pytest.mark.parametrize("obj", [
    {"v": 1, "role": "assistant"},  # no parts: none
    {"v": 1, "role": "assistant", "parts": {}, "model": "m"},  # an empty map: none
    {"v": 1, "role": "assistant", "parts": [7, "x", {"name": "Edit"}, {"type": 3, "input": {}}]},
    {"v": 1, "role": "user", "parts": [{"type": "tool_call", "input": "{\"file_path\": \"a\"}"}],
     "model": ["not", "a", "name"], "extra": 5},
])
def test_odd_payloads_read_as_the_codec_reads_them(obj: dict[str, Any]) -> None:
    _same(_pack(obj))


@pytest.mark.parametrize("data", [
    b"\xc1", _pack([1, 2]), _pack({"role": "user", "parts": []}), _pack({"v": 99, "role": "user"}),
    _pack({"v": 1, "parts": []}), _pack({"v": 1, "role": "user", "parts": "text"}),
])
def test_what_the_codec_refuses_is_refused(data: bytes) -> None:
    with pytest.raises(UnsupportedPayload):
        codec.decode_message(data)
    with pytest.raises(UnsupportedPayload):
        payload.message_parts(data)


def test_a_part_as_the_model_keeps_it() -> None:
    blob = codec.encode_message(Message("assistant", (Part.tool_call("c1", "Write", {"file_path": "a"}),
                                                      Part.patch("*** Begin Patch", files=["a"]))))
    _same(blob)
    assert payload.part_type(payload.message_parts(blob)[1][1]) == "patch"
