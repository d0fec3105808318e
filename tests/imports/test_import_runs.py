"""The small files of a bulk import parsed in one child process while this one stores them
(``import_worker.run_files``): the store is the one an import in one process makes, a file whose
session an earlier file of the run wrote is read here, and a child that dies leaves a store the
next import finishes."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from oxide_git.core import forked as forking
from oxide_git.core.errors import OxideError
from oxide_git.imports import importing
from oxide_git.imports import worker as import_worker
from tests.conftest import FIXTURES, git, make_ctx, new_repo
from tests.imports.test_import_batch import _claude, _index, _refs
from tests.imports.test_import_worker import _store
from tests.planted import claude_transcript

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the runs need os.fork")


@contextmanager
def _a_thread_running() -> Iterator[None]:
    """As in the `watch` daemon: a process with a thread of its own never forks."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def _import(root: Path, items: list[tuple[str, Path]], monkeypatch: pytest.MonkeyPatch,
            forked: bool, children: int | None = None) -> list[int | None]:
    """Import in this process; what each run in children returned (None: it read all its files).
    ``children``: how many parse a run (default: one per core, as ``forked.workers``)."""
    runs: list[int | None] = []
    real = import_worker.run_files
    if children is not None:
        monkeypatch.setattr(forking, "workers", lambda jobs: children)

    def counted(*a, **k):  # type: ignore[no-untyped-def]
        runs.append(real(*a, **k))
        return runs[-1]

    monkeypatch.setattr(import_worker, "run_files", counted)
    monkeypatch.chdir(root)
    ctx = make_ctx(root)
    try:
        if forked:
            report = importing.import_sessions(ctx, items)
        else:
            with _a_thread_running():
                report = importing.import_sessions(ctx, items)
    finally:
        ctx.close()
    assert bool(runs) == forked
    assert all(f.state != "failed" for f in report.files if "not_json" not in f.path), report.files
    return runs


def _items(tmp: Path) -> list[tuple[str, Path]]:
    items = [("claude", FIXTURES / "claude" / n) for n in ("split_response.jsonl", "compaction.jsonl",
                                                          "legacy_sidechain.jsonl", "not_json.jsonl")]
    items += [("codex", FIXTURES / "codex" / n) for n in ("turns.jsonl", "fork.jsonl", "compacted.jsonl")]
    items.append(("claude", claude_transcript(tmp / "secrets.jsonl", "/work/project", turns=3)))
    return items + [("claude", _claude(tmp / f"s{i}.jsonl", f"{i:08d}-bbbb-4000-8000-000000000000", 8 + i))
                    for i in range(6)]


@pytest.mark.parametrize("children", [1, 3])
def test_small_files_parsed_in_a_child_are_stored_as_in_one_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, children: int) -> None:
    items = _items(tmp_path)
    alone, forked = new_repo(tmp_path / "alone"), new_repo(tmp_path / "forked")
    _import(alone, items, monkeypatch, forked=False)
    assert _import(forked, items, monkeypatch, forked=True, children=children) == [None]  # one run, all
    assert _refs(alone) == _refs(forked)  # the same commits (the clock is pinned)
    a, b = _index(alone), _index(forked)
    assert a[:3] == b[:3]  # sessions, messages, parts
    assert a[3] == b[3]  # the cursors: restart points, and the digest of the bytes before each
    assert _store(alone) == _store(forked)
    git(forked, "fsck", "--strict", "--no-dangling")
    _import(forked, items, monkeypatch, forked=True)  # again: every file unchanged, nothing written
    assert _refs(alone) == _refs(forked)


@pytest.mark.parametrize("children", [1, 2])  # with two: the files of the session in different ones
def test_a_file_writing_a_session_an_earlier_file_of_the_run_wrote_is_read_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, children: int) -> None:
    items = _items(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    sid = "77777777-cccc-4000-8000-000000000000"
    first = _claude(tmp_path / "a" / f"{sid}.jsonl", sid, 6)
    longer = _claude(tmp_path / "b" / f"{sid}.jsonl", sid, 11)  # the same session, grown, elsewhere
    items[3:3] = [("claude", first), ("claude", longer)]
    alone, forked = new_repo(tmp_path / "alone"), new_repo(tmp_path / "forked")
    _import(alone, items, monkeypatch, forked=False)
    runs = _import(forked, items, monkeypatch, forked=True, children=children)
    assert runs[0] == 4  # stopped at the second file of the session; the rest in a second run
    assert _refs(alone) == _refs(forked)  # the same commits: the same messages
    assert _index(alone)[:3] == _index(forked)[:3]


@pytest.mark.parametrize("children", [1, 2])
def test_a_child_that_dies_mid_run_leaves_a_store_the_next_import_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, children: int) -> None:
    items = _items(tmp_path)
    parser = importing.agent_module("claude")
    real_parse = parser.parse
    victim = items[-2][1]

    def dying(path, *a, **k):  # type: ignore[no-untyped-def]
        for n, ev in enumerate(real_parse(path, *a, **k)):
            if path == victim and n == 3:
                os._exit(9)  # in the child: as if killed mid-run
            yield ev

    root = new_repo(tmp_path / "r")
    monkeypatch.setattr(parser, "parse", dying)
    with pytest.raises(OxideError, match="ended unexpectedly"):
        _import(root, items, monkeypatch, forked=True, children=children)
    ctx = make_ctx(root)
    read = [p for _a, p in items if ctx.index.cursor(str(p.resolve())) is not None]
    ctx.close()
    # what a batch stored before the death (a copied session had it stored) is kept, with its
    # files' cursors; nothing from the file that was being read, or after it, claims it was read
    assert read == [p for _a, p in items[:len(read)]] and victim not in read and items[-1][1] not in read
    monkeypatch.setattr(parser, "parse", real_parse)
    _import(root, items, monkeypatch, forked=True)
    clean = new_repo(tmp_path / "clean")
    _import(clean, items, monkeypatch, forked=False)
    assert _refs(root) == _refs(clean)
    assert _index(root)[:3] == _index(clean)[:3]


def test_a_process_with_threads_of_its_own_keeps_its_batch_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in `watch`: no fork, and the batch is not stored file by file waiting for a chance to."""
    from oxide_git.store import batch as import_batch

    items = _items(tmp_path)
    settled: list[int] = []
    real = import_batch.FileBatch.settle

    def counted(self):  # type: ignore[no-untyped-def]
        settled.append(1)
        return real(self)

    monkeypatch.setattr(import_batch.FileBatch, "settle", counted)
    monkeypatch.setattr(import_batch, "BATCH_BYTES", 1)  # a flush after each file: its index thread runs
    alone, forked = new_repo(tmp_path / "alone"), new_repo(tmp_path / "forked")
    _import(alone, items, monkeypatch, forked=False)
    assert len(settled) == 1  # once, at the end of the import
    settled.clear()
    assert _import(forked, items, monkeypatch, forked=True) == [None]
    assert _refs(alone) == _refs(forked)
    assert _index(alone)[:3] == _index(forked)[:3]


def test_a_child_cut_short_mid_item_is_said_as_such() -> None:
    import io
    import pickle

    whole = pickle.dumps(("batch", b"x" * 100_000), protocol=pickle.HIGHEST_PROTOCOL)
    for cut in (b"", whole[:len(whole) // 2]):
        with pytest.raises(OxideError, match="ended unexpectedly"):
            import_worker._load(io.BytesIO(cut), "the files imported together")
