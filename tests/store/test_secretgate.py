"""The redaction gate: it may let harmless messages through to the full walk, but it must never
stop a message that the walk would change. Checked on every planted secret, on dict keys, and by
hypothesis on messages assembled from the fragments rules care about."""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oxide_git.core import codec
from oxide_git.core.model import SCHEMA_VERSION, Message, Part
from oxide_git.store.redact import Redactor
from oxide_git.store.secretgate import Gate
from tests.planted import PLANTED

REDACTOR = Redactor()


def _fallback() -> Redactor:
    r = Redactor()
    r.gate._ac = None  # the plain-find scan used when ahocorasick_rs is missing
    return r


GATES = [REDACTOR, _fallback()]


def _maybe(r: Redactor, m: Message) -> bool:
    return r.gate.maybe(codec.encode_message_scan(m)[1])


@pytest.mark.parametrize("r", GATES, ids=["aho-corasick", "fallback"])
@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_every_planted_secret_opens_the_gate(r: Redactor, kind: str) -> None:
    text, secret = PLANTED[kind]
    for m in (Message("user", (Part.text(text),)),
              Message("assistant", (Part.tool_call("c1", "Bash", {"command": text}),)),
              Message("user", (Part.text("x"),), extra={"note": text}),
              Message("user", (Part.text("x"),), unknown={"raw": [text]})):
        assert _maybe(r, m), (kind, m)
        out, blob = r.encoded(m)
        assert secret.encode() not in blob and b"[REDACTED:" in blob
        assert blob == codec.encode_message(out)


@pytest.mark.parametrize("r", GATES, ids=["aho-corasick", "fallback"])
def test_keys_naming_secrets_open_the_gate(r: Redactor) -> None:
    for data in ({"password": "hunter2!"}, {"api_token": "x8Kd92mLq0PzR7tY"},
                 {"nested": [{"clientSecret": "Zx81mQp2LkV7tR9wY3nB"}]}, {"PASSWD": "a" * 300}):
        m = Message("assistant", (Part.tool_call("c", "set", data),))
        assert _maybe(r, m)
        assert b"[REDACTED:" in r.encoded(m)[1]


@pytest.mark.parametrize("text", [
    "we spent 5000 tokens on this and the tokenizer is fine",
    "see https://github.com/org/repo and http://localhost:8000/path",
    "the keyboard monkey pressed a key; a private method; a secretary",
])
def test_harmless_messages_skip_the_walk(text: str) -> None:
    m = Message("assistant", (Part.text(text),), usage={"input_tokens": 3, "output_tokens": 100,
                                                         "cache_read_input_tokens": 120_000})
    assert not _maybe(REDACTOR, m)
    assert REDACTOR.encoded(m) == (m, codec.encode_message(m))


def test_case_folding_characters_always_open_the_gate() -> None:
    # re.I folds K (Kelvin) to k and ſ to s: "to\u212aen=..." is a token assignment to the rules.
    for text in ("to\u212aen = Zx81mQp2LkV7tR9wY3nB", "pa\u017f\u017fword: hunter2!!", "İ"):
        assert _maybe(REDACTOR, Message("user", (Part.text(text),)))


_FRAGMENTS = [
    *(t for t, _s in PLANTED.values()), *(s for _t, s in PLANTED.values()),
    "token", "Token", "TOKEN", "secret", "password", "passwd", "pwd", "api_key", "API-KEY", "auth_key",
    "credential", "private_key", "aws", "bearer", "Bearer ", "://", "@", ":", "=", ":=", '"', "'",
    " ", "\t", "\n", "\u00a0", "\u2003", "\u3000", "\u212a", "\u017f", "\u0130", "\u0131", "_", "-", ".",
    "sk-", "ghp_", "xoxb-", "eyJ", "AKIA", "AIza", "-----BEGIN", "Zx81mQp2LkV7tR9wY3nB", "hunter2!",
    "x8Kd92mLq0PzR7tY", "abc", "é", "日本",
]
_text = st.lists(st.sampled_from(_FRAGMENTS), max_size=8).map("".join)
_json: Any = st.recursive(
    st.none() | st.integers(-5, 300) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8)


@settings(max_examples=int(os.environ.get("OXIDE_GATE_EXAMPLES", "400")), deadline=None)
@given(text=_text, data=_json, extra=st.dictionaries(_text, _json, max_size=2),
       unknown=st.dictionaries(st.sampled_from(["raw", "x_token", "pwd", "misc"]), _json, max_size=2))
def test_the_gate_never_stops_a_message_the_walk_would_change(
        text: str, data: Any, extra: dict[str, Any], unknown: dict[str, Any]) -> None:
    m = Message("user", (Part.text(text), Part.tool_call("c", "tool", data)), extra=extra, unknown=unknown)
    walked, counts = REDACTOR.walk(m)
    for r in GATES:
        if counts:
            assert _maybe(r, m), (counts, m)
        out, blob = r.encoded(m)
        assert out == walked and blob == codec.encode_message(walked)


def _plain_encoding(m: Message) -> bytes:
    return codec._pack({"v": SCHEMA_VERSION, **codec.message_to_dict(m)})


@pytest.mark.parametrize("m", [
    Message("user", (Part.text("hi"),)),
    Message("assistant", (Part.tool_call("c", "t", MappingProxyType({"a": (1, 2)})),), id="m1",
            created_at=5, model="x", usage=MappingProxyType({"input_tokens": 1}), cost=0.5,
            extra=MappingProxyType({"k": "v"}), unknown={"future": {"n": [1]}}),
    Message("user", (), unknown={"role": "shadowed", "other": 1}),  # keys that merge
    Message("user", tuple(Part.text(str(i)) for i in range(3)), unknown={f"k{i}": i for i in range(40)}),
])
def test_encode_message_scan_writes_the_same_bytes(m: Message) -> None:
    blob, scan = codec.encode_message_scan(m)
    assert blob == _plain_encoding(m) == codec.encode_message(m)
    assert codec.decode_message(blob) == codec.decode_message(_plain_encoding(m))
    assert len(scan) <= len(blob)


def test_a_gate_without_hints_only_watches_case_folding() -> None:
    g = Gate([])
    assert not g.maybe(b"token = Zx81mQp2LkV7tR9wY3nB") and g.maybe("\u212a".encode())
