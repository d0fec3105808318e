"""A reindex of many sessions reads their logs in child processes (``reindex_worker``): the index
it writes is the one a reindex in one process writes, row for row; a log it cannot read is that
session's problem only; a child that dies stops it with whole sessions written, and a reindex
again finishes."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from oxide_git.core import codec
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import logwrite, reindex_worker
from oxide_git.store import writes as store
from oxide_git.store.reindex import reindex
from tests.conftest import make_ctx

T0 = 1_767_225_600_000
BROKEN = "2" * 12 + "e" * 20


def _ids(n: int) -> list[str]:
    return [f"{i:012x}" + "a" * 20 for i in range(n)]


def _store(repo: Path) -> None:
    """Eleven sessions (one of 2,500 messages: two batches), and one whose log holds a message
    that is not a message."""
    ctx = make_ctx(repo)
    for i, sid in enumerate(_ids(11)):
        msgs = [Message("user" if q % 2 == 0 else "assistant", (Part.text(f"s{i} message {q}"),),
                        created_at=T0 + q) for q in range(2_500 if i == 3 else 5 + i)]
        store.append(ctx, Session(id=sid, agent="claude", native_id=f"n{i}", title=f"t{i}"), msgs)
    s = Session(id=BROKEN, agent="codex", title="broken")
    blobs = {0: codec.encode_message(Message("user", (Part.text("fine"),))), 1: b"\xc1 not msgpack"}
    logwrite.commit(ctx.repo.objects, ctx.repo.common_dir, s, blobs, now_ms=T0, summary="x", base=None,
                    expected=None)
    ctx.close()


def _tables(repo: Path) -> dict[str, list[Any]]:
    db = sqlite3.connect(repo / ".git" / "oxide" / "index.db")
    try:
        return {t: db.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
                for t in ("sessions", "messages", "parts")}
    finally:
        db.close()


def _full(repo: Path) -> Any:
    ctx = make_ctx(repo)
    try:
        return reindex(ctx, full=True)
    finally:
        ctx.close()


def test_children_write_the_rows_one_process_writes(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store(repo)
    forks: list[int] = []
    real_run = reindex_worker.run
    monkeypatch.setattr(reindex_worker, "run", lambda *a: (forks.append(len(a[2])), real_run(*a))[1])
    monkeypatch.setattr(reindex_worker, "FORK_FROM", 10**9)
    alone = _full(repo)
    one_process = _tables(repo)
    assert forks == []
    monkeypatch.setattr(reindex_worker, "FORK_FROM", 8)
    res = _full(repo)
    assert forks == [12]  # the twelve sessions, read by the children
    assert _tables(repo) == one_process
    assert (res.sessions_updated, res.messages_indexed) == (alone.sessions_updated, alone.messages_indexed) \
        == (11, 2_500 + sum(5 + i for i in range(11) if i != 3))
    assert res.problems == alone.problems and len(res.problems) == 1
    assert res.problems[0].startswith(f"refs/oxide/sessions/{BROKEN}: ")
    assert not [r for r in one_process["messages"] if r[0] == BROKEN]  # its transaction rolled back


def test_a_child_that_dies_stops_it_with_whole_sessions_and_a_reindex_again_finishes(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store(repo)
    monkeypatch.setattr(reindex_worker, "FORK_FROM", 10**9)
    _full(repo)
    whole = _tables(repo)
    monkeypatch.setattr(reindex_worker, "FORK_FROM", 8)
    from oxide_git.store import reindex_items as reindex_mod  # where the workers take it from

    parent, real = os.getpid(), reindex_mod.session_items
    victim = _ids(11)[3]  # the long one: its child dies after its first batch of rows

    def dying(git: Any, oid: Any, tip: Any) -> Any:
        for n, item in enumerate(real(git, oid, tip)):
            if os.getpid() != parent and str(oid) == victim_oid and n == 2:
                os._exit(9)
            yield item

    ctx = make_ctx(repo)
    victim_oid = str(ctx.repo.git.references[f"refs/oxide/sessions/{victim}"].target)
    ctx.close()
    monkeypatch.setattr(reindex_mod, "session_items", dying)
    with pytest.raises(OxideError, match="the process reading the session logs ended unexpectedly"):
        _full(repo)
    part = _tables(repo)
    written = {r[0] for r in part["sessions"]}
    assert victim not in written and not [r for r in part["messages"] if r[0] == victim]
    for sid in written:  # each session written is whole
        assert [r for r in part["messages"] if r[0] == sid] == [r for r in whole["messages"] if r[0] == sid]
    monkeypatch.setattr(reindex_mod, "session_items", real)
    ctx = make_ctx(repo)
    reindex(ctx)  # the ones not written yet, and nothing else
    ctx.close()
    assert _tables(repo) == whole


def test_a_child_that_fails_outside_a_session_stops_it_with_its_traceback(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _store(repo)
    monkeypatch.setattr(reindex_worker, "FORK_FROM", 8)
    from oxide_git.store import reindex_items as reindex_mod  # where the workers take it from

    def failing(git: Any, oid: Any, tip: Any) -> Any:
        raise ValueError("not an OxideError")
        yield  # a generator, as session_items is

    monkeypatch.setattr(reindex_mod, "session_items", failing)
    with pytest.raises(RuntimeError, match=r"(?s)in the process parsing the session logs: .*ValueError: not an OxideError"):
        _full(repo)
    assert _tables(repo)["sessions"] == []  # a full reindex dropped the rows: a reindex again rebuilds them
