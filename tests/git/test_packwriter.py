from __future__ import annotations

import os
from pathlib import Path

import pygit2

from oxide_git.git.objects import BLOB
from oxide_git.git.packwriter import write_pack
from tests.conftest import fsck_clean, git


def test_pack_is_valid_git(repo: Path) -> None:
    blobs = [os.urandom(n) for n in (0, 1, 15, 16, 200, 70_000)] + [b"same", b"same"]
    blobs += [b"compressible text " * n for n in (1, 100, 200_000)]  # deflated for real
    ids = write_pack(repo / ".git" / "objects", [(BLOB, b) for b in blobs])
    for oid, data in zip(ids, blobs, strict=True):
        assert git(repo, "cat-file", "-t", oid.hex()).strip() == "blob"
        r = pygit2.Repository(str(repo))
        assert r[oid.hex()].data == data
    out = git(repo, "verify-pack", "-v", *map(str, (repo / ".git" / "objects" / "pack").glob("*.idx")))
    assert "ok" in out.splitlines()[-1] or "chain length" in out
    fsck_clean(repo)
