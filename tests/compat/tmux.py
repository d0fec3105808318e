"""An agent's terminal UI in a tmux pane (a real pty): keys in, the screen as the user sees it.

    pane = Pane(tmp / "tmux.sock", argv, cwd=repo, env=env)
    pane.wait("Type @ to mention")   # the screen holds that text (else AssertionError, the screen)
    pane.type("PROMPT-1: ..."); pane.keys("Enter")
    pane.close()
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

TMUX = shutil.which("tmux")


class Pane:
    def __init__(self, sock: Path, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                 width: int = 160, height: int = 50) -> None:
        if TMUX is None:
            raise RuntimeError("tmux is not installed")
        self.sock = str(sock)
        cmd = " ".join(["env", "-i", *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                        *(shlex.quote(a) for a in argv)])
        shell = f"cd {shlex.quote(str(cwd))} && {cmd}; echo EXIT=$?; sleep 600"
        self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "agent", shell)

    def _tmux(self, *args: str) -> str:
        r = subprocess.run([str(TMUX), "-S", self.sock, "-f", "/dev/null", *args],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"tmux {args[0]} exited {r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-t", "agent")

    def wait(self, needle: str, timeout: float = 60, *, gone: bool = False) -> str:
        """The screen once it holds ``needle`` (``gone``: once it does not)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if (needle in screen) != gone:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} {'still' if gone else 'not'} on screen:\n{screen}")
            time.sleep(0.2)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "agent", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "agent", "-l", text)

    def close(self) -> None:
        subprocess.run([str(TMUX), "-S", self.sock, "kill-server"], capture_output=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            alive = subprocess.run([str(TMUX), "-S", self.sock, "has-session"], capture_output=True)
            if alive.returncode != 0:
                break
            time.sleep(0.05)
