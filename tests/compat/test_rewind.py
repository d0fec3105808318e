"""A conversation rewind reaches every agent (issue 13, item 11), driven for real: the agent runs
two prompts, `git oxide rewind CP --conversation` goes back to before the second, `resume --into`
writes the rewound conversation, and the agent's own resume sends its model the first prompt but
not the second."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import checks
from .conftest import make_driver
from .driver import AGENTS, PROMPT2
from .modelserver import Turn

PROMPT3 = "PROMPT-3: and now?"


@pytest.mark.parametrize("agent", AGENTS)
def test_the_agent_resumes_the_rewound_conversation(agent: str, compat_repo: Path, model_server) -> None:
    d = make_driver(agent, compat_repo, model_server)
    model_server.script["PROMPT-3"] = [Turn.say("Done with three.")]
    first = d.run().check()
    checks.oxide(compat_repo, "import")
    [row] = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == agent]
    sid = row["id"]
    cp = checks.oxide(compat_repo, "checkpoint", "--session", sid, "-m", "after one").stdout.strip()
    d.resume(first.native_id or row["native_id"], PROMPT2).check()
    checks.oxide(compat_repo, "import")
    assert any(PROMPT2 in u for u in checks.user_prompts(checks.show(compat_repo, sid)))

    checks.oxide(compat_repo, "rewind", cp, "--conversation", "--yes")
    res = checks.into(compat_repo, sid, agent)
    assert res["written"], res
    if agent != "opencode":  # the agent's longer file is kept aside; OpenCode's rows are replaced in
        assert res["set_aside"], json.dumps(res)  # one transaction, the longer conversation stays in the store
    model_server._log.clear()
    d.resume(res["native_id"], PROMPT3).check()
    body = checks.request_text(model_server)
    assert d.prompt1 in body
    assert PROMPT2 not in body, f"{agent} resumed the conversation the user rewound away"
