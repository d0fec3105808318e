"""`python -m bench.table`: the benchmark's rows as Markdown, written between the markers of
docs/performance.md (and any page with a block of that name), nothing else of the page changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.table import PAGE, main, markdown, write_block

ROWS: list[dict[str, Any]] = [
    {"name": "git oxide list --json (10,000 sessions)", "median_s": 0.0831, "baseline_s": 0.0512, "ratio": 1.623,
     "target": "< 150 ms wall", "met": True},
    {"name": "import: a | in a name", "median_s": None, "baseline_s": None, "ratio": None, "target": "≥ 40 MB/s",
     "met": False, "value": "38.2 MB/s"},
    {"name": "blame, committed", "median_s": 0.2, "baseline_s": 0.05, "ratio": 4.0, "target": "< 150 ms"},
    {"name": "git blame (baseline)", "median_s": 0.048, "target": "baseline", "met": None},
    {"name": "git oxide mcp", "median_s": None, "target": "< 500 ms", "error": "boom"},
]


def test_markdown_has_a_row_per_figure_with_its_budget_and_verdict() -> None:
    lines = markdown(ROWS).splitlines()
    assert lines[0] == "| figure | median | baseline | ratio | budget | met |"
    assert len(lines) == 2 + len(ROWS)
    assert lines[2] == "| git oxide list --json (10,000 sessions) | 83.1 ms | 51.2 ms | 1.62× | < 150 ms wall | yes |"
    assert lines[3] == "| import: a \\| in a name | 38.2 MB/s | - | - | ≥ 40 MB/s | **no** |"
    assert lines[4].endswith("| 4.00× | < 150 ms | **no** |")  # read from the budget: 200 ms is over
    assert lines[5].endswith("| baseline | - |") and lines[6] == "| git oxide mcp | error | - | - | < 500 ms | **no** |"


def test_write_block_replaces_only_what_is_between_the_markers(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# P\n\nbefore\n<!-- bench:start -->\nold\ntable\n<!-- bench:end -->\nafter\n")
    write_block(page, "bench", "new")
    assert page.read_text() == "# P\n\nbefore\n<!-- bench:start -->\nnew\n<!-- bench:end -->\nafter\n"
    write_block(page, "bench", "new")  # again: the same page
    assert page.read_text().count("new") == 1
    with pytest.raises(SystemExit, match="no single"):
        write_block(page, "bench-large", "x")


def test_main_writes_the_results_into_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps(ROWS))
    page = tmp_path / "performance.md"
    page.write_text(PAGE.read_text())  # the real page's blocks
    assert main([str(results), "--write", str(page), "--block", "bench-large"]) == 0
    text = page.read_text()
    large = text.split("<!-- bench-large:start -->\n", 1)[1].split("<!-- bench-large:end -->", 1)[0]
    assert large == markdown(ROWS) + "\n"
    assert text.split("<!-- bench:start -->", 1)[1].split("<!-- bench:end -->", 1)[0] == \
        PAGE.read_text().split("<!-- bench:start -->", 1)[1].split("<!-- bench:end -->", 1)[0]
    assert markdown(ROWS) in capsys.readouterr().out
    assert main([str(tmp_path / "none.json")]) == 1
    assert "run `make bench` first" in capsys.readouterr().err
