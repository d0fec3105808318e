"""Reading session blobs straight from pack files (``Objects.blobs`` over ``packread``) must give
exactly what git's own reader (libgit2's) gives: for import packs, loose appends, rewritten
messages, and after the user repacks with deltas."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pygit2
import pytest

from oxide_git.core import codec
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message, Part, Session
from oxide_git.git import objects as gitobjects
from oxide_git.git import packwriter
from oxide_git.git.repo import find_repo
from oxide_git.store import sessionlog
from oxide_git.store import writes as store
from tests.conftest import fsck_clean, git, make_ctx, oxide

SID = "0" * 12 + "b" * 20
_FILLER = "The function returns early when the cache is cold; the test expects a retry. " * 8


def _msg(i: int, role: str = "user", extra: str = "") -> Message:
    parts = (Part.text(f"message {i}: {_FILLER}{extra}"),)
    return Message(role, parts, created_at=1_767_225_600_000 + i)


def _session() -> Session:
    return Session(id=SID, agent="claude", native_id="native-b", title="packs")


def _libgit2_dicts(repo: Path) -> list[tuple[int, dict[str, object]]]:
    """The log's messages read by libgit2, entry by entry: the reference reader."""
    r = find_repo(repo)
    g = r.git
    log = sessionlog.load(r, SID)
    assert log is not None
    out = []
    for bucket in log.commit.tree["messages"].peel(pygit2.Tree):  # type: ignore[attr-defined]
        for entry in bucket.peel(pygit2.Tree):
            out.append((int(entry.name.split(".")[0]), codec.decode_message_dict(g.odb.read(entry.id)[1])))
    return out


def _dicts(repo: Path) -> list[tuple[int, dict[str, object]]]:
    r = find_repo(repo)
    log = sessionlog.load(r, SID)
    assert log is not None
    return list(sessionlog.iter_message_dicts(r, log.commit.tree))


def _resume(repo: Path) -> str:
    return oxide(repo, "resume", SID, "--format", "json", "--full").stdout


def _deltas(repo: Path) -> int:
    """How many objects the repository's packs store as deltas."""
    packs = sorted((repo / ".git" / "objects" / "pack").glob("*.idx"))
    out = "".join(git(repo, "verify-pack", "-v", str(p)) for p in packs)
    return len(re.findall(r"^[0-9a-f]{40} blob\s+\d+ \d+ \d+ \d+ [0-9a-f]{40}$", out, re.M))


def test_resume_is_identical_from_packs_loose_objects_and_after_a_repack(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    store.append(ctx, s, [_msg(i, "user" if i % 2 else "assistant") for i in range(600)])  # packs
    store.append(ctx, s, [_msg(600 + i) for i in range(5)])  # loose objects
    store.save(ctx, s, {3: _msg(3, extra=" (edited)"), 300: _msg(300, extra=" (edited)")},
               summary="rewrite two messages")  # loose, in the middle of a pack's run
    packed = _dicts(repo)
    text = _resume(repo)
    assert [q for q, _ in packed] == list(range(605))
    assert "(edited)" in str(packed[3][1]) and "(edited)" in str(packed[300][1])

    assert _libgit2_dicts(repo) == packed

    # The user repacks: blobs become deltas of each other, in git's order, in one new pack.
    git(repo, "repack", "-a", "-d", "-f", "--window=50", "--depth=50", "-q")
    assert _deltas(repo) > 0
    assert _dicts(repo) == packed == _libgit2_dicts(repo)
    assert _resume(repo) == text
    fsck_clean(repo)


def test_fork_and_truncated_logs_read_the_same(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    store.append(ctx, s, [_msg(i) for i in range(300)])
    before = _dicts(repo)
    store.save(ctx, s, {}, summary="rewind", truncate_at=200)
    after = _dicts(repo)
    assert after == before[:200]
    r = find_repo(repo)
    log = sessionlog.load(r, SID)
    assert log is not None
    part = list(sessionlog.iter_message_dicts(r, log.commit.tree, 150, 170))
    assert part == before[150:170]


def _pack(tmp_path: Path, blobs: list[bytes]) -> tuple[Path, list[bytes]]:
    objects = tmp_path / "objects"
    return objects, packwriter.write_pack(objects, [(gitobjects.BLOB, b) for b in blobs])


def test_blobs_in_any_order_and_a_missing_one_named(tmp_path: Path) -> None:
    noise = random.Random(4).randbytes(20_000)  # incompressible: deflate makes it longer
    blobs = [b"one " * 50, b"", b"three" * 3000, bytes(range(256)) * 40, noise]
    objects, ids = _pack(tmp_path, blobs)
    store = gitobjects.Objects(objects)
    assert list(store.blobs(ids)) == blobs
    assert list(store.blobs(list(reversed(ids)))) == list(reversed(blobs))  # no sequential luck
    with pytest.raises(gitobjects.ObjectMissing, match="01010101"):
        list(store.blobs([ids[0], b"\x01" * 20]))
    with pytest.raises(gitobjects.ObjectMissing):
        list(gitobjects.Objects(tmp_path / "nothing").blobs(ids))


def test_a_damaged_pack_raises_rather_than_giving_wrong_bytes(tmp_path: Path) -> None:
    blobs = [f"payload {i} ".encode() * 20 for i in range(5)]
    objects, ids = _pack(tmp_path, blobs)
    pack = next((objects / "pack").glob("*.pack"))
    raw = bytearray(pack.read_bytes())
    at = 12 + 2 + 6  # inside the first entry's compressed data (after its 2-byte header)
    raw[at] ^= 0xFF
    pack.write_bytes(bytes(raw))
    store = gitobjects.Objects(objects)
    assert list(store.blobs(ids[1:])) == blobs[1:]
    with pytest.raises(OxideError, match=ids[0].hex()):
        list(store.blobs(ids))


def test_index_with_another_version_is_ignored(tmp_path: Path) -> None:
    objects, ids = _pack(tmp_path, [b"x" * 100])
    idx = next((objects / "pack").glob("*.idx"))
    idx.write_bytes(b"\377tOc\x00\x00\x00\x03" + idx.read_bytes()[8:])
    with pytest.raises(gitobjects.ObjectMissing):
        list(gitobjects.Objects(objects).blobs(ids))
