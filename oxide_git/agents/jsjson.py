"""``JSON.stringify(value)`` in Python: the bytes a JavaScript agent writes for a value.

``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` writes the same text for strings,
integers, booleans and null, and keeps keys in insertion order as JavaScript does. Numbers that are
floats differ: JavaScript has one number type, so an integral float prints as an integer (``0``, not
``0.0``), and it switches to exponent notation only below 1e-6 and from 1e21 on (``0.00001`` where
Python writes ``1e-05``, ``1e-7`` where Python writes ``1e-07``). Both print the shortest digits
that read back the same number, so only where the digits go differs; NaN and infinities are
``null``. Strings, escapes and lone surrogates are left to ``json`` (``jsonline`` reads them).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_MARK = "\x00jsnum:"  # a float that needs JavaScript's notation travels as this string
_MARKED = re.compile(r'"\\u0000jsnum:([^"]*)"')


def number(x: float) -> str:
    """JavaScript's ``Number.prototype.toString()`` of a float (ECMA-262 Number::toString)."""
    if math.isnan(x) or math.isinf(x):
        return "null"  # what JSON.stringify writes for them
    if x == 0:
        return "0"
    # repr's digits are the shortest that read back as x, as JavaScript's are: value = 0.d * 10^n
    t = Decimal(repr(abs(x))).normalize().as_tuple()
    d = "".join(map(str, t.digits))
    k = len(d)
    n = k + int(t.exponent)
    if k <= n <= 21:
        out = d + "0" * (n - k)
    elif 0 < n <= 21:
        out = d[:n] + "." + d[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + d
    else:
        p = n - 1
        out = d[0] + ("." + d[1:] if k > 1 else "") + "e" + ("+" if p > 0 else "-") + str(abs(p))
    return ("-" if x < 0 else "") + out


def _prepare(x: Any) -> tuple[Any, bool]:
    """``x`` with every float that ``json`` would print differently marked; whether any was."""
    if isinstance(x, float):
        text = number(x)
        return (x, False) if text == repr(x) else (_MARK + text, True)
    if isinstance(x, dict):
        changed = False
        out: dict[Any, Any] = {}
        for k, v in x.items():
            out[k], c = _prepare(v)
            changed = changed or c
        return (out, True) if changed else (x, False)
    if isinstance(x, list | tuple):
        items = [_prepare(v) for v in x]
        return ([v for v, _ in items], True) if any(c for _, c in items) else (x, False)
    return x, False


def stringify(value: Any) -> str:
    """``JSON.stringify(value)`` (compact, keys in order, JavaScript's numbers)."""
    prepared, marked = _prepare(value)
    text = _COMPACT.encode(prepared)
    return _MARKED.sub(lambda m: m.group(1), text) if marked else text
