"""Text that is not valid Unicode (a lone UTF-16 surrogate, as JavaScript's string slicing leaves
and JSON.stringify escapes) still imports: it becomes U+FFFD, the rest of the file is kept."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, oxide
from tests.planted import line

HALF = "\\ud83d"  # the first half of an emoji, alone, as JSON writes it


def _claude(path: Path, cwd: str) -> Path:
    sid = "50000000-0000-4000-8000-00000000000a"
    rows = [line("user", 1, None, {"role": "user", "content": "cut emoji: PLACEHOLDER!"}, sid, cwd=cwd),
            line("assistant", 2, 1, {"role": "assistant", "id": "msg_1", "type": "message",
                                     "model": "m", "content": [{"type": "text", "text": "ok PLACEHOLDER"}]},
                 sid, cwd=cwd)]
    path.write_text("\n".join(rows).replace("PLACEHOLDER", HALF) + "\n")
    return path


def _codex(path: Path, cwd: str) -> Path:
    lines = [
        {"timestamp": "2026-02-23T12:33:31.000Z", "type": "session_meta",
         "payload": {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0a", "timestamp": "2026-02-23T12:33:31.000Z",
                     "cwd": cwd}},
        {"timestamp": "2026-02-23T12:33:32.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                      "text": "cut emoji: PLACEHOLDER!"}]}},
        {"timestamp": "2026-02-23T12:33:33.000Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                     "arguments": json.dumps({"command": ["echo", "PLACEHOLDER"]})}},
    ]
    text = "".join(json.dumps(x) + "\n" for x in lines).replace("PLACEHOLDER", HALF)
    path.write_text(text.replace('\\\\ud83d', HALF))  # the escape inside the arguments' JSON too
    return path


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_lone_surrogate_becomes_a_replacement_character(repo: Path, tmp_path: Path, agent: str) -> None:
    name = "rollout-2026-02-23T12-33-31-5973b6c0-94b8-487b-a530-2aeb6098ae0a.jsonl" if agent == "codex" \
        else "s.jsonl"
    src = (_codex if agent == "codex" else _claude)(tmp_path / name, str(repo))
    r = oxide(repo, "import", "--agent", agent, str(src))
    assert "problem" not in r.stderr, r.stderr
    sid = json.loads(oxide(repo, "list", "--json", "--all").stdout)[0]["id"]
    shown = oxide(repo, "show", sid, "--json").stdout
    assert "cut emoji: \ufffd!" in shown and "\\ud83d" not in shown
    assert json.loads(oxide(repo, "search", "emoji", "--json").stdout)  # the index took it too
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo, check=True, capture_output=True)


def test_opencode_storage_with_a_lone_surrogate(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "storage"
    shutil.copytree(FIXTURES / "opencode" / "storage", store)
    part = next(p for p in sorted((store / "part").rglob("*.json")) if '"text"' in p.read_text())
    data = json.loads(part.read_text())
    data["text"] = "cut emoji: PLACEHOLDER!"
    part.write_text(json.dumps(data).replace("PLACEHOLDER", HALF))
    oxide(repo, "import", "--agent", "opencode", str(store))
    shown = "".join(oxide(repo, "show", s["id"], "--json").stdout
                    for s in json.loads(oxide(repo, "list", "--json", "--all").stdout))
    assert "cut emoji: \ufffd!" in shown
