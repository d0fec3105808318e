"""A bulk import's small files stored as one batch (``import_batch``): one pack, and the store an
import of the same files one at a time makes: the same commits, the same index, forks linked, and
a ref another writer moved meanwhile never forced."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part
from oxide_git.git import refs
from oxide_git.imports import importing
from oxide_git.store import batch as import_batch
from oxide_git.store import logread
from oxide_git.store import writes as store
from tests.conftest import git, make_ctx, new_repo


def _claude(path: Path, sid: str, n: int, copy_of: list[str] | None = None) -> Path:
    """A Claude transcript of ``n`` new lines, after the lines ``copy_of`` (a resume-by-copy)."""
    lines = [json.dumps({**json.loads(ln), "sessionId": sid}) for ln in copy_of or []]
    parent = json.loads(lines[-1])["uuid"] if lines else None
    for i in range(n):
        uid = f"{sid[:8]}-0000-4000-8000-{i:012d}"
        role = "user" if i % 2 == 0 else "assistant"
        msg: dict[str, object] = {"role": role, "content": f"{sid[:4]} says {i}"}
        if role == "assistant":
            msg = {"model": "claude-opus-4-6", "id": f"msg_{sid[:4]}_{i}", "type": "message", "role": role,
                   "content": [{"type": "text", "text": f"{sid[:4]} reply {i}"}], "stop_reason": "end_turn",
                   "usage": {"input_tokens": 1, "output_tokens": 1}}
        lines.append(json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external",
                                 "cwd": "/work/p", "sessionId": sid, "version": "2.1.39", "type": role,
                                 "message": msg, "uuid": uid, "timestamp": f"2026-02-01T10:00:{i:02d}.000Z"}))
        parent = uid
    path.write_text("\n".join(lines) + "\n")
    return path


def _files(tmp: Path, n: int = 6) -> list[tuple[str, Path]]:
    return [("claude", _claude(tmp / f"s{i}.jsonl", f"{i:08d}-aaaa-4000-8000-000000000000", 10 + i))
            for i in range(n)]


def _refs(root: Path) -> list[str]:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide/sessions").splitlines()


def _index(root: Path) -> list[list[tuple[object, ...]]]:
    db = sqlite3.connect(root / ".git" / "oxide" / "index.db")
    try:
        return [sorted(db.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in ("sessions", "messages", "parts", "cursors")]
    finally:
        db.close()


def _loose(root: Path) -> int:
    out = git(root, "count-objects", "-v")
    return int(next(ln.split()[1] for ln in out.splitlines() if ln.startswith("count:")))


@pytest.mark.parametrize("swap_all_from", [1, 10**9], ids=["refs moved by git at once", "one by one"])
def test_a_bulk_import_is_one_pack_and_the_store_one_file_at_a_time_makes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_all_from: int) -> None:
    monkeypatch.setattr(import_batch, "SWAP_ALL_FROM", swap_all_from)
    items = _files(tmp_path)
    assert len(items) >= import_batch.BATCH_MIN_FILES
    together, alone = new_repo(tmp_path / "together"), new_repo(tmp_path / "alone")
    loose_before = _loose(together)
    report = importing.import_sessions(make_ctx(together), items)
    assert [f.state for f in report.files] == ["new"] * len(items)
    for item in items:
        importing.import_sessions(make_ctx(alone), [item])  # one file: written as it goes
    assert _loose(together) == loose_before  # nothing loose: the batch's objects are one pack
    assert _loose(alone) > loose_before + 100
    assert len(list((together / ".git" / "objects" / "pack").glob("*.pack"))) == 1
    assert _refs(together) == _refs(alone) and len(_refs(together)) == len(items)  # the same commits
    assert _index(together) == _index(alone)
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=together, check=True, capture_output=True)
    again = importing.import_sessions(make_ctx(together), items)
    assert [f.state for f in again.files] == ["unchanged"] * len(items)  # the cursors were written


def test_a_copied_session_in_the_same_batch_is_linked_as_its_fork(tmp_path: Path) -> None:
    items = _files(tmp_path)
    first = items[0][1].read_text().splitlines()
    copy = _claude(tmp_path / "copy.jsonl", "99999999-bbbb-4000-8000-000000000000", 4, copy_of=first[:6])
    items.append(("claude", copy))
    together, alone = new_repo(tmp_path / "together"), new_repo(tmp_path / "alone")
    importing.import_sessions(make_ctx(together), items)
    for item in items:
        importing.import_sessions(make_ctx(alone), [item])
    ctx = make_ctx(together)
    rows = {r["native_id"]: r for r in ctx.index.session_rows()}
    fork, source = rows["99999999-bbbb-4000-8000-000000000000"], rows["00000000-aaaa-4000-8000-000000000000"]
    assert fork["parent_id"] == source["id"] and fork["fork_message_id"]
    assert _index(together) == _index(alone)


def test_a_copy_in_a_batch_of_a_session_stored_before_it_is_linked_as_its_fork(tmp_path: Path) -> None:
    """The batch skips the index's lookup only when the index began empty (a first import)."""
    items = _files(tmp_path)
    first = items[0][1].read_text().splitlines()
    copy = _claude(tmp_path / "copy.jsonl", "99999999-bbbb-4000-8000-000000000000", 4, copy_of=first[:6])
    root = new_repo(tmp_path / "repo")
    importing.import_sessions(make_ctx(root), [items[0]])  # the source, stored before
    importing.import_sessions(make_ctx(root), [*items[1:], ("claude", copy)])
    rows = {r["native_id"]: r for r in make_ctx(root).index.session_rows()}
    fork, source = rows["99999999-bbbb-4000-8000-000000000000"], rows["00000000-aaaa-4000-8000-000000000000"]
    assert fork["parent_id"] == source["id"] and fork["fork_message_id"]


@pytest.mark.parametrize("swap_all_from", [1, 10**9], ids=["refs moved by git at once", "one by one"])
def test_a_ref_moved_under_the_batch_is_not_forced_and_its_file_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap_all_from: int) -> None:
    """At once, git refuses the whole transaction (nothing moved): the refs are then moved one by
    one, and only the moved one's file is read again."""
    monkeypatch.setattr(import_batch, "SWAP_ALL_FROM", swap_all_from)
    items = _files(tmp_path, 2)
    root = new_repo(tmp_path / "repo")
    ctx = make_ctx(root)
    with import_batch.held(ctx, True) as batch:
        assert batch is not None
        batch.file = 0
        importing.import_file(ctx, *items[0], batch=batch)
        batch.file = 1
        report = importing.import_file(ctx, *items[1], batch=batch)
        (sid,) = report.sessions
        assert refs.read_raw(ctx.repo.common_dir, refs.session_ref(sid)) is None  # held, not written
        other = make_ctx(root)  # another writer, on disk, meanwhile: the session's first write there
        store.append(other, _held_session(ctx, sid, batch),
                     [Message("user", (Part.text("written elsewhere"),), created_at=1)])
    assert batch.redo == [1]
    moved = refs.read_raw(ctx.repo.common_dir, refs.session_ref(sid))
    assert moved is not None
    cursor = make_ctx(root).index.cursor(str(items[1][1].resolve()))
    assert cursor is None  # the file's cursor waits for its writes
    assert make_ctx(root).index.cursor(str(items[0][1].resolve())) is not None
    # what import_sessions then does: the file alone, on the tip the other writer left
    again = importing.import_file(make_ctx(root), *items[1])
    assert again.state == "new" and again.messages == 11
    log = git(root, "log", "--format=%s", refs.session_ref(sid)).splitlines()
    assert log[-1] == "append 1 message(s)" and len(log) == 2  # built on theirs: nothing overwritten


def _held_session(ctx, sid: str, batch: import_batch.FileBatch):  # type: ignore[no-untyped-def]
    tip = logread.tip(batch, ctx.repo.common_dir, sid)  # the batch's view: the session it holds
    assert tip is not None
    return tip.session


def test_the_batch_holds_only_objects_the_store_lacks(tmp_path: Path) -> None:
    from oxide_git.git.objects import BLOB

    root = new_repo(tmp_path / "r")
    loose = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=b"loose one\n",
                           capture_output=True, check=True).stdout.decode().strip()
    path = root / ".git" / "objects" / loose[:2] / loose[2:]
    os.utime(path, (1_000_000_000, 1_000_000_000))
    ctx = make_ctx(root)
    with import_batch.held(ctx, True) as batch:
        assert batch is not None
        assert batch.write(BLOB, b"loose one\n").hex() == loose and not batch.held  # stored: not held
        assert path.stat().st_mtime > 1_000_000_000  # and freshened, as git does
        new = batch.write(BLOB, b"new one\n")
        assert new in batch.held and batch.has(new)
        batch.flush()  # fewer than PACK_MIN: written loose, and known as such
        assert not batch.held and batch.has(new) and batch.write(BLOB, b"new one\n") == new and not batch.held
    assert git(root, "cat-file", "-p", new.hex()).strip() == "new one"
    ctx.close()


def test_git_moves_all_the_refs_or_none(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    common = root / ".git"
    head = bytes.fromhex(git(root, "rev-parse", "HEAD").strip())
    tree = bytes.fromhex(git(root, "rev-parse", "HEAD^{tree}").strip())
    a, b = "refs/oxide/sessions/a", "refs/oxide/sessions/b"
    assert refs.swap_all(common, [(a, None, head), (b, None, head)])
    assert refs.read_raw(common, a) == refs.read_raw(common, b) == head
    assert not refs.swap_all(common, [(a, head, tree), (b, None, tree)])  # b is not absent: neither moves
    assert refs.read_raw(common, a) == refs.read_raw(common, b) == head
    (common / f"{b}.lock").write_text("")  # another writer holds b
    assert not refs.swap_all(common, [(a, head, tree), (b, head, tree)])
    assert refs.read_raw(common, a) == head and (common / f"{b}.lock").exists()
    (common / f"{b}.lock").unlink()
    hook = common / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho ran >> \"$GIT_DIR/hook-ran\"\nexit 1\n")
    hook.chmod(0o755)
    assert refs.swap_all(common, [(a, head, tree)])  # no hook of the user's runs for oxide's refs
    assert refs.read_raw(common, a) == tree and not (common / "hook-ran").exists()


def test_a_batch_reads_packed_session_refs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refs `git pack-refs` moved into packed-refs are found there (read once per batch), and moved
    from there: the store is the one the same imports make with loose refs."""
    monkeypatch.setattr(import_batch, "SWAP_ALL_FROM", 1)
    items = _files(tmp_path)
    packed, loose = new_repo(tmp_path / "packed"), new_repo(tmp_path / "loose")
    for root in (packed, loose):
        importing.import_sessions(make_ctx(root), items)
    git(packed, "pack-refs", "--all")
    assert not list((packed / ".git" / "refs" / "oxide" / "sessions").glob("*"))
    for i, (_agent, path) in enumerate(items):  # each session goes on
        _claude(path, f"{i:08d}-aaaa-4000-8000-000000000000", 14 + i)
    for root in (packed, loose):
        report = importing.import_sessions(make_ctx(root), items)
        assert [f.state for f in report.files] == ["grown"] * len(items)
    assert _refs(packed) == _refs(loose) and _index(packed) == _index(loose)
    log = git(packed, "log", "--format=%s", _refs(packed)[0].split()[0]).splitlines()
    assert len(log) == 2  # built on the packed tip
