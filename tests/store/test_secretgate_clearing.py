"""Exactly when the redaction gate clears a message (no rule could match: the walk is skipped) and
when it must send it through redaction.

The gate reads msgpack bytes. A word that names a secret (``password``, ``api_token``) is only a
chance for a rule when an assignment follows it or when it lies in a dict key whose value is a
string long enough to be judged (passwords from 4 characters, secrets from 12). For a short key
(a fixstr: its header byte holds its length) the gate knows exactly where the key ends; for a
longer one (str8/16/32, whose length bytes can look like a fixstr header) it must not trust the
byte before the name. Every "must open" case is also redacted end to end; every "clears" case is
one the walk finds nothing in, so the gate's answer is both exact and safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ahocorasick_rs
import msgpack
import pytest

from oxide_git.core import codec
from oxide_git.core.model import Message, Part
from oxide_git.store.redact import Redactor
from oxide_git.store.secretgate import PASSWORD_TAIL, SECRET_TAIL, URL_TAIL, Gate

REDACTOR = Redactor()


def _fallback() -> Redactor:
    r = Redactor()
    r.gate._ac = None  # the plain find() scan used where ahocorasick_rs is missing
    return r


GATES = pytest.mark.parametrize("r", [REDACTOR, _fallback()], ids=["aho-corasick", "fallback"])


def _message(data: Any) -> Message:
    return Message("assistant", (Part.tool_call("c1", "tool", data),))


def opens(r: Redactor, data: Any) -> bool:
    """Does the gate send a message whose tool call carries ``data`` to the walk?"""
    return r.gate.maybe(codec.encode_message_scan(_message(data))[1])


def found(data: Any) -> dict[str, int]:
    """What the walk (no gate) redacts in such a message."""
    return dict(REDACTOR.walk(_message(data))[1])


def assert_clears(r: Redactor, data: Any) -> None:
    assert not found(data), "a clearing case must hold nothing to redact"
    assert not opens(r, data)
    m = _message(data)
    assert r.encoded(m) == (m, codec.encode_message(m))  # the same message, encoded once


def assert_redacted(r: Redactor, data: Any, kind: str) -> None:
    assert found(data) == {kind: 1}
    assert opens(r, data)
    out, blob = r.encoded(_message(data))
    assert out.extra["redactions"] == {kind: 1}
    assert f"[REDACTED:{kind}]".encode() in blob and blob == codec.encode_message(out)


# --- the length of a value under a key that names a secret -------------------------------------

@GATES
@pytest.mark.parametrize(("key", "kind", "shortest", "value"), [
    ("password", "password", 4, "hunter2!" * 9),  # judged from 4 characters on
    ("api_token", "secret", 12, "x8Kd92mLq0PzR7tY" * 3),  # from 12: the length of a random key
])
def test_a_value_shorter_than_its_rule_judges_clears_one_that_long_opens(
        r: Redactor, key: str, kind: str, shortest: int, value: str) -> None:
    assert_clears(r, {key: value[:shortest - 1]})
    assert_redacted(r, {key: value[:shortest]}, kind)


@GATES
@pytest.mark.parametrize("length", [31, 32, 255, 256, 65535, 65536])
def test_a_value_of_every_string_width_opens(r: Redactor, length: int) -> None:
    # fixstr up to 31 bytes, then str8 (0xd9), str16 (0xda), str32 (0xdb) headers
    value = ("hunter2!" * (length // 8 + 1))[:length]
    assert_redacted(r, {"password": value}, "password")
    assert_redacted(r, {"api_token": ("x8Kd92mLq0PzR7tY" * (length // 16 + 1))[:length]}, "secret")


# --- where the key ends ----------------------------------------------------------------------

def _key(length: int, word: str = "password") -> str:
    return "k" * (length - len(word)) + word


@GATES
@pytest.mark.parametrize("length", [8, 9, 30, 31])
def test_a_short_key_followed_by_a_number_clears_even_when_a_string_comes_next(
        r: Redactor, length: int) -> None:
    # b"\xa8password" b"a" (97) b"\xa4note": the fixstr header says the key ends before the "a";
    # the number 97 looks like a name character, then a string header follows it
    assert_clears(r, {_key(length): 97, "note": "hello"})
    assert_redacted(r, {_key(length): "hunter2!", "note": "hello"}, "password")


@GATES
@pytest.mark.parametrize("length", [
    32, 165, 191,  # str8: the length byte (0xa5, 0xbf) reads like a fixstr header
    421,  # str16: 0xda 0x01 0xa5
    65536 + 0xA5,  # str32: 0xdb 0x00 0x01 0x00 0xa5
])
def test_a_long_key_naming_a_password_opens_whatever_its_length_bytes_look_like(
        r: Redactor, length: int) -> None:
    key = _key(length)
    assert_redacted(r, {key: "hunter2!"}, "password")
    assert_redacted(r, {"a": 1, key: "hunter2!"}, "password")  # not the first key either


@GATES
@pytest.mark.parametrize("before", [
    55553,  # 0xcd 0xd9 0x01: a str8 header byte three bytes before the key (a str8 length is one byte)
    14286849,  # 0xce 0x00 0xda 0x00 0x01: a str16 header byte four bytes before it (its length is two)
    0xDB00000001,  # 0xcf ... 0xdb 0x00 0x00 0x00 0x01: a str32 header byte six bytes before (length four)
])
def test_the_key_is_told_by_its_own_header_not_by_the_bytes_of_the_number_before_it(
        r: Redactor, before: int) -> None:
    assert_clears(r, {"x": before, "password": 97, "note": "hello"})
    assert_redacted(r, {"x": before, "password": "hunter2!", "note": "hello"}, "password")


@GATES
def test_a_str8_header_byte_right_before_a_short_key_is_a_number(r: Redactor) -> None:
    assert_clears(r, {"x": 217, "password": "abc"})  # 217 packs as 0xcc 0xd9


@GATES
def test_a_key_with_more_than_name_characters_after_the_word_is_no_secret_name(r: Redactor) -> None:
    # "passwordـ": the tatweel (0xd9 0x80) reads like a str8 header after the word, but the key's
    # own fixstr header says the key goes on past it: no key rule judges such a key
    assert_clears(r, {"password\u0640": "abcd"})
    assert_clears(r, {"password\u0640": "hunter2!"})


@GATES
def test_numbers_that_spell_a_word_are_no_key(r: Redactor) -> None:
    spelled = [ord(c) for c in "password"]
    # after an empty string (header 0xa0: a key of no characters) they cannot be its key
    assert_clears(r, {"a": ["", *spelled, "abcd"]})
    # after any other byte the gate cannot know where a key would end: it asks the walk
    assert opens(r, {"a": [1, *spelled, "abcd"]}) and not found({"a": [1, *spelled, "abcd"]})
    # and a string too short to be judged after them clears whatever precedes them
    assert_clears(r, {"a": [1, *spelled, "abc"]})
    # an array header (15 items: 0x9f) or nil (0xc0) is no fixstr header either
    for items in ([*spelled, "abcd", *range(6)], [None, *spelled, "abcd"]):
        assert opens(r, {"a": items}) and not found({"a": items})


@GATES
def test_a_word_in_the_middle_of_a_key_clears_with_a_short_value_and_opens_with_a_long_one(
        r: Redactor) -> None:
    assert_clears(r, {"my_password_hint": "abc"})
    assert_redacted(r, {"my_password_hint": "hunter2!"}, "password")
    assert_clears(r, {"db.api-token.ttl": 3600})


@GATES
def test_a_word_in_a_value_followed_by_a_number_clears(r: Redactor) -> None:
    assert_clears(r, {"note": "the password", "n": 5})
    assert_clears(r, {"note": "the password", "abc": 5})  # a key too short to be judged as a value
    # the next item a string of 4 bytes or more: to the bytes, the word could end a key whose value
    # it is (the gate cannot tell a key from a value), so it asks the walk
    data = {"note": "reset your password", "count": 3}
    assert opens(r, data) and not found(data)


@GATES
def test_assignments_open_whatever_follows(r: Redactor) -> None:
    for text, kind in (("password=hunter2!", "password"), ("PASSWORD: hunter2!", "password"),
                       ('"password" : "hunter2!"', "password"), ("api_token=x8Kd92mLq0PzR7tY", "secret"),
                       ("password\u00a0=\u00a0hunter2!", "password")):
        assert_redacted(r, {"command": text}, kind)
    assert_clears(r, {"command": "password reset sent"})


@GATES
def test_url_credentials_open_only_with_a_user_and_password(r: Redactor) -> None:
    assert_redacted(r, {"url": "https://bob:s3cretPw@example.com/x"}, "url_credentials")
    for url in ("https://example.com/x", "https://bob@example.com/x", "https://a.b/c:d@e",
                "ssh://host:22/path"):
        assert_clears(r, {"url": url})


# --- the bytes themselves (the gate is a function of any msgpack) ------------------------------

@pytest.mark.parametrize("ac", [True, False], ids=["aho-corasick", "fallback"])
def test_hints_at_either_end_of_the_bytes(ac: bool) -> None:
    g = Gate([("password", PASSWORD_TAIL), ("sk-", None), ("://", URL_TAIL)])
    if not ac:
        g._ac = None
    assert g.maybe(b"sk-") and g.maybe(b"xsk-") and g.maybe(b"sk-x")
    assert g.maybe(b"password\xa4abcd")  # the name starts at byte 0
    assert g.maybe(b"password=")
    assert not g.maybe(b"password\xa3abc")
    assert not g.maybe(b"\xa8password")  # at the very end: nothing follows
    assert not g.maybe(b"\xa8password\xa3abc")
    assert g.maybe(b"\xa8password\xa4abcd")
    assert g.maybe(b"\xd9\x08password\xa4abcd")  # str8 key first in the bytes
    assert g.maybe(b"\xda\x00\x08password\xa4abcd") and g.maybe(b"\xdb\x00\x00\x00\x08password\xa4abcd")
    assert g.maybe(b"://u:p@") and not g.maybe(b"://u@") and not g.maybe(b"://")
    # the first key at byte 0 (as in a map's entries): its header is byte 0
    assert not g.maybe(b"\xa8passworda\xa4note") and g.maybe(b"\xa8password\xa4abcd")
    # a name at byte 0 has no header before it: the last byte is not one
    assert g.maybe(b"password\xa4abcd\xa5")


@pytest.mark.parametrize("ac", [True, False], ids=["aho-corasick", "fallback"])
@pytest.mark.parametrize("head", [
    b"\xd9\xa5",  # str8 of 165 bytes: the length byte reads like a fixstr header
    b"\xda\x01\xa5",  # str16 of 421
    b"\xdb\x00\x01\x00\xa5",  # str32 of 65701
])
def test_a_long_key_first_in_the_bytes_is_not_read_as_a_short_one(ac: bool, head: bytes) -> None:
    g = Gate([("password", PASSWORD_TAIL)])
    if not ac:
        g._ac = None
    length = int.from_bytes(head[1:], "big")
    key = _key(length).encode()
    assert g.maybe(head + key + b"\xa4abcd")
    assert not g.maybe(head + key + b"\xa3abc")


@pytest.mark.parametrize("ac", [True, False], ids=["aho-corasick", "fallback"])
def test_length_bytes_that_spell_the_name_are_not_trusted_as_a_header(ac: bool) -> None:
    # a str16 (0xda) or str32 (0xdb) header at byte 0 whose last length bytes are 0xa8 "p": the
    # 0xa8 is no fixstr header, so the gate cannot say where a key ends and asks the walk
    g = Gate([("password", PASSWORD_TAIL)])
    if not ac:
        g._ac = None
    assert g.maybe(b"\xda\xa8passworda\xa4note")
    assert g.maybe(b"\xdb\x00\x00\xa8passworda\xa4note")


@pytest.mark.parametrize("ac", [True, False], ids=["aho-corasick", "fallback"])
def test_every_occurrence_of_every_hint_is_checked(ac: bool) -> None:
    # "ab" fails its tail, "bc" overlapping it needs none; a hint's second occurrence counts too
    g = Gate([("ab", PASSWORD_TAIL), ("bc", None)])
    h = Gate([("password", PASSWORD_TAIL)])
    if not ac:
        g._ac = h._ac = None
    assert g.maybe(b"abc") and not g.maybe(b"ab")
    assert h.maybe(b"\xa8password\x01\xa8password\xa4abcd")
    assert not h.maybe(b"\xa8password\x01\xa8password\xa3abc")


def test_a_hint_of_two_kinds_keeps_both_tails() -> None:
    # "aws" opens an AWS secret rule (a tail) and, here, a rule with no tail: no tail wins
    g = Gate([("aws", SECRET_TAIL), ("AWS", None)])
    assert g.maybe(b"aws") and Gate([("aws", SECRET_TAIL)]).maybe(b"aws") is False


def test_the_fast_scan_is_the_one_in_use() -> None:
    assert isinstance(Gate([("token", SECRET_TAIL)])._ac, ahocorasick_rs.BytesAhoCorasick)
    assert isinstance(Redactor().gate._ac, ahocorasick_rs.BytesAhoCorasick)


def test_a_real_messages_bytes_clear_and_its_secret_opens() -> None:
    # a typical tool call: file names, numbers, the word "token" in usage-like keys
    data = {"path": "src/tokenizer.py", "max_tokens": 4096, "input_tokens": 12, "lines": [1, 2, 3],
            "password_min_length": 12}
    assert_clears(REDACTOR, data)
    packed: Callable[[Any], bytes] = msgpack.packb
    assert not REDACTOR.gate.maybe(packed(data))
    assert_redacted(REDACTOR, {**data, "password": "hunter2!"}, "password")
