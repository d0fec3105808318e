"""A Claude Code run without Claude Code: its transcript written line by line in Claude Code's own
format (tool calls carrying the edits, timestamps of the real clock), the files changed as its
tools change them, and its hooks called as it calls them (`git oxide agent-hook claude EVENT`, the
JSON payload on stdin, in process through the CLI). For the blame tests of turns closed by hooks."""

from __future__ import annotations

import json
import os
import time
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oxide_git.cli import main
from oxide_git.core.model import to_iso


class ClaudeRun:
    """One Claude Code session in ``repo``; ``monkeypatch`` moves into it for each hook (Claude
    Code runs its hooks in the project's folder)."""

    def __init__(self, repo: Path, monkeypatch: pytest.MonkeyPatch, native: str | None = None) -> None:
        self.repo, self.mp = repo, monkeypatch
        self.native = native or str(uuidlib.uuid4())
        folder = "".join(c if c.isalnum() else "-" for c in str(repo))
        self.transcript = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / folder / f"{self.native}.jsonl"
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        self.parent: str | None = None
        self.n = 0

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        time.sleep(0.002)  # each line at its own millisecond, as a real run's are
        uid = str(uuidlib.uuid4())
        line = {"parentUuid": self.parent, "isSidechain": False, "userType": "external",
                "cwd": str(self.repo), "sessionId": self.native, "version": "2.1.332", "gitBranch": "main",
                "type": kind, "message": message, "uuid": uid,
                "timestamp": to_iso(int(time.time() * 1000)), **extra}
        with self.transcript.open("a") as f:
            f.write(json.dumps(line) + "\n")
        self.parent = uid

    def hook(self, event: str, **payload: Any) -> None:
        action = "prompt" if event == "UserPromptSubmit" else "stop"
        body = {"session_id": self.native, "transcript_path": str(self.transcript), "cwd": str(self.repo),
                "hook_event_name": event, **payload}
        self.mp.chdir(self.repo)
        r = CliRunner().invoke(main, ["agent-hook", "claude", action], input=json.dumps(body))
        assert r.exit_code == 0 and r.output == "", r.output
        log = self.repo / ".git" / "oxide" / "log"
        assert not log.exists() or "failed" not in log.read_text(), log.read_text()

    def prompt(self, text: str) -> None:
        """The user's prompt: Claude Code runs UserPromptSubmit before it writes the prompt's line."""
        self.hook("UserPromptSubmit", prompt=text)
        self._line("user", {"role": "user", "content": text})

    def _tool(self, name: str, args: dict[str, Any], apply: Any) -> None:
        self.n += 1
        tid = f"toolu_{self.n:04d}"
        self._line("assistant", {"model": "claude-opus-4-6", "id": f"msg_{self.n}", "type": "message",
                                 "role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name,
                                                                   "input": args}],
                                 "usage": {"input_tokens": 3, "output_tokens": 1}})
        apply()
        self._line("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                         "content": "ok"}]}, toolUseResult={"type": "update"})

    def write(self, rel: str, content: str) -> None:
        path = self.repo / rel
        self._tool("Write", {"file_path": str(path), "content": content}, lambda: path.write_text(content))

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.repo / rel

        def go() -> None:
            text = path.read_text()
            assert old in text
            path.write_text(text.replace(old, new, 1))
        self._tool("Edit", {"file_path": str(path), "old_string": old, "new_string": new, "replace_all": False}, go)

    def answer(self, text: str, *, stop: bool = True) -> None:
        """The turn's last words, then the Stop hook (as Claude Code ends a turn; ``stop`` False:
        killed before it)."""
        self.n += 1
        self._line("assistant", {"model": "claude-opus-4-6", "id": f"msg_{self.n}", "type": "message",
                                 "role": "assistant", "content": [{"type": "text", "text": text}],
                                 "usage": {"input_tokens": 3, "output_tokens": 1}})
        if stop:
            self.hook("Stop", stop_hook_active=False)
