"""A compacted session of another agent continues in Gemini CLI and Qwen Code from its summary,
driven for real: Claude's compaction (fixtures/claude/compaction.jsonl) goes in as each CLI's own
compression, and the request the CLI then sends its model holds the summary and the prompt after
it, not the turns the summary stands for."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import checks
from .conftest import make_driver
from .driver import PROMPT2

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "claude" / "compaction.jsonl"
SUMMARY, AFTER, BEFORE = "Summary: refactored app.py.", "Now add tests", "Done refactoring."


@pytest.mark.parametrize("target", ["gemini", "qwen"])
def test_a_compacted_session_continues_from_its_summary(target: str, compat_repo: Path, model_server,
                                                        tmp_path: Path) -> None:
    b = make_driver(target, compat_repo, model_server)
    path = tmp_path / "compaction.jsonl"
    path.write_text(FIXTURE.read_text().replace("/work/project", str(compat_repo)))
    checks.oxide(compat_repo, "import", "--agent", "claude", str(path))
    [origin] = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["agent"] == "claude"]
    res = checks.into(compat_repo, origin["id"], target)
    assert res["written"], res
    model_server._log.clear()
    b.resume(res["native_id"], PROMPT2).check()
    checks.assert_request_holds(model_server, [SUMMARY, AFTER, PROMPT2])
    body = checks.request_text(model_server)
    assert BEFORE not in body, f"{target} was sent the turns its summary stands for"
    # what oxide wrote maps back to the Claude session; only what the CLI added hangs on it
    before = {r["id"] for r in checks.oxide_json(compat_repo, "list", "--all")}
    checks.oxide(compat_repo, "import")
    new = [r for r in checks.oxide_json(compat_repo, "list", "--all") if r["id"] not in before]
    assert len(new) == 1 and new[0]["agent"] == target and new[0]["parent_id"] == origin["id"], new
    shown = checks.show(compat_repo, new[0]["id"])
    assert PROMPT2 in checks.user_prompts(shown), shown
    checks.record({"agent": target, "version": b.pin.version, "check": "compaction_into",
                   "request_holds_summary": True, "earlier_turns_sent": False})
