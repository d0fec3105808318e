"""The README's Tested-with table (tests/compat/report.py): the "into a first run" column."""

from __future__ import annotations

from tests.compat import report


def _row(agent: str, order: str, *, refused: bool = False, holds: bool = True) -> dict[str, object]:
    return {"check": "first_run", "agent": agent, "order": order, "refused": refused, "request_holds": holds}


def test_the_first_run_column_says_what_was_measured_and_nothing_else() -> None:
    rows = [_row("cline", "after"), _row("cline", "before"),
            _row("opencode", "after", refused=True), _row("opencode", "before"),
            _row("pi", "after", holds=False), _row("pi", "before"),
            _row("gemini", "before")]
    lines = {line.split(" | ")[0].strip("| "): line for line in report.table(rows).splitlines()[:11]}
    assert lines["agent"].endswith("| into a first run |")
    assert lines["cline"].endswith("| yes |")
    assert lines["opencode"].endswith("| refused until configured |")
    assert lines["pi"].endswith("| **no** |")
    assert lines["gemini"].endswith("| not run |")  # one order only: not measured
    assert lines["qwen"].endswith("| not run |")
