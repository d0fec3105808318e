"""Issue 14 on the real sessions the user met it on (set OXIDE_REAL_FIXTURES): the Claude session
with two sub-agents resolves by its own id, and `show` prints its conversation, not record dumps."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import oxide_process as oxide  # the compatibility suite: real processes

ROOT = os.environ.get("OXIDE_REAL_FIXTURES")
if not ROOT:
    pytest.skip("set OXIDE_REAL_FIXTURES to a folder of real sessions to run", allow_module_level=True)
SPOTTER = Path(ROOT) / "claude" / "marot-spotter"
NATIVE = "4d5611e5-241a-462a-8d15-5122611a9569"


def test_a_real_claude_session_with_sub_agents(repo: Path) -> None:
    if not (SPOTTER / f"{NATIVE}.jsonl").exists():
        pytest.skip("the marot-spotter fixture is not there")
    oxide(repo, "init")
    oxide(repo, "import", "--agent", "claude", str(SPOTTER))
    out = oxide(repo, "show", NATIVE).stdout  # was "ambiguous" with its two sub-agents
    head = out.splitlines()[:6]
    assert head[0].startswith("session ") and f"its id {NATIVE}" in head[2]
    assert "{'" not in out and "(other:" not in out  # no Python reprs of progress records
    assert re.search(r"\d+ of the \d+ records are not shown: progress", out)
    listed = oxide(repo, "list", "--all").stdout.splitlines()[1:]
    ids = [line.split()[0] for line in listed]
    assert len(set(ids)) == len(ids)
    for shown in ids:  # every id as listed is one the user can type
        assert oxide(repo, "show", shown).returncode == 0
