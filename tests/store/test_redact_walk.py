"""Redaction's walk, hit by hit: every hit of a string is judged on its own (a placeholder or an
allowlisted hit does not shield the next one), strings whose lowercase form has another length,
an image's pixels, a rule whose secret group may not take part, a message that arrives encoded
(an import's parser process), and a session's own hits counted once per session."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from oxide_git.core import codec
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store
from oxide_git.store.redact import Redactor
from oxide_git.store.redact_rules import Rule
from oxide_git.store.sessionlog import load
from tests.conftest import make_ctx, oxide
from tests.planted import PLANTED

R = Redactor()


def _text(s: str, r: Redactor = R) -> tuple[str, dict[str, int]]:
    counts: Counter[str] = Counter()
    out = r.text(s, counts)
    return out, dict(counts)


def test_a_placeholder_does_not_shield_the_real_password_after_it() -> None:
    out, counts = _text("password=xxxxxxxx then password=hunter2!")
    assert out == "password=xxxxxxxx then password=[REDACTED:password]" and counts == {"password": 1}


def test_an_allowlisted_hit_does_not_shield_the_next_one() -> None:
    r = Redactor(["^AKIAIOSFODNN7EXAMPLE$"])
    out, counts = _text("AKIAIOSFODNN7EXAMPLE and AKIAZ3MHALVKQ2XB7YTW", r)
    assert out == "AKIAIOSFODNN7EXAMPLE and [REDACTED:aws_access_key_id]" and counts == {"aws_access_key_id": 1}


def test_a_token_glued_to_a_word_does_not_shield_the_next_one() -> None:
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    out, counts = _text(f"x{key} {key}")
    assert out == f"x{key} [REDACTED:github_token]" and counts == {"github_token": 1}


def test_a_string_whose_lowercase_is_longer_is_still_redacted() -> None:
    # "İ".lower() is two characters: positions in the lowercased string no longer line up, so the
    # case-insensitive form of a lowercase rule runs on the string itself
    s = "İstanbul PASSWORD=hunter2! Bearer ABCDEFGHIJKLMNOPQRSTUV0123456789xyz"
    assert len(s.lower()) != len(s)
    out, counts = _text(s)
    assert out == "İstanbul PASSWORD=[REDACTED:password] Bearer [REDACTED:bearer_token]"
    assert counts == {"password": 1, "bearer_token": 1}


def test_a_second_lowercase_rule_sees_the_first_ones_result() -> None:
    # the password rule rewrites the string; the bearer rule after it must read the new one
    out, counts = _text("PASSWORD=hunter2! and Bearer ABCDEFGHIJKLMNOPQRSTUV0123456789xyz")
    assert out == "PASSWORD=[REDACTED:password] and Bearer [REDACTED:bearer_token]"
    assert counts == {"password": 1, "bearer_token": 1}


def test_a_rule_whose_secret_group_does_not_take_part_skips_that_match_only() -> None:
    rule = Rule("demo", r"(?:key=(?P<secret>[a-z0-9]{8,})|keyless)", ("key",))
    r = Redactor(rules=[rule])
    out, counts = _text("keyless first, then key=abcd1234efgh", r)
    assert out == "keyless first, then key=[REDACTED:demo]" and counts == {"demo": 1}


def test_an_image_keeps_its_pixels_and_a_field_named_data_elsewhere_is_redacted() -> None:
    pixels = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"  # base64 that happens to read like a key
    image = Part.image("image/png", data=pixels, alt="password=hunter2!")
    text = Part.text("see attached", data="password=hunter2!")  # a field named data on another part
    m = Message("user", (image, text))
    out, counts = R.message(m)
    assert out.parts[0].data == {"mime": "image/png", "data": pixels, "alt": "password=[REDACTED:password]"}
    assert out.parts[1].data == {"text": "see attached", "data": "password=[REDACTED:password]"}
    assert dict(counts) == {"password": 2}
    clean = Message("user", (Part.image("image/png", data=pixels),))
    assert R.message(clean)[0] is clean


def test_a_message_that_arrives_encoded_is_redacted_only_when_it_must() -> None:
    secret = Message("user", (Part.text("password=hunter2!"),))
    blob, scan = codec.encode_message_scan(secret)
    out, changed = R.reencoded(blob, scan)
    assert changed is not None and changed.parts[0].data["text"] == "password=[REDACTED:password]"
    assert out == codec.encode_message(changed) and b"hunter2!" not in out
    # the gate opens (a word and a string), the walk finds nothing: the bytes stay as they were
    maybe = Message("user", (Part.tool_call("c", "t", {"note": "reset your password", "count": 3}),))
    blob, scan = codec.encode_message_scan(maybe)
    assert R.gate.maybe(scan)
    assert R.reencoded(blob, scan) == (blob, None)
    plain = Message("user", (Part.text("hello"),))
    blob, scan = codec.encode_message_scan(plain)
    assert R.reencoded(blob, scan) == (blob, None)


def test_a_sessions_own_hits_are_counted_once_however_often_it_is_written(repo: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    s = Session("0000000000001234567890abcdef5678", "claude", title="deploy with password=hunter2!")
    store.append(ctx, s, [Message("user", (Part.text(PLANTED["jwt"][0]),))])
    store.append(ctx, s, [Message("user", (Part.text("and again " + PLANTED["jwt"][0]),))])
    log = load(ctx.repo, s.id)
    assert log is not None
    assert log.session.title == "deploy with password=[REDACTED:password]"
    assert log.session.redactions == {"jwt": 2, "password": 1}
    assert log.session.extra["redacted_fields"] == {"password": 1}


def test_the_shortest_redactable_string_is_eight_characters() -> None:
    assert _text("pwd=abcd") == ("pwd=[REDACTED:password]", {"password": 1})
    assert _text("pwd=abc") == ("pwd=abc", {})


def test_a_token_at_the_very_start_is_redacted_whatever_the_string_ends_with() -> None:
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert _text(f"{key} was leaked") == ("[REDACTED:github_token] was leaked", {"github_token": 1})


def test_a_sessions_extra_fields_are_redacted_and_counted() -> None:
    s = Session("0000000000001234567890abcdef9999", "claude", extra={"note": "password=hunter2!"},
                unknown={"raw": {"api_token": "x8Kd92mLq0PzR7tY"}})
    out = R.session(s)
    assert out.extra == {"note": "password=[REDACTED:password]", "redacted_fields": {"password": 1, "secret": 1}}
    assert out.unknown == {"raw": {"api_token": "[REDACTED:secret]"}}
    # redacted again: nothing left to find, and its own counts are not walked as its fields
    assert R.session(out) is out


def test_assignments_are_found_whatever_their_case() -> None:
    for text, kind in (("export API_TOKEN=x8Kd92mLq0PzR7tY", "secret"), ("DB_PASSWORD=hunter2!", "password"),
                       ("AWS_SECRET_ACCESS_KEY=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key"),
                       ("Authorization: BEARER ABCDEFGHIJKLMNOPQRSTUV0123456789xyz", "bearer_token")):
        out, counts = _text(text)
        assert counts == {kind: 1}, text
        assert f"[REDACTED:{kind}]" in out


def test_a_value_under_four_characters_is_no_password() -> None:
    assert _text("password=abc") == ("password=abc", {})
    assert _text("password=abcd") == ("password=[REDACTED:password]", {"password": 1})


def test_allowlist_lines_blank_comments_and_invalid_patterns(tmp_path: Path) -> None:
    from oxide_git.store.redact import read_allowlist

    first = tmp_path / "missing"  # an allowlist file that is not there is skipped, not the end
    second = tmp_path / "allow"
    second.write_text("\n# keys we publish on purpose\n   \n  AKIAIOSFODNN7EXAMPLE  \n[unclosed\n\n")
    lines = read_allowlist([first, second])
    assert lines == ["AKIAIOSFODNN7EXAMPLE", "[unclosed"]
    r = Redactor(lines)
    # a blank line would allow every hit: none is kept; an invalid regex is taken literally
    assert _text("AKIAIOSFODNN7EXAMPLE and AKIAZ3MHALVKQ2XB7YTW", r) == (
        "AKIAIOSFODNN7EXAMPLE and [REDACTED:aws_access_key_id]", {"aws_access_key_id": 1})
    assert r.allowed("x[unclosed") and not r.allowed("unclosed")


def test_the_repositorys_own_allowlist_is_honoured_without_an_oxideallow_file(repo: Path) -> None:
    from oxide_git.store.redact import redactor_for

    oxide(repo, "init")
    (repo / ".git" / "oxide" / "allowlist").write_text("^AKIAIOSFODNN7EXAMPLE$\n")
    r = redactor_for(make_ctx(repo))
    assert r is not None and _text("AKIAIOSFODNN7EXAMPLE", r) == ("AKIAIOSFODNN7EXAMPLE", {})
