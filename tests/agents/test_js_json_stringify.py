"""jsjson: JSON.stringify's text, numbers included (the expectations are what node 22 printed)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oxide_git.agents.js_json import number, stringify

NODE = [  # String(x) in node
    (0.1, "0.1"), (1e-7, "1e-7"), (3.5e-7, "3.5e-7"), (0.00001, "0.00001"), (1e21, "1e+21"),
    (1e16, "10000000000000000"), (123.456, "123.456"), (1.0, "1"), (-2.5, "-2.5"), (1e-6, "0.000001"),
    (0.000001234, "0.000001234"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    (100.0, "100"), (1.5e300, "1.5e+300"), (2.0 ** 53, "9007199254740992"), (-0.0, "0"), (0.0, "0"),
    (123456789012345680000.0, "123456789012345680000"), (1.2345e-5, "0.000012345"),
]


@pytest.mark.parametrize(("x", "text"), NODE)
def test_numbers_as_javascript_prints_them(x: float, text: str) -> None:
    assert number(x) == text


def test_stringify_is_compact_ordered_and_leaves_ints_and_strings_to_json() -> None:
    value = {"b": [1.0, 0.00003, "x\u2028\n\"", {"a": None}], "a": True, "n": 10**20, "f": 0.5,
             "nan": math.nan, "inf": -math.inf}
    assert stringify(value) == ('{"b":[1,0.00003,"x\u2028\\n\\"",{"a":null}],"a":true,'
                                '"n":100000000000000000000,"f":0.5,"nan":null,"inf":null}')
    assert stringify({"s": "\x00jsnum:1"}) == '{"s":"\\u0000jsnum:1"}'  # a string is never a number


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_reads_back_the_same(x: float) -> None:
    # read as JavaScript reads it: a double (an integral one's digits may name a longer integer)
    assert float(json.loads(number(x))) == x
    assert [float(v) for v in json.loads(stringify([x]))] == [x]
