"""`resume --into` an agent that has never run on this machine (issue 37, item 1), driven for real.

Another agent's session is written into a HOME where the target agent never ran: nothing of it on
disk (no store, no settings, no provider). Two orders, as users meet them: **configured after the
write** (the session is written first, then the user points the agent at a model the way they
would, then resumes) and **configured before** (set up first, as the rest of the suite does). In
both, the resumed agent must send its model the whole history (the source's prompt and its shell
command's output) and the new prompt. An agent that cannot be written into before it is configured
(OpenCode: no model to name) refuses before anything is written, and the same command succeeds
once it is configured.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import checks
from .conftest import make_driver
from .driver import AGENTS, PROMPT2

# The source of each target's session: Claude Code's (Codex's into Claude Code), Aider's into
# OpenCode (the case the issue names: Aider records an ``openai/…`` model).
SOURCE = {a: "claude" for a in AGENTS} | {"claude": "codex", "opencode": "aider"}
ORDERS = ("after", "before")
CASES = [(a, o) for a in AGENTS for o in ORDERS]


@pytest.mark.parametrize(("target", "order"), CASES,
                         ids=[f"{a}-configured-{o}-the-write" for a, o in CASES])
def test_into_an_agent_on_its_first_run(target: str, order: str, compat_repo: Path, model_server,
                                         tmp_path: Path) -> None:
    source = SOURCE[target]
    a = make_driver(source, compat_repo, model_server)
    native = a.run().check().native_id
    checks.oxide(compat_repo, "import")
    [origin] = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == source]
    if native:
        assert origin["native_id"] == native

    b = make_driver(target, compat_repo, model_server, configure=order == "before")
    untouched = {p: p.exists() for p in b.store()}
    assert not any(untouched.values()), f"{target} has a store already: not its first run"
    row = {"check": "first_run", "agent": target, "version": b.pin.version, "order": order,
           "source": source, "refused": False, "request_holds": False}
    try:
        r = checks.oxide(compat_repo, "resume", origin["id"], "--into", target, "--json", check=False)
        if r.returncode != 0:
            # refused: before anything is written, and saying how to configure the agent
            assert order == "after", f"refused although {target} is configured: {r.stderr}"
            assert r.stderr.startswith("error: ") and "\nhint: " in r.stderr and "Traceback" not in r.stderr
            assert {p: p.exists() for p in b.store()} == untouched, "a refused resume wrote something"
            row["refused"] = True
        if order == "after":
            b.setup()  # the user configures the agent now, as they would
        res = checks.into(compat_repo, origin["id"], target) if row["refused"] else _json(r.stdout)
        assert res["written"], res
        model_server._log.clear()
        b.resume(res["native_id"], PROMPT2).check()
        checks.assert_request_holds(model_server, [a.prompt1, a.first_needle, PROMPT2])
        row["request_holds"] = True
    finally:
        checks.record(row)


def _json(text: str) -> dict:  # type: ignore[type-arg]
    import json

    out = json.loads(text)
    assert isinstance(out, dict)
    return out
