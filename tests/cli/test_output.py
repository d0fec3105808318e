"""Ids as the commands print them (``cli.output.sid``/``cid``): the first few looked up from their
neighbours in the index, the rest from every id at once, the same prefixes either way."""

from __future__ import annotations

from pathlib import Path

from oxide_git.cli import output
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store
from tests.conftest import make_ctx


def test_few_ids_from_their_neighbours_then_all_at_once_agree(repo: Path) -> None:
    ctx = make_ctx(repo)
    # some ids share their first 8 characters in pairs, so that the shortest unique prefix varies
    ids = [f"{k:08x}{tail}{k:022x}" for k in range(output.FEW_IDS + 8)
           for tail in (("a0", "b0") if k % 2 else ("a0",))]
    for n, sid in enumerate(ids):
        store.append(ctx, Session(id=sid, agent="claude", native_id=f"native-{n}", title="t"),
                     [Message("user", (Part.text("hi"),), created_at=1_767_225_600_000 + n)])
    every = ctx.index.session_abbrev()
    output.use_store(ctx)
    try:
        shown = [output.sid(s) for s in ids]  # the first FEW_IDS one by one, the others from all
    finally:
        output.use_store(None)
    assert shown == [every.of(s) for s in ids]
    assert len({len(s) for s in shown}) > 1  # not all cut at the same length
