"""OpenCode 1.18: Chat Completions through its bundled ``@ai-sdk/openai-compatible``; sessions in
``$XDG_DATA_HOME/opencode/opencode.db``.

At start OpenCode asks the npm registry about ``@opencode-ai/plugin`` and the packages of its
config folder (into npm's cache); the registry is reachable here, and one npm cache and one
``XDG_CACHE_HOME`` under ``.compat-cache`` are reused by every run, so runs stay fast (a few
seconds) and ask little. The provider package itself is bundled in the binary: no download.
"""

from __future__ import annotations

import json
from pathlib import Path

from .driver import Driver, Run, json_lines
from .install import cache


class OpenCodeDriver(Driver):
    name = "opencode"

    def setup(self) -> None:
        """Its opencode.json (the model `resume --into` reads): what a user configures."""
        self._write_config(Path(self.env()["XDG_CONFIG_HOME"]))

    def env(self) -> dict[str, str]:
        env = super().env()
        shared = cache() / "opencode-shared"
        # ``opencode run`` works in $PWD when set (not in its process cwd): the repository's
        env["PWD"] = str(self.repo)
        env.update(OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1",
                   XDG_CACHE_HOME=str(shared / "xdg-cache"),
                   npm_config_cache=str(shared / "npm"))
        env.setdefault("XDG_CONFIG_HOME", str(self.home / ".config"))
        env.setdefault("XDG_DATA_HOME", str(self.home / ".local" / "share"))
        env.setdefault("XDG_STATE_HOME", str(self.home / ".local" / "state"))
        return env

    def _write_config(self, config_home: Path) -> None:
        folder = config_home / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        conf = {
            "$schema": "https://opencode.ai/config.json",
            "model": "fake/fake-model",
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible", "name": "Fake",
                "options": {"baseURL": self.server.url + "/v1", "apiKey": "sk-compat-key"},
                "models": {"fake-model": {"name": "Fake model", "tool_call": True}},
            }},
        }
        (folder / "opencode.json").write_text(json.dumps(conf, indent=2))

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), "run", "--format", "json", prompt]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        return [str(self.binary), "run", "--format", "json", "--session", native_id, prompt]

    def native_id_of(self, run: Run) -> str | None:
        for ev in json_lines(run.stdout):
            if isinstance(ev, dict) and isinstance(ev.get("sessionID"), str):
                return str(ev["sessionID"])
        return None

    def data_home(self) -> Path:
        env = self.env()
        return Path(env["XDG_DATA_HOME"]) / "opencode"

    def db(self) -> Path:
        return self.data_home() / "opencode.db"

    def store(self) -> list[Path]:
        return [self.data_home()]


DRIVER = OpenCodeDriver
