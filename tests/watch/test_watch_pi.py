"""`watch` captures pi as it writes: a session file appearing under ``~/.pi/agent/sessions``
(created after the watcher started), its lines as pi appends them, and an in-place branch as the
fork it is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import make_ctx, oxide, oxide_process, wait_for

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "pi"


@pytest.mark.process
def test_watch_imports_a_pi_session_as_pi_writes_it(repo: Path) -> None:
    oxide(repo, "init")
    lines = (FIX / "tree.jsonl").read_bytes().replace(b"/home/dev/proj", str(repo).encode()).splitlines(True)
    header = json.loads(lines[0])
    folder = Path(os.environ["HOME"]) / ".pi" / "agent" / "sessions" / ("--" + str(repo)[1:].replace("/", "-") + "--")
    path = folder / f"{header['timestamp'].replace(':', '-').replace('.', '-')}_{header['id']}.jsonl"
    assert json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)["pid"]

    def rows() -> list[tuple[str, str, int, str | None]]:
        return make_ctx(repo).index.query(
            "SELECT native_id, id, message_count, parent_id FROM sessions ORDER BY created_at")

    try:
        folder.mkdir(parents=True)  # pi makes its folder on its first run, after the watcher started
        path.write_bytes(b"".join(lines[:8]))  # pi writes the first turn at once
        wait_for(lambda: rows() and rows()[0][2] == 7)
        with path.open("ab") as f:
            f.write(b"".join(lines[8:13]))  # up to the second prompt's answer
        wait_for(lambda: rows()[0][2] == 12)
        with path.open("ab") as f:
            f.write(b"".join(lines[13:15]))  # back to the end of the first turn, and on: a branch
        branch = wait_for(lambda: [r for r in rows() if r[0] == f"{header['id']}/b8ba5e22" and r[2] == 12])
        assert branch[0][3] == rows()[0][1]  # a fork of the session
    finally:
        oxide(repo, "watch", "--stop", "--json")
    assert [r[0] for r in rows()] == [header["id"], f"{header['id']}/b8ba5e22"]
