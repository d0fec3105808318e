"""GitHub Copilot CLI: Chat Completions at ``COPILOT_PROVIDER_BASE_URL`` (its default wire API for a
provider of one's own), offline; sessions under ``$COPILOT_HOME/session-state/<id>/events.jsonl``.

``COPILOT_OFFLINE=true`` skips GitHub sign-in, telemetry and update checks. On its first run the
binary unpacks its package (~235 MB) into ``$XDG_CACHE_HOME/copilot/pkg``: one cache folder under
``.compat-cache`` is shared by every run, so a run takes about a second instead of four. Copilot
masks its provider key wherever it would print it, so the key is a string found nowhere else.
"""

from __future__ import annotations

import os
from pathlib import Path

from .driver import Driver, Run, json_lines
from .install import cache

KEY = "sk-copilot-compat-q7z"


class CopilotDriver(Driver):
    name = "copilot"

    def copilot_home(self) -> Path:
        return Path(os.environ.get("COPILOT_HOME") or self.home / ".copilot")

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=self.server.url + "/v1",
                   COPILOT_PROVIDER_API_KEY=KEY, COPILOT_MODEL="fake-model",
                   COPILOT_AUTO_UPDATE="false", COPILOT_HOME=str(self.copilot_home()),
                   XDG_CACHE_HOME=str(cache() / "copilot-shared" / "xdg-cache"))
        for k in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_ALLOW_ALL"):
            env.pop(k, None)
        return env

    def _flags(self) -> list[str]:
        return ["--allow-all", "--output-format", "json", "--no-auto-update"]

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), "-p", prompt, *self._flags()]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        return [str(self.binary), "--resume", native_id, "-p", prompt, *self._flags()]

    def native_id_of(self, run: Run) -> str | None:
        for ev in json_lines(run.stdout):
            if isinstance(ev, dict) and ev.get("type") == "result" and ev.get("sessionId"):
                return str(ev["sessionId"])
        return None

    def store(self) -> list[Path]:
        home = self.copilot_home()
        return [home / "session-state", *sorted(home.glob("session-store.db*"))]

    def session_file(self, native_id: str) -> Path:
        path = self.copilot_home() / "session-state" / native_id / "events.jsonl"
        assert path.is_file(), f"copilot wrote no events.jsonl for {native_id}"
        return path


DRIVER = CopilotDriver
