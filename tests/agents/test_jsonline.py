"""jsonline.loads gives what json.loads gives (the same value, or the same exception), on a
transcript line's bytes and on a str (JSON held in a string field, e.g. a Codex tool call's
arguments)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oxide_git.agents import jsonline

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _same(raw: bytes | str) -> None:
    """What json.loads gives, lone surrogates (which UTF-8 cannot hold) turned into U+FFFD."""
    try:
        expected: object = jsonline.valid_text(json.loads(raw))
    except (ValueError, RecursionError) as e:
        with pytest.raises(type(e)):
            jsonline.loads(raw)
        return
    got = jsonline.loads(raw)
    assert repr(got) == repr(expected) and type(got) is type(expected)


@pytest.mark.parametrize("raw", [
    b'{"a": 1, "b": [1.5, -0.0, true, null], "c": "\\u00e9\\n"}',
    b"123456789012345678901234567890", b"-9223372036854775809", b"18446744073709551616",
    b'{"n": 12345678901234567890123}', b"1e400", b"NaN", b'"\\ud800"', b'{"a":1,"a":2}',
    b'{"k": "\xff"}', b"[1,", b"{} x", b'{"deep": ' * 3000 + b"1" + b"}" * 3000,
])
def test_line_gives_what_json_gives(raw: bytes) -> None:
    _same(raw)


@pytest.mark.parametrize("text", [
    '{"command": ["bash", "-lc", "ls"], "workdir": "."}', '{"a":1.5,"b":[-0.0,true,null]}',
    "123456789012345678901234567890", '{"n": -9223372036854775809}', "1e400", "NaN", '"\\ud800"',
    '{"s": "\ud800"}', "\ufeff{}", '{"a":1,"a":2}', "[1,", "{} x", "é", '{"deep": ' * 3000 + "1" + "}" * 3000,
])
def test_text_gives_what_json_gives(text: str) -> None:
    _same(text)


@given(json_values, st.booleans())
def test_any_serialized_value(value: object, compact: bool) -> None:
    _same(json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None))


@given(st.text())
def test_any_text(text: str) -> None:
    _same(text)
