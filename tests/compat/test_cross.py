"""Every ordered pair of agents, driven for real: a session one agent made continues in another.

Agent A runs the first prompt (a shell command that writes a file, a write, an edit); ``git oxide
import`` reads it from A's default store; ``git oxide resume S --into B`` writes it into B's store;
B's own resume runs the second prompt. B must accept the session, and the request B sends its
model must hold A's prompt and the shell command's output. Importing afterwards must not make a
new session of what oxide wrote: only what B added hangs on A's session, as its continuation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from . import checks
from .conftest import make_driver
from .driver import AGENTS, PROMPT2, SHELL_TEXT


def pairs(agents: tuple[str, ...], subset: str = "") -> list[tuple[str, str]]:
    """Every ordered pair; with ``OXIDE_COMPAT_PAIRS=ring`` each agent into the next and the
    previous one of the pins' order, so every agent is sent and received twice; with ``chain``
    (what CI runs) into the next only: every agent sent and received once."""
    steps = {"ring": (1, -1), "chain": (1,)}.get(subset)
    if steps and len(agents) > 3:
        n = len(agents)
        return [(agents[i], agents[(i + d) % n]) for d in steps for i in range(n)]
    return [(a, b) for a in agents for b in agents if a != b]


PAIRS = pairs(AGENTS, os.environ.get("OXIDE_COMPAT_PAIRS", ""))


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{a}-into-{b}" for a, b in PAIRS])
def test_a_session_continues_in_another_agent(source: str, target: str, compat_repo: Path,
                                               model_server, tmp_path: Path) -> None:
    a = make_driver(source, compat_repo, model_server)
    b = make_driver(target, compat_repo, model_server)
    first = a.run().check()
    checks.oxide(compat_repo, "import")
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [origin] = [r for r in rows if r["agent"] == source]
    if first.native_id:
        assert origin["native_id"] == first.native_id
    shown = checks.show(compat_repo, origin["id"])
    checks.assert_conversation(shown, [a.prompt1], tools=a.has_tools)

    res = checks.into(compat_repo, origin["id"], target)
    assert res["written"], res
    model_server._log.clear()
    second = b.resume(res["native_id"], PROMPT2)
    row = {"check": "cross", "source": source, "target": target,
           "versions": {source: a.pin.version, target: b.pin.version},
           "accepted": second.returncode == 0, "lost": res.get("lost", [])}
    try:
        second.check()
        needles = [a.prompt1, a.first_needle]
        checks.assert_request_holds(model_server, needles)
        row["request_holds"] = True
        calls = checks.request_tool_calls(model_server)
        row["tool_calls_handed_over"] = len(calls)
        if a.has_tools and b.has_tools:  # both have a shell tool: a real tool call
            assert any(SHELL_TEXT in args for _n, args in calls), \
                f"the shell command reached {target} as text: {calls}"
    except AssertionError:
        row["request_holds"] = False
        checks.record(row)
        raise

    # Importing again: what oxide wrote is that session; what B added is its continuation.
    checks.oxide(compat_repo, "import")
    after = checks.oxide_json(compat_repo, "list", "--all")
    new = [r for r in after if r["id"] not in {x["id"] for x in rows}]
    assert len(new) <= 1, f"importing made {len(new)} new sessions: {json.dumps(new)[:500]}"
    if new:
        assert new[0]["agent"] == target and new[0]["parent_id"] == origin["id"], new[0]
    row["duplicates"] = 0
    checks.record(row)
