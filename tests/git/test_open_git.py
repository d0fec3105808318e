"""libgit2's mapping of packs is bounded: reading a whole big store (`reindex --full`, `show`,
`export`) no longer counts the whole pack in the process's resident memory (1M messages: 524 MB)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git

READ_ALL = """
import sys
from oxide_git.git.repo import open_git

def rss_file_kb():  # file pages mapped and resident (a tmpfs's count as RssShmem)
    kb = {line.split(":")[0]: int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("Rss")}
    return kb["RssFile"] + kb["RssShmem"]

g = open_git(sys.argv[1]) if sys.argv[2] == "bounded" else __import__("pygit2").Repository(sys.argv[1])
before = rss_file_kb()
total = sum(len(g[oid].read_raw()) for oid in sys.argv[3:])
print(total, (rss_file_kb() - before) // 1024)
"""


def test_reading_a_32_mb_pack_maps_at_most_16_mb_of_it(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", str(repo))
    for i in range(32):  # incompressible: the pack is as large as the blobs
        (repo / f"b{i}").write_bytes(os.urandom(1 << 20))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "blobs")
    git(repo, "repack", "-adq")
    blobs = git(repo, "ls-tree", "--object-only", "HEAD").split()
    pack = sum(p.stat().st_size for p in (repo / ".git" / "objects" / "pack").glob("*.pack"))
    assert pack > 32 << 20

    def grown_mb(how: str) -> int:
        out = subprocess.run([sys.executable, "-c", READ_ALL, str(repo / ".git"), how, *blobs],
                             capture_output=True, text=True, check=True).stdout.split()
        assert int(out[0]) == 32 << 20
        return int(out[1])

    assert grown_mb("libgit2's default") >= 28  # the test can tell: unbounded, the pack is mapped whole
    assert grown_mb("bounded") <= 20
