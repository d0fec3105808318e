"""Issue 38 item 3: a full disk is an error the user can act on (exit 1), never a traceback."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from oxide_git.git import failure
from tests.conftest import git, oxide


def test_a_write_to_a_full_device_is_an_error_not_a_bug(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """/dev/full answers every write with ENOSPC, as a full disk does."""
    monkeypatch.chdir(repo)

    def write() -> None:
        with open("/dev/full", "wb", buffering=0) as f:
            f.write(b"x" * 4096)

    assert failure.guarded(write) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: no space left on device writing {repo / '.git'}\n")
    assert "hint: free some space" in err and "unexpected" not in err
    assert not (repo / ".git" / "oxide" / "oxide.log").exists()  # not logged as a bug

    monkeypatch.chdir(repo.parent)  # no repository here: the folder it was run in
    assert failure.guarded(write) == 1
    assert capsys.readouterr().err.startswith(f"error: no space left on device writing {repo.parent}\n")

    def missing() -> None:
        open(repo / "no" / "such" / "file")  # noqa: SIM115 - another OSError stays a bug

    assert failure.guarded(missing) == failure.UNEXPECTED


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 600 KB filesystem (tmpfs: needs root, as CI's container has)."""
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root; the /dev/full test covers the rest")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _free(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_import_on_a_full_disk(small_disk: Path, tmp_path: Path) -> None:
    repo = small_disk / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "initial")
    oxide(repo, "init")
    transcript = tmp_path / "big.jsonl"  # 40 messages of 27 KB that do not compress: 1 MB
    transcript.write_text("".join(json.dumps({
        "type": "user", "uuid": f"u{i}", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(repo), "message": {"role": "user", "content": base64.b64encode(os.urandom(20000)).decode()},
    }) + "\n" for i in range(40)))
    r = oxide(repo, "import", "--agent", "claude", str(transcript), check=False)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"error: no space left on device writing {repo / '.git'}"), r.stderr
    assert "Traceback" not in r.stderr and "unexpected" not in r.stderr
    (repo / "notes.bin").write_bytes(os.urandom(1000)[: max(0, _free(repo) - 1)])  # what is left
    r = oxide(repo, "checkpoint", "-m", "on a full disk", check=False)  # another command that writes
    assert r.returncode == 1 and "error: no space left on device writing" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "unexpected" not in r.stderr
    subprocess.run(["mount", "-o", "remount,size=20m", str(small_disk)], check=True)
    oxide(repo, "import", "--agent", "claude", str(transcript))  # once there is space, it works
    assert "40" in oxide(repo, "list", "--all").stdout
    oxide(repo, "checkpoint", "-m", "with space again")
    assert "ok:" in oxide(repo, "doctor").stdout
