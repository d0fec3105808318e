"""Live capture of Gemini CLI: the `watch` daemon imports a session file as the CLI writes it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import make_ctx, oxide, oxide_process
from tests.watch.test_watch import wait_for

MAIN = (Path(__file__).resolve().parents[2] / "fixtures" / "gemini" / "project" / "chats"
        / "session-2026-12-01T22-08-29b5301f.jsonl")


@pytest.mark.process
def test_watch_imports_a_gemini_session_as_it_grows(repo: Path) -> None:
    oxide(repo, "init")
    res = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)
    try:
        folder = Path(os.environ["HOME"]) / ".gemini" / "tmp" / "repo"
        (folder / "chats").mkdir(parents=True)  # the store appears after the watcher started
        (folder / ".project_root").write_text(str(repo))
        lines = MAIN.read_bytes().splitlines(keepends=True)
        path = folder / "chats" / MAIN.name
        path.write_bytes(b"".join(lines[:4]))  # the CLI's context and the first prompt

        def count() -> int:
            rows = make_ctx(repo).index.query("SELECT message_count FROM sessions WHERE agent='gemini'")
            return int(rows[0][0]) if rows else 0

        wait_for(lambda: count() == 2)
        with path.open("ab") as f:
            f.write(b"".join(lines[4:]))
        wait_for(lambda: count() == 13)
        rows = make_ctx(repo).index.query("SELECT native_id FROM sessions")
        assert [r[0] for r in rows] == ["29b5301f-f84d-4437-bfbd-3b5886c08b03"]
    finally:
        out = json.loads(oxide(repo, "watch", "--stop", "--json").stdout)
    assert out["stopped"] and out["pid"] == res["pid"]


QWEN = (Path(__file__).resolve().parents[2] / "fixtures" / "qwen" / "projects" / "-tmp-gemini-q1-project"
        / "chats" / "c753d781-2223-4830-999a-641b7cd106a4.jsonl")


@pytest.mark.process
def test_watch_imports_a_qwen_session_as_it_grows(repo: Path) -> None:
    oxide(repo, "init")
    res = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)
    try:
        chats = Path(os.environ["HOME"]) / ".qwen" / "projects" / "p" / "chats"
        chats.mkdir(parents=True)
        lines = QWEN.read_text().replace("/tmp/gemini/q1/project", str(repo)).splitlines(True)
        path = chats / QWEN.name
        path.write_text("".join(lines[:4]))  # the prompt and the first call

        def count() -> int:
            rows = make_ctx(repo).index.query("SELECT message_count FROM sessions WHERE agent='qwen'")
            return int(rows[0][0]) if rows else 0

        wait_for(lambda: count() == 2)  # the prompt, and the call (the open tail: until the next record)
        with path.open("a") as f:
            f.write("".join(lines[4:]))
        wait_for(lambda: count() == 10)
    finally:
        out = json.loads(oxide(repo, "watch", "--stop", "--json").stdout)
    assert out["stopped"] and out["pid"] == res["pid"]
