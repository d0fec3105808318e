"""`git oxide resume S --into AGENT --exec` run for real: git oxide writes the session, then execs
the agent's own resume command, which talks to the model with the other agent's history."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from . import checks
from .conftest import make_driver
from .driver import PROMPT2, SHELL_TEXT


def test_exec_hands_a_claude_session_to_aider(compat_repo: Path, model_server, tmp_path: Path) -> None:
    claude = make_driver("claude", compat_repo, model_server)
    aider = make_driver("aider", compat_repo, model_server)
    sid = claude.run().check().native_id
    assert sid
    checks.oxide(compat_repo, "import")
    # Aider configured as its user would have it: a config file in HOME (every option), and the
    # prompt as AIDER_MESSAGE so that the exec'd `aider --restore-chat-history` runs one turn.
    flags = aider._flags()
    conf = []
    for i, f in enumerate(flags):
        if f.startswith("--") and (i + 1 == len(flags) or flags[i + 1].startswith("--")):
            key, value = f[2:], "true"
            if key.startswith("no-"):
                key, value = key[3:], "false"
            conf.append(f"{key}: {value}")
        elif f.startswith("--"):
            conf.append(f"{f[2:]}: {flags[i + 1]}")
    (aider.home / ".aider.conf.yml").write_text("\n".join(conf) + "\n")
    env = aider.env()
    env["AIDER_MESSAGE"] = PROMPT2
    env["PATH"] = os.pathsep.join([str(aider.pin.bin_dir), str(Path(sys.executable).parent), env["PATH"]])
    model_server._log.clear()
    r = subprocess.run(["git", "oxide", "resume", sid, "--into", "aider", "--exec"], cwd=compat_repo,
                       env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-3000:] + r.stdout[-3000:]
    checks.assert_request_holds(model_server, [claude.prompt1, SHELL_TEXT, PROMPT2])
    assert "Done with two." in (compat_repo / ".aider.chat.history.md").read_text()
