"""pi: Chat Completions through a custom provider in ``~/.pi/agent/models.json``; sessions under
``~/.pi/agent/sessions/--<cwd>--/``.

The provider is configured as its user would (``models.json``: ``baseUrl``, ``"api":
"openai-completions"``, ``apiKey``, the model), with that model as the default of
``settings.json``; so no run passes ``--provider`` / ``--model``, and a session oxide wrote for
another agent resumes on the default model (pi cannot restore the other agent's). ``--offline``
keeps pi from its start-up network calls (version check, package updates).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .driver import Driver, Run, json_lines

EXTENSION = Path(__file__).resolve().parent / "pi_ext" / "oxide_test.ts"


class PiDriver(Driver):
    name = "pi"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.extensions: list[Path] = []  # loaded with -e (the suite's test commands: /oxide-branch)

    def agent_dir(self) -> Path:
        return self.home / ".pi" / "agent"

    def setup(self) -> None:
        d = self.agent_dir()
        d.mkdir(parents=True, exist_ok=True)
        (d / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": self.server.url + "/v1", "api": "openai-completions", "apiKey": "sk-compat-key",
            "models": [{"id": "fake-model", "name": "Fake model"}]}}}, indent=2))
        (d / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(PI_OFFLINE="1", PI_TELEMETRY="0")
        return env

    def _flags(self) -> list[str]:
        out = ["--offline", "--mode", "json"]
        for ext in self.extensions:
            out += ["-e", str(ext)]
        return out

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), *self._flags(), "-p", prompt]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        return [str(self.binary), *self._flags(), "--session", native_id, "-p", prompt]

    def prompts_argv(self, native_id: str, *prompts: str) -> list[str]:
        """One run of several prompts (pi takes more than one message; ``/name`` runs a command)."""
        return [str(self.binary), *self._flags(), "--session", native_id, "-p", *prompts]

    def native_id_of(self, run: Run) -> str | None:
        for ev in json_lines(run.stdout):
            if isinstance(ev, dict) and ev.get("type") == "session" and isinstance(ev.get("id"), str):
                return str(ev["id"])
        return None

    def store(self) -> list[Path]:
        return [self.agent_dir() / "sessions"]

    def session_file(self, native_id: str) -> Path:
        found = list((self.agent_dir() / "sessions").glob(f"*/*_{native_id}.jsonl"))
        assert found, f"pi wrote no session file for {native_id}"
        return found[0]


DRIVER = PiDriver
