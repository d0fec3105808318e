"""Driving one agent's real CLI in an isolated HOME against the scripted model server.

A ``Driver`` knows how to start a session (``run``), continue one through the agent's own resume
(``resume``), where the agent keeps its session files (``store``), and the standard script: a
prompt that makes the agent run a shell command that writes a file, write a file and edit it, then
a second prompt through the agent's resume. Each agent has its module (``drive_<agent>.py``); this
one holds what they share.

The environment is the test's (conftest isolates HOME, git config, CLAUDE_CONFIG_DIR, CODEX_HOME and
the XDG folders per test), plus what the agent needs to talk to 127.0.0.1 and nothing else: no
telemetry, no update checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .install import Pin, install, pins
from .modelserver import ModelServer, Turn

PROMPT2 = "PROMPT-2: now just say you are done."
SHELL_TEXT = "from-shell"


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    native_id: str | None = None

    def check(self) -> Run:
        if self.returncode != 0:
            raise AssertionError(
                f"{' '.join(self.argv[:3])} exited {self.returncode}\n--- stdout\n{self.stdout[-3000:]}"
                f"\n--- stderr\n{self.stderr[-3000:]}")
        return self


class Driver:
    name = ""
    timeout = 180
    has_tools = True  # its transcript holds tool calls (Aider's holds only text)

    @property
    def first_needle(self) -> str:
        """Text from the first turn's work that the next request to the model must hold."""
        return SHELL_TEXT

    def __init__(self, repo: Path, server: ModelServer, home: Path | None = None) -> None:
        self.repo = repo
        self.server = server
        self.home = home or Path(os.environ["HOME"])
        self.pin: Pin = pins()[self.name]
        self.binary = install(self.pin)

    # what a subclass gives
    def setup(self) -> None:
        """Configure the agent as a user who has it installed would have (config files); called
        before anything runs, so that `git oxide resume --into` sees that configuration too."""

    def env(self) -> dict[str, str]:
        """The process environment for the agent (the test's, plus the agent's own settings)."""
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(self.pin.bin_dir), str(Path(sys.executable).parent),
                                       env.get("PATH", "")])
        env["HOME"] = str(self.home)
        return env

    def run_argv(self, prompt: str) -> list[str]:
        raise NotImplementedError

    def resume_argv(self, native_id: str, prompt: str) -> list[str]:
        raise NotImplementedError

    def native_id_of(self, run: Run) -> str | None:
        """The session id the agent reported for ``run`` (from its JSON output)."""
        return None

    def store(self) -> list[Path]:
        """The folders/files where the agent keeps its sessions (moved away for a round trip)."""
        raise NotImplementedError

    @property
    def marker(self) -> str:
        """The first prompt's marker: one per agent, so that drivers share one server."""
        return f"{self.name.upper()}-PROMPT-1"

    @property
    def prompt1(self) -> str:
        return f"{self.marker}: make shell.txt with a shell command, then write notes.txt and edit it."

    def script(self) -> dict[str, list[Turn]]:
        notes = str(self.repo / "notes.txt")
        return {
            self.marker: [Turn.shell(f"echo {SHELL_TEXT} | tee shell.txt"), Turn.write(notes, "first line\n"),
                         Turn.edit(notes, "first line", "second line"), Turn.say("Done with one.")],
            "PROMPT-2": [Turn.say("Done with two.")],
        }

    # shared
    def _exec(self, argv: Sequence[str], extra_env: Mapping[str, str] | None = None,
              timeout: int | None = None) -> Run:
        env = self.env()
        env.update(extra_env or {})
        try:
            r = subprocess.run(list(argv), cwd=self.repo, env=env, capture_output=True, text=True,
                               timeout=timeout or self.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            return Run(list(argv), -9, out, err + "\n(timed out)")
        run = Run(list(argv), r.returncode, r.stdout, r.stderr)
        run.native_id = self.native_id_of(run)
        return run

    def run(self, prompt: str | None = None) -> Run:
        return self._exec(self.run_argv(prompt or self.prompt1))

    def resume(self, native_id: str, prompt: str = PROMPT2) -> Run:
        run = self._exec(self.resume_argv(native_id, prompt))
        run.native_id = run.native_id or native_id
        return run

    def move_store_away(self, dest: Path) -> list[Path]:
        """Move the agent's session files to ``dest`` (a round trip must work without them)."""
        moved = []
        dest.mkdir(parents=True, exist_ok=True)
        for i, p in enumerate(self.store()):
            if p.exists():
                target = dest / f"{i}-{p.name}"
                p.rename(target)
                moved.append(target)
        return moved


def json_lines(text: str) -> list[Any]:
    """The JSON objects among ``text``'s lines (agents print one event per line)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def driver_class(name: str) -> type[Driver]:
    import importlib

    mod = importlib.import_module(f"{__package__}.drive_{name}")
    return mod.DRIVER  # type: ignore[no-any-return]


AGENTS = tuple(pins())
