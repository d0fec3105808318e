"""Claude Code: Anthropic Messages at ANTHROPIC_BASE_URL; sessions under CLAUDE_CONFIG_DIR/projects."""

from __future__ import annotations

import json
from pathlib import Path

from .driver import Driver, Run


class ClaudeDriver(Driver):
    name = "claude"

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(ANTHROPIC_BASE_URL=self.server.url, ANTHROPIC_API_KEY="sk-ant-compat-key",
                   DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1",
                   IS_SANDBOX="1")  # as root, bypassPermissions needs it
        return env

    def _flags(self) -> list[str]:
        return ["--output-format", "json", "--permission-mode", "bypassPermissions"]

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), "-p", prompt, *self._flags()]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        return [str(self.binary), "--resume", native_id, "-p", prompt, *self._flags()]

    def native_id_of(self, run: Run) -> str | None:
        try:
            return str(json.loads(run.stdout)["session_id"])
        except (ValueError, KeyError, TypeError):
            return None

    def config_dir(self) -> Path:
        import os

        return Path(self.env().get("CLAUDE_CONFIG_DIR") or os.path.join(self.home, ".claude"))

    def store(self) -> list[Path]:
        return [self.config_dir() / "projects"]

    def session_file(self, native_id: str) -> Path:
        found = list((self.config_dir() / "projects").rglob(f"{native_id}.jsonl"))
        assert found, f"claude wrote no transcript for {native_id}"
        return found[0]


DRIVER = ClaudeDriver
