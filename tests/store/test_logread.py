"""The one reader of a session log (``store.logread``), on real logs written by the store and on a
hostile one written by hand: counts, ranges across buckets, the first bucket that differs."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxide_git.core import codec
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message, Part, Session
from oxide_git.git.commits import signature
from oxide_git.git.objects import BLOB, BLOB_MODE, TREE, TREE_MODE, format_tree
from oxide_git.store import logread
from oxide_git.store import writes as store
from tests.conftest import make_ctx

SID = "0" * 12 + "c" * 20


def _msg(i: int) -> Message:
    return Message("user" if i % 2 else "assistant", (Part.text(f"message {i}"),),
                   created_at=1_767_225_600_000 + i)


def _log(repo: Path, n: int) -> logread.Tip:
    ctx = make_ctx(repo)
    store.append(ctx, Session(id=SID, agent="claude", native_id="n", title="t"), [_msg(i) for i in range(n)])
    tip = logread.tip(ctx.repo.objects, ctx.repo.common_dir, SID)
    assert tip is not None
    return tip


def test_ranges_across_buckets_stream_in_order(repo: Path) -> None:
    tip = _log(repo, 600)  # buckets 0, 1, 2
    objects = make_ctx(repo).repo.objects
    assert tip.count == 600 == logread.count(objects, tip.tree) == logread.count_of(objects, tip.commit)
    got = [(q, codec.decode_message(b).text()) for q, b in logread.iter_blobs(objects, tip.tree, 250, 520)]
    assert got == [(q, f"message {q}") for q in range(250, 520)]
    assert [q for q, _ in logread.iter_blobs(objects, tip.tree, 599)] == [599]
    assert list(logread.iter_blobs(objects, tip.tree, 600)) == []
    assert codec.decode_message(logread.blob_at(objects, tip.tree, 300) or b"").text() == "message 300"
    assert logread.blob_at(objects, tip.tree, 600) is None
    assert dict(logread.blobs_at(objects, tip.tree, [1, 700, 599])).keys() == {1, 599}


def test_first_difference_is_the_first_changed_bucket(repo: Path) -> None:
    ctx = make_ctx(repo)
    first = _log(repo, 600)
    s = first.session
    store.save(ctx, s, {300: _msg(10_300)}, summary="rewrite one message in bucket 1")
    second = logread.tip(ctx.repo.objects, ctx.repo.common_dir, SID)
    assert second is not None
    objects = ctx.repo.objects
    assert logread.first_difference(objects, first.tree, second.tree) == 256
    assert logread.first_difference(objects, None, second.tree) == 0
    assert logread.first_difference(objects, second.tree, second.tree) == 3 * 256  # past the last bucket


def test_a_bucket_holding_another_buckets_message_is_refused(repo: Path) -> None:
    objects = make_ctx(repo).repo.objects
    session = objects.write(BLOB, codec.encode_session(Session(id=SID, agent="claude", native_id="n")))
    blob = objects.write(BLOB, codec.encode_message(_msg(0)))
    stray = objects.write(TREE, format_tree({b"00000300.msgpack": (BLOB_MODE, blob)}))  # seq 300 in bucket 0
    msgs = objects.write(TREE, format_tree({b"000000": (TREE_MODE, stray)}))
    root = objects.write(TREE, format_tree({b"session.msgpack": (BLOB_MODE, session), b"messages": (TREE_MODE, msgs)}))
    tip = logread.tip_at(objects, objects.write_commit(root, [], "m\n", signature("x", "x@y", 1)))
    assert tip.count == 301  # what its last name says
    with pytest.raises(OxideError, match="holds messages of another bucket"):
        list(logread.iter_blobs(objects, tip.tree))


def test_a_name_that_is_no_number_and_a_log_without_a_session_are_refused(repo: Path) -> None:
    objects = make_ctx(repo).repo.objects
    blob = objects.write(BLOB, b"x")
    with pytest.raises(OxideError, match="is not a message number"):
        logread.seq_of(b"notes.txt")
    root = objects.write(TREE, format_tree({b"readme": (BLOB_MODE, blob)}))
    commit = objects.write_commit(root, [], "m\n", signature("x", "x@y", 1))
    with pytest.raises(OxideError, match=r"has no session\.msgpack"):
        logread.tip_at(objects, commit)
    with pytest.raises(OxideError, match="not a commit"):
        logread.tip_at(objects, root)


def test_an_entry_over_the_size_read_is_refused_from_its_header_and_named(repo: Path) -> None:
    import zlib

    objects = make_ctx(repo).repo.objects
    huge = bytes.fromhex("ab" * 20)  # a loose object whose header says 300 MB: never inflated
    folder = Path(objects.dir) / huge.hex()[:2]
    folder.mkdir(exist_ok=True)
    (folder / huge.hex()[2:]).write_bytes(zlib.compress(b"blob 300000000\0" + b"x" * 100))
    session = objects.write(BLOB, codec.encode_session(Session(id=SID, agent="claude", native_id="n")))
    bucket = objects.write(TREE, format_tree({b"00000000.msgpack": (BLOB_MODE, huge)}))
    msgs = objects.write(TREE, format_tree({b"000000": (TREE_MODE, bucket)}))
    root = objects.write(TREE, format_tree({b"session.msgpack": (BLOB_MODE, session), b"messages": (TREE_MODE, msgs)}))
    tip = logread.tip_at(objects, objects.write_commit(root, [], "m\n", signature("x", "x@y", 1)))
    said = f"session log entry {huge.hex()} is 300000000 bytes, larger than the 268435456 git oxide reads"
    with pytest.raises(OxideError, match=said):
        list(logread.iter_blobs(objects, tip.tree))
    with pytest.raises(OxideError, match=said):
        logread.blob_at(objects, tip.tree, 0)
