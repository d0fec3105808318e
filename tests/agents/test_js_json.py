"""js_json writes what JavaScript's JSON.stringify writes (the expectations are node 20's output)."""

from __future__ import annotations

import pytest

from oxide_git.agents import js_json

# (value as Python reads it from a file, JSON.stringify of it in node 20)
NUMBERS = [(0.1, "0.1"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (1e-6, "0.000001"), (1e-5, "0.00001"),
           (123.456, "123.456"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
           (1.2345e20, "123450000000000000000"), (1e16, "10000000000000000"),
           (12345678901234567890.0, "12345678901234567000"), (-0.000001234, "-0.000001234"),
           (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (0.5, "0.5"),
           (-2.5, "-2.5"), (100.0, "100"), (0.000123, "0.000123"), (-0.0, "0"),
           (float("nan"), "null"), (float("inf"), "null"), (2**53 + 2, "9007199254740994"),
           (12345678901234567890, "12345678901234567000")]


@pytest.mark.parametrize(("value", "js"), NUMBERS)
def test_numbers_as_javascript_writes_them(value: float, js: str) -> None:
    assert js_json.dumps(value) == js


def test_a_document_as_json_stringify_with_two_spaces() -> None:
    doc = {"a": [1, 2.5, {"b": "x\u2028\x1f\x7f\"\\é😀", "c": []}, {}], "d": None, "e": True, "f": "\ud800z"}
    assert js_json.dumps(doc) == (
        '{\n  "a": [\n    1,\n    2.5,\n    {\n      "b": "x\u2028\\u001f\x7f\\"\\\\é😀",\n'
        '      "c": []\n    },\n    {}\n  ],\n  "d": null,\n  "e": true,\n  "f": "\\ud800z"\n}')


def test_what_is_not_json_is_refused() -> None:
    with pytest.raises(TypeError):
        js_json.dumps({"a": object()})
