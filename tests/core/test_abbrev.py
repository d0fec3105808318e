"""Shortest unique prefixes: every answer checked against the definition, on keys built to share
long prefixes (time-ordered ids do), with an agent id beside each session id and keys two
sessions share."""

from __future__ import annotations

import random

from oxide_git.core.abbrev import Abbreviator


def _reference(pairs: list[tuple[str, str]], oid: str, minimum: int) -> str:
    """The fewest leading characters (``minimum`` at least) no key of another owner starts with."""
    others = [k for k, owner in pairs if owner != oid and k]
    for n in range(minimum, len(oid) + 1):
        if not any(k.startswith(oid[:n]) for k in others):
            return oid[:n]
    return oid


def test_every_prefix_is_the_shortest_unique_one() -> None:
    rnd = random.Random(7)
    for _ in range(40):
        stem = "".join(rnd.choice("0123456789abcdef") for _ in range(6))
        ids = [stem + "".join(rnd.choice("0123456789abcdef") for _ in range(rnd.choice((2, 6, 26))))
               for _ in range(rnd.randint(1, 30))]
        ids = sorted(set(ids))
        pairs = [(i, i) for i in ids]
        pairs += [(i[:-1] + "x", i) for i in ids if rnd.random() < 0.5]  # its agent's id, next to it
        if len(ids) > 1 and rnd.random() < 0.5:
            pairs.append((ids[0], ids[1]))  # one key of two sessions: nothing short names either
        minimum = rnd.choice((4, 8))
        abbrev = Abbreviator(pairs, minimum=minimum)
        for oid in ids:
            assert abbrev.of(oid) == _reference(pairs, oid, minimum), (pairs, oid)


def test_no_key_and_no_id() -> None:
    assert Abbreviator([]).of("0199c50b1234") == "0199c50b"
    assert Abbreviator([("abc", "abc")]).of("abc") == "abc"  # shorter than the minimum: whole
    assert Abbreviator([]).of(None) == "-"
