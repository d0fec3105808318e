"""JSON text as JavaScript's ``JSON.stringify`` writes it: byte for byte.

Agents written in JavaScript keep sessions as JSON (Cline whole indented documents, ``dumps``; pi
compact JSONL lines, ``stringify``); a file written back must equal theirs. Python's ``json.dumps``
differs in three places, fixed here: numbers (``1e-07`` where JavaScript writes ``1e-7``,
``1e+16`` where it writes ``10000000000000000``, ``NaN`` where it writes ``null``), lone UTF-16
surrogates (written raw by Python, escaped by JavaScript), and the separators of an indented
document. Key order is the dict's. Pure.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")  # in a decoded str, always a lone one
_escape = json.encoder.encode_basestring  # "…" with JSON's escapes, non-ASCII as it is
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_MARK = "\x00jsnum:"  # a float that needs JavaScript's notation travels as this string
_MARKED = re.compile(r'"\\u0000jsnum:([^"]*)"')


def number(x: float) -> str:
    """A float as ECMAScript's ``Number::toString``: shortest digits, exponent below 1e-6 or from 1e21."""
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    digits_part, _, frac = mantissa.partition(".")
    digits = (digits_part + frac).lstrip("0")
    # the position of the decimal point after the first significant digit (n in the spec)
    point = len(digits_part.lstrip("0")) if digits_part.strip("0") else -(len(frac) - len(frac.lstrip("0")))
    point += int(exp_text or 0)
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    sign = "-" if x < 0 else ""
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    e = point - 1
    exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + exp


def string(s: str) -> str:
    """A string literal as JavaScript writes it (lone surrogates as lowercase ``\\udxxx``)."""
    text = _escape(s)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def dumps(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)``."""
    out: list[str] = []
    _write(value, out, "", " " * indent)
    return "".join(out)


def _write(v: Any, out: list[str], pad: str, step: str) -> None:
    if isinstance(v, str):
        out.append(string(v))
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif v is None:
        out.append("null")
    elif isinstance(v, int):
        out.append(str(v) if abs(v) < 2**53 else number(float(v)))
    elif isinstance(v, float):
        out.append(number(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        inner = pad + step
        out.append("{\n")
        for i, (k, x) in enumerate(v.items()):
            if i:
                out.append(",\n")
            out.append(inner + string(str(k)) + ": ")
            _write(x, out, inner, step)
        out.append("\n" + pad + "}")
    elif isinstance(v, list | tuple):
        if not v:
            out.append("[]")
            return
        inner = pad + step
        out.append("[\n")
        for i, x in enumerate(v):
            if i:
                out.append(",\n")
            out.append(inner)
            _write(x, out, inner, step)
        out.append("\n" + pad + "]")
    else:
        raise TypeError(f"not JSON: {type(v).__name__}")


def stringify(value: Any) -> str:
    """``JSON.stringify(value)``: compact, keys in order, JavaScript's numbers. ``json`` writes the
    same text for everything but floats (an integral float is ``0``, not ``0.0``; exponents only
    below 1e-6 and from 1e21), so only those are rewritten, and only when there are any: a line
    without floats costs one ``json`` encode."""
    prepared, marked = _prepare(value)
    text = _COMPACT.encode(prepared)
    return _MARKED.sub(lambda m: m.group(1), text) if marked else text


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
