"""Aider: OpenAI Chat Completions through litellm; its history is two files at the repository's top.

Aider declares no tools: the model server plays a chat request whose system prompt is Aider's
(``_aider_like``) as scripted, and the script's turns are plain text holding what Aider acts on
(a SEARCH/REPLACE block, a ```bash block it offers to run). Aider has no session id: the native
id is what git oxide's importer gives a section of ``.aider.chat.history.md``
(``"<header time>#<ordinal>"``), found with ``git oxide list --json``.

Flags, and why: ``--edit-format diff`` (an unknown model gets "whole"); ``--no-auto-commits`` so
the repository's HEAD stays where the test put it (the history would otherwise hold a
``Commit`` line whose sha differs per run, which is fine, but a commit also needs a weak-model
side request for its message); ``--no-gitignore`` so Aider does not add ``.aider*`` to a
``.gitignore`` the test did not ask for; ``--map-tokens 0`` (no repo map: nothing to index in the
test repository, and no tree-sitter work); ``--no-show-model-warnings`` (the fake model has no
metadata, and the warning asks to open a browser).
"""

from __future__ import annotations

from pathlib import Path

from .driver import Driver, Run
from .modelserver import Turn

MODEL = "openai/fake-model"
ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5"
HISTORY = ".aider.chat.history.md"
INPUT_HISTORY = ".aider.input.history"
NOTES_LINE = "first line from aider"
SHELL_COMMAND = "echo from-shell | tee shell.txt"


def edit_reply() -> str:
    """The first prompt's reply: a SEARCH/REPLACE block creating notes.txt, then a shell block."""
    return (
        "I will create notes.txt.\n\n"
        "notes.txt\n"
        "```\n"
        "<<<<<<< SEARCH\n"
        "=======\n"
        f"{NOTES_LINE}\n"
        ">>>>>>> REPLACE\n"
        "```\n\n"
        "Then run:\n\n"
        "```bash\n"
        f"{SHELL_COMMAND}\n"
        "```\n")


class AiderDriver(Driver):
    name = "aider"
    has_tools = False  # Aider's history is text: its edits are in it, not as tool calls

    @property
    def first_needle(self) -> str:
        return NOTES_LINE

    def env(self) -> dict[str, str]:
        env = super().env()
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        env["AIDER_CHECK_UPDATE"] = "false"
        env["AIDER_ANALYTICS"] = "false"
        for k in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
            env.pop(k, None)
        return env

    def _flags(self) -> list[str]:
        return [
            "--openai-api-base", f"{self.server.url}/v1", "--openai-api-key", "sk-aider-compat-key",
            "--model", MODEL, "--edit-format", "diff",
            "--yes-always", "--no-check-update", "--no-analytics", "--no-stream", "--no-pretty",
            "--no-fancy-input", "--no-auto-commits", "--no-gitignore", "--map-tokens", "0",
            "--no-show-model-warnings", "--no-show-release-notes",
        ]

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), *self._flags(), "--message", prompt]

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        # Aider has no session to name: it restores the whole history file.
        return [str(self.binary), *self._flags(), "--restore-chat-history", "--message", prompt]

    def run_anthropic(self, prompt: str) -> Run:
        """One turn with an Anthropic model, through the server's Messages API (litellm reads
        ANTHROPIC_API_BASE): its answers carry a cache read and write (Aider's "cache hit",
        "cache write"). Not a scripted request: the answer is the server's side text."""
        flags = self._flags()
        at = flags.index("--openai-api-base")
        del flags[at:at + 4]  # --openai-api-base URL --openai-api-key KEY
        flags[flags.index("--model") + 1] = ANTHROPIC_MODEL
        return self._exec([str(self.binary), *flags, "--message", prompt],
                          {"ANTHROPIC_API_BASE": self.server.url, "ANTHROPIC_API_KEY": "sk-ant-aider-compat"})

    def restore(self, prompt: str, *flags: str) -> Run:
        """``aider --restore-chat-history --message PROMPT`` with more flags."""
        return self._exec([*self.resume_argv("", prompt), *flags])

    @property
    def prompt1(self) -> str:
        return f"{self.marker}: create notes.txt, then make shell.txt with a shell command."

    def script(self) -> dict[str, list[Turn]]:
        return {
            self.marker: [Turn.say(edit_reply()), Turn.say("Done with one.")],
            "PROMPT-2": [Turn.say("Done with two.")],
        }

    def history(self) -> Path:
        return self.repo / HISTORY

    def input_history(self) -> Path:
        return self.repo / INPUT_HISTORY

    def store(self) -> list[Path]:
        return [self.history(), self.input_history()]


DRIVER = AiderDriver
