"""Gemini CLI 0.61: the Gemini API (``:streamGenerateContent``) at GOOGLE_GEMINI_BASE_URL; sessions
under ``~/.gemini/tmp/<slug>/chats/``.

Without ``security.auth.selectedType`` in ``~/.gemini/settings.json`` a ``-p`` run exits 41 (no
auth chosen); ``--skip-trust`` runs in a folder it was never told to trust. Usage statistics and
update checks are off, so it asks nothing of the network but the model server.
"""

from __future__ import annotations

import json
from pathlib import Path

from .driver import Driver, Run

MODEL = "gemini-2.5-flash"


class GeminiDriver(Driver):
    name = "gemini"

    def setup(self) -> None:
        folder = self.home / ".gemini"
        folder.mkdir(parents=True, exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                    "privacy": {"usageStatisticsEnabled": False}}
        path = folder / "settings.json"
        if path.exists():  # keep what a test (agent hooks) put there
            settings = {**settings, **json.loads(path.read_text())}
        path.write_text(json.dumps(settings, indent=2))

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(GOOGLE_GEMINI_BASE_URL=self.server.url, GEMINI_API_KEY="compat-gemini-key",
                   TERM="dumb", NO_COLOR="1")
        return env

    def _flags(self) -> list[str]:
        return ["-m", MODEL, "--yolo", "--skip-trust", "-o", "json"]

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), *self._flags(), "-p", prompt]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        return [str(self.binary), *self._flags(), "--resume", native_id, "-p", prompt]

    def native_id_of(self, run: Run) -> str | None:
        try:
            return str(json.loads(run.stdout)["session_id"])
        except (ValueError, KeyError, TypeError):
            return None

    def store(self) -> list[Path]:
        return [self.home / ".gemini" / "tmp"]

    def session_file(self, native_id: str) -> Path:
        found = sorted((self.home / ".gemini" / "tmp").glob(f"*/chats/session-*-{native_id[:8]}.jsonl"))
        assert found, f"gemini wrote no session file for {native_id}"
        return found[0]


DRIVER = GeminiDriver
