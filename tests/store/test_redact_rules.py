"""The rules as data: a planted case for every kind, rules that cannot be changed in place, and the
entropy that tells a generated secret from a word."""

from __future__ import annotations

import dataclasses

import pytest

from oxide_git.store.redact_rules import RULES, entropy, high_entropy
from tests.planted import PLANTED


def test_every_rule_has_a_planted_case() -> None:
    assert {r.kind for r in RULES} == set(PLANTED)


def test_rules_cannot_be_changed_in_place() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RULES[0].hints = ()  # type: ignore[misc]


def test_entropy() -> None:
    assert entropy("") == 0.0 and entropy("aaaa") == 0.0 and entropy("ab") == 1.0 and entropy("abcd") == 2.0
    assert not high_entropy("") and high_entropy("x8Kd92mLq0PzR7tY")


def test_high_entropy_at_its_boundaries() -> None:
    # no digit: random-looking only from 24 characters on
    assert high_entropy("AbCdEfGhIjKlMnOpQrStUvWx") and not high_entropy("AbCdEfGhIjKlMnOpQrStUvW")
    # exactly 3 bits per character (eight characters, each twice) is enough
    assert entropy("ab12cd34ab12cd34") == 3.0 and high_entropy("ab12cd34ab12cd34")
    assert not high_entropy("ab12cd3ab12cd3ab")  # seven characters: under 3 bits
