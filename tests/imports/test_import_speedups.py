"""What the import's fast paths must not change: the index written from a background thread, the
bulk index statements, and orjson standing in for json."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part
from oxide_git.imports import importing
from oxide_git.imports import writer as import_writer
from oxide_git.store.index_queue import IndexQueue
from oxide_git.store.logwrite import with_ids
from oxide_git.store.search_query import search
from tests.conftest import make_ctx

FIXTURES = Path(__file__).parents[2] / "fixtures"


def _index_dump(repo: Path) -> list[list[tuple[object, ...]]]:
    db = sqlite3.connect(repo / ".git" / "oxide" / "index.db")
    try:
        rows = [sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in ("sessions", "messages", "parts")]
    finally:
        db.close()
    found = search(make_ctx(repo).index, "the", limit=100_000)
    return [*rows, sorted((h["session_id"], h["seq"]) for h in found)]


@pytest.mark.parametrize("agent,name", [("claude", "split_response.jsonl"), ("codex", "fork.jsonl"),
                                        ("claude", "legacy_sidechain.jsonl")])
def test_index_written_on_a_thread_equals_the_direct_one(tmp_path: Path, repo: Path,
                                                          monkeypatch: pytest.MonkeyPatch, agent: str,
                                                          name: str) -> None:
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    src = FIXTURES / agent / name
    monkeypatch.setattr(import_writer, "BATCH", 2)  # several batches, so several jobs queue up
    importing.import_file(make_ctx(repo), agent, src)
    monkeypatch.setattr(importing, "BACKGROUND_BYTES", 0)  # every file takes the thread path
    importing.import_file(make_ctx(other), agent, src)
    assert _index_dump(other) == _index_dump(repo)
    assert _index_dump(repo)[1]


def test_a_failing_index_job_is_raised_to_the_importer_and_stops_the_rest(tmp_path: Path) -> None:
    done: list[int] = []
    q = IndexQueue(tmp_path / "index.db")

    def boom(_ix: object) -> None:
        raise RuntimeError("disk full")

    q.submit(lambda _ix: done.append(1))
    q.submit(boom)
    q.submit(lambda _ix: done.append(3))
    with pytest.raises(RuntimeError, match="disk full"):
        q.close()
    assert done == [1]


def test_bulk_put_messages_with_gaps_replaces_only_those_seqs(repo: Path) -> None:
    ctx = make_ctx(repo)
    ix = ctx.index
    msgs = {q: Message("user", (Part.text(f"m{q}"), Part.tool_result(f"c{q}", "out", True)),
                       created_at=q) for q in range(6)}
    with ix.write() as c:
        ix.put_messages(c, "s", with_ids("s", msgs))
    with ix.write() as c:  # seqs 1 and 4 only: a run would wrongly drop 2 and 3
        ix.put_messages(c, "s", with_ids("s", {1: Message("assistant", (Part.text("one"),)),
                                                4: Message("assistant", (Part.text("four"),))}))
    rows = ix.query("SELECT seq, role, text FROM messages WHERE session_id='s' ORDER BY seq")
    assert [tuple(r) for r in rows] == [(0, "user", "m0"), (1, "assistant", "one"), (2, "user", "m2"),
                                        (3, "user", "m3"), (4, "assistant", "four"), (5, "user", "m5")]
    parts = ix.query("SELECT seq, idx, type, call_id, is_error FROM parts WHERE seq=2")
    assert [tuple(r) for r in parts] == [(2, 0, "text", None, None), (2, 1, "tool_result", "c2", 1)]


@pytest.mark.parametrize("n", [3, 300])  # json writes a few rows, orjson an import's batch
def test_index_rows_are_the_same_whoever_writes_them(repo: Path, n: int) -> None:
    ix = make_ctx(repo).index
    texts = ["plain", "é ✓ 𝄞", 'quote " and \\ back', "tab\tnew\nline", "\u2028 line separator"]
    msgs = {q: Message("user", (Part.text(texts[q % len(texts)]), Part.tool_result(f"c{q}", "out", q % 2 == 0)),
                       created_at=10**15 + q, model="m") for q in range(n)}
    with ix.write() as c:
        ix.put_messages(c, "s", with_ids("s", msgs))
    rows = ix.query("SELECT seq, text, created_at, model FROM messages WHERE session_id='s' ORDER BY seq")
    assert [tuple(r) for r in rows] == [(q, m.text(), m.created_at, "m") for q, m in msgs.items()]
    errors = ix.query("SELECT seq, is_error FROM parts WHERE session_id='s' AND idx=1 ORDER BY seq")
    assert [tuple(r) for r in errors] == [(q, int(q % 2 == 0)) for q in range(n)]


def test_with_id_copies_every_field() -> None:
    """``Message.with_id`` names the fields itself (it is on the import path): a field added to the
    model and not copied there fails here."""
    from dataclasses import fields, replace

    values = {f.name: f"sentinel-{f.name}" for f in fields(Message)}
    values["parts"] = (Part.text("x"),)
    m = Message(**values)
    assert m.with_id("new") == replace(m, id="new")
