"""An agent's interactive UI in a tmux pane (a real pty of a fixed size), driven by key presses:
for what a CLI only does interactively (Qwen Code's rewind dialog). Its own tmux server, on a
socket in the test's folder, so nothing of the user's tmux is touched."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

TMUX = shutil.which("tmux")


class Pane:
    def __init__(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], sock: Path,
                 size: tuple[int, int] = (120, 40)) -> None:
        assert TMUX is not None, "tmux is not installed"
        self.sock = str(sock)
        cmd = " ".join(["env", "-i", *(shlex.quote(f"{k}={v}") for k, v in env.items()),
                        *(shlex.quote(str(a)) for a in argv)])
        shell = f"cd {shlex.quote(str(cwd))} && {cmd}; echo EXIT=$?; sleep 600"
        self._tmux("new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), "-s", "agent", shell)

    def _tmux(self, *args: str) -> str:
        r = subprocess.run([str(TMUX), "-S", self.sock, "-f", "/dev/null", *args],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"tmux {args[0]} exited {r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-S", "-300", "-t", "agent")

    def wait(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if needle in screen:
                return screen
            if "EXIT=" in screen or time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} not on screen:\n{screen}")
            time.sleep(0.2)

    def keys(self, *keys: str, pause: float = 0.3) -> None:
        """Each key on its own, ``pause`` seconds apart (an UI tells a typed key from a paste)."""
        for k in keys:
            self._tmux("send-keys", "-t", "agent", k)
            time.sleep(pause)

    def type(self, text: str, pause: float = 0.5) -> None:
        self._tmux("send-keys", "-t", "agent", "-l", text)
        time.sleep(pause)

    def close(self) -> None:
        subprocess.run([str(TMUX), "-S", self.sock, "kill-server"], capture_output=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if subprocess.run([str(TMUX), "-S", self.sock, "has-session"], capture_output=True).returncode:
                break
            time.sleep(0.05)
