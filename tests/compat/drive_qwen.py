"""Qwen Code 0.24: Chat Completions at OPENAI_BASE_URL (``--auth-type openai``); sessions under
``~/.qwen/projects/<cwd as ->/chats/``.

``memory.enableManagedAutoMemory`` is off: after each turn 0.24 otherwise runs a memory
extraction agent (a second scripted-looking request with tools, whose answer lands in the session
file as telemetry). Its `-o json` output is a JSON array of events, each with the ``session_id``.
"""

from __future__ import annotations

import json
from pathlib import Path

from .driver import Driver, Run

MODEL = "fake-model"


class QwenDriver(Driver):
    name = "qwen"

    def setup(self) -> None:
        folder = self.home / ".qwen"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "settings.json"
        settings = json.loads(path.read_text()) if path.exists() else {}
        settings.setdefault("memory", {})["enableManagedAutoMemory"] = False
        path.write_text(json.dumps(settings, indent=2))

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(OPENAI_BASE_URL=self.server.url + "/v1", OPENAI_API_KEY="sk-compat-qwen",
                   OPENAI_MODEL=MODEL, TERM="dumb", NO_COLOR="1", QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
        return env

    def _flags(self) -> list[str]:
        return ["--auth-type", "openai", "-m", MODEL, "--yolo", "-o", "json"]

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), *self._flags(), prompt]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        return [str(self.binary), *self._flags(), "--resume", native_id, prompt]

    def native_id_of(self, run: Run) -> str | None:
        try:
            events = json.loads(run.stdout)
        except ValueError:
            return None
        for ev in events if isinstance(events, list) else []:
            if isinstance(ev, dict) and isinstance(ev.get("session_id"), str):
                return str(ev["session_id"])
        return None

    def store(self) -> list[Path]:
        return [self.home / ".qwen" / "projects"]

    def session_file(self, native_id: str) -> Path:
        found = sorted((self.home / ".qwen" / "projects").glob(f"*/chats/{native_id}.jsonl"))
        assert found, f"qwen wrote no session file for {native_id}"
        return found[0]


DRIVER = QwenDriver
