"""`git oxide import` from the command line: --json, the --dry-run table, and a second run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, oxide


def test_import_json_dry_run_table_and_again(repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    shutil.copy(FIXTURES / "claude" / "split_response.jsonl", src)
    dry = oxide(repo, "import", "--agent", "claude", "--dry-run", str(src))
    header, *rows = dry.stdout.splitlines()
    assert header.split() == ["AGENT", "STATE", "SESSIONS", "MESSAGES", "FILE"]
    assert len(rows) == 1 and rows[0].split()[0] == "claude" and rows[0].endswith(str(src))
    assert json.loads(oxide(repo, "list", "--all", "--json").stdout) == []  # a dry run imports nothing
    out = json.loads(oxide(repo, "import", "--agent", "claude", "--json", str(src)).stdout)
    assert out["dry_run"] is False and out["sessions"] == 1 and out["messages"] > 0
    assert out["problems"] == [] and [f["path"] for f in out["files"]] == [str(src)]
    listed = json.loads(oxide(repo, "list", "--all", "--json").stdout)
    assert len(listed) == 1 and listed[0]["message_count"] == out["messages"]
    again = json.loads(oxide(repo, "import", "--agent", "claude", "--json", str(src)).stdout)
    assert again["messages"] == 0  # nothing new: nothing written twice
    dry_json = json.loads(oxide(repo, "import", "--agent", "claude", "--dry-run", "--json", str(src)).stdout)
    assert dry_json["dry_run"] is True


def test_import_refusals_and_nothing_to_import(repo: Path, tmp_path: Path) -> None:
    r = oxide(repo, "import", str(tmp_path / "x.jsonl"), check=False)
    assert r.returncode == 1 and "error: " in r.stderr and "x.jsonl: no such file or directory" in r.stderr
    r = oxide(repo, "import", "-q")
    assert r.returncode == 0 and "Nothing to import" in r.stderr
    r = oxide(repo, "import", "--agent=nosuch", "-q", str(tmp_path), check=False)
    assert r.returncode == 2 and "nosuch" in r.stderr  # click's own message for a bad choice
    r = oxide(repo, "import", "--agent", "nosuch", str(tmp_path), check=False)
    assert r.returncode == 2
    bad = tmp_path / "not-a-session.jsonl"
    bad.write_bytes(b"\x00\x01 not json at all\n")
    r = oxide(repo, "import", "--agent=claude", str(bad), check=False)
    assert r.returncode == 1 and "warning: " in r.stderr and "1 file(s) failed" in r.stderr
    assert "error: nothing could be imported" in r.stderr and "is --agent right" in r.stderr


@pytest.mark.process
def test_import_on_a_terminal_goes_through_the_command_and_says_what_it_did(repo: Path, tmp_path: Path) -> None:
    """With stderr on a terminal the plain form steps aside (a progress bar may be wanted)."""
    import os
    import subprocess
    import sys

    def on_tty(*args: str) -> tuple[int, str]:
        master, slave = os.openpty()
        env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
        p = subprocess.run(["git", "oxide", *args], cwd=repo, stdout=subprocess.PIPE, stderr=slave, env=env,
                           timeout=60)
        os.close(slave)
        out = b""
        try:
            while chunk := os.read(master, 65536):
                out += chunk
        except OSError:  # the other side is closed and drained
            pass
        os.close(master)
        return p.returncode, out.decode()

    code, err = on_tty("import")
    assert code == 0 and "Nothing to import" in err
    src = tmp_path / "s.jsonl"
    shutil.copy(FIXTURES / "claude" / "split_response.jsonl", src)
    code, err = on_tty("import", "--agent", "claude", str(src))
    assert code == 0 and "Imported 8 message(s) in 1 session(s) from 1 file(s)" in err
