"""Issue 38 item 3, "the first hour": each test does what the new user did."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

DEMO = Path(__file__).resolve().parent.parent / "docs" / "demo.sh"


def test_the_demo_shows_commands_that_paste() -> None:
    """It showed `$ git oxide fork 019ca8d7 --at 3 --title try another approach`."""
    text = DEMO.read_text()
    functions = "\n".join(m.group(0) for m in re.finditer(r"(?ms)^(quote|show)\(\) \{.*?\}$", text))
    args = ["git", "oxide", "fork", "019ca8d7", "--at", "3", "--title", "try another approach",
            "it's", "", "$HOME", "a\\b", "--x=1"]
    out = subprocess.run(["bash", "-c", functions + '\nshow "$@"', "bash", *args],
                         capture_output=True, text=True, check=True).stdout
    shown = re.sub(r"\x1b\[[0-9;]*m", "", out).strip()
    assert shown.startswith("$ ")
    assert shlex.split(shown[2:]) == args
    assert "git oxide fork 019ca8d7 --at 3" in shown  # plain words stay plain
    assert 'show git oxide checkpoint -m \'"' not in text  # no hand-quoting left
