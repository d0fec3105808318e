"""Codex: OpenAI Responses at a custom provider named in $CODEX_HOME/config.toml.

The provider is written into ``config.toml`` (as a user with a custom provider would have it), not
passed with ``-c``: ``git oxide resume --into codex`` reads the same file to name the provider in a
rollout it writes, and Codex refuses to resume a thread recorded under another provider.
Sessions are under ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.
"""

from __future__ import annotations

import os
from pathlib import Path

from .driver import Driver, Run, json_lines
from .modelserver import Turn

PROVIDER = "fake"
# A model Codex knows: its bundled metadata gives it the apply_patch tool (an unknown slug gets
# fallback metadata without it).
MODEL = "gpt-5.5"
THOUGHT = "Planning the shell command first."  # a reasoning item, as Codex's models send them


class CodexDriver(Driver):
    name = "codex"
    provider = PROVIDER

    def codex_home(self) -> Path:
        return Path(os.environ.get("CODEX_HOME") or self.home / ".codex")

    def write_config(self) -> Path:
        home = self.codex_home()
        home.mkdir(parents=True, exist_ok=True)
        cfg = home / "config.toml"
        cfg.write_text(
            f'model_provider = "{self.provider}"\n'
            f'model = "{MODEL}"\n\n'
            f"[model_providers.{self.provider}]\n"
            f'name = "{self.provider}"\n'
            f'base_url = "{self.server.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "FAKE_API_KEY"\n', encoding="utf-8")
        return cfg

    def setup(self) -> None:
        self.write_config()

    def env(self) -> dict[str, str]:
        env = super().env()
        env["CODEX_HOME"] = str(self.codex_home())
        env["FAKE_API_KEY"] = "sk-codex-compat-key"
        env["RUST_LOG"] = "error"
        env.pop("OPENAI_API_KEY", None)
        return env

    def _flags(self) -> list[str]:
        return ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                "-m", MODEL]

    def run_argv(self, prompt: str) -> list[str]:
        self.write_config()
        return [str(self.binary), "exec", *self._flags(), prompt]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        self.write_config()
        return [str(self.binary), "exec", "resume", *self._flags(), native_id, prompt]

    def native_id_of(self, run: Run) -> str | None:
        for ev in json_lines(run.stdout):
            if isinstance(ev, dict) and ev.get("type") == "thread.started" and ev.get("thread_id"):
                return str(ev["thread_id"])
        return None

    def store(self) -> list[Path]:
        home = self.codex_home()
        return [home / "sessions", home / "archived_sessions", home / "session_index.jsonl",
                *sorted(home.glob("state_*.sqlite*")), *sorted(home.glob("thread_history_*.sqlite*"))]

    def session_file(self, native_id: str) -> Path:
        found = sorted((self.codex_home() / "sessions").rglob(f"rollout-*{native_id}.jsonl"))
        assert found, f"codex wrote no rollout for {native_id}"
        return found[0]

    def script(self) -> dict[str, list[Turn]]:
        """Codex has no write/edit tools: both are ``apply_patch`` (a custom tool, freeform); two
        turns carry a reasoning item first, as a reasoning model's do."""
        notes = "notes.txt"
        add = f"*** Begin Patch\n*** Add File: {notes}\n+first line\n*** End Patch\n"
        edit = (f"*** Begin Patch\n*** Update File: {notes}\n@@\n-first line\n+second line\n"
                "*** End Patch\n")
        return {
            self.marker: [Turn.shell("echo from-shell | tee shell.txt").thinking(THOUGHT),
                          Turn.tool("apply_patch", {"input": add}),
                          Turn.tool("apply_patch", {"input": edit}),
                          Turn.say("Done with one.").thinking("All three done.")],
            "PROMPT-2": [Turn.say("Done with two.")],
        }


DRIVER = CodexDriver
