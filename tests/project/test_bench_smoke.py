"""The benchmark runner: its table and target reading (fast), and `python -m bench --quick` (bench)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.table import met, table

ROOT = Path(__file__).resolve().parents[2]


def test_met_reads_ratio_and_time_targets() -> None:
    assert met({"ratio": 1.2, "median_s": 0.1, "target": "≤ 1.5× git status"}) is True
    assert met({"ratio": 3.5, "median_s": 0.1, "target": "< 3x git status"}) is False
    assert met({"ratio": None, "median_s": 0.12, "target": "< 150 ms wall"}) is True
    assert met({"ratio": None, "median_s": 2.5, "target": "<= 2 s"}) is False
    assert met({"median_s": 0.1, "target": "info"}) is None
    assert met({"median_s": 0.1, "target": "anything", "met": False}) is False
    assert met({"median_s": None, "target": "< 1 s", "error": "boom"}) is False


def test_table_has_one_line_per_row() -> None:
    rows: list[dict[str, Any]] = [
        {"name": "a", "median_s": 0.012, "baseline_s": 0.01, "ratio": 1.2, "target": "≤ 1.5×"},
        {"name": "b", "median_s": None, "baseline_s": None, "ratio": None, "target": "≥ 40 MB/s",
         "met": False, "value": "12.0 MB/s"},
    ]
    lines = table(rows).splitlines()
    assert lines[0].split(" | ")[0].strip() == "name"
    assert "12.0 ms" in lines[2] and "yes" in lines[2]
    assert "12.0 MB/s" in lines[3] and "NO" in lines[3]


@pytest.mark.bench
def test_quick_bench_runs_green(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    p = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "store,importing",
                        "--json", str(tmp_path / "results.json")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    rows = json.loads((tmp_path / "results.json").read_text())
    assert rows and not [r for r in rows if r.get("error")], rows


def test_chart_draws_one_panel_per_figure_with_its_values(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    from bench.chart import point, write

    rows: list[dict[str, Any]] = [
        {"name": "a", "chart": point("reindex (messages/s)", 1_000, 31_000.0, 100_000)},
        {"name": "b", "chart": point("reindex (messages/s)", 1_000_000, 28_000.0, 100_000)},
        {"name": "c", "chart": point("checkpoint / git status", 10_000, 1.02, 1.05)},
        {"name": "d"},
    ]
    svg = write(rows, tmp_path / "r.svg", "title")
    assert svg == tmp_path / "r.svg"
    root = ET.parse(svg).getroot()  # well-formed SVG
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "reindex (messages/s)" in texts and "checkpoint / git status" in texts
    assert {"31k", "28k", "1.02", "1k", "1M", "10k", "target 100k", "target 1.05"} <= set(texts)
    assert len([g for g in root.iter("{http://www.w3.org/2000/svg}g")]) == 2
    assert write([{"name": "x"}], tmp_path / "none.svg", "t") is None
    assert not (tmp_path / "none.svg").exists()


@pytest.mark.bench
def test_bench_large_runs_every_part_small(tmp_path: Path) -> None:
    """`make bench-large`'s parts at their smallest: each row present, none an error, a chart."""
    env = dict(os.environ, BENCH_LARGE_SIZES="10000", BENCH_LARGE_MESSAGES="1000", BENCH_LARGE_TEAM="300",
               BENCH_LARGE_ROLLOUT_MB="4")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    p = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "large",
                        "--json", str(tmp_path / "large.json")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    rows = json.loads((tmp_path / "large.json").read_text())
    assert not [r for r in rows if r.get("error")], [r for r in rows if r.get("error")]
    names = " ".join(r["name"] for r in rows)
    for part in ("git oxide checkpoint", "watch-assisted checkpoint", "first checkpoint in a fresh clone",
                 "rewind --code", "reindex --full", "over its socket", "first screen", "first import",
                 "Codex rollout (.jsonl.zst)", "git oxide push", "git oxide pull", "git gc, store"):
        assert part in names, part
    assert (tmp_path / "large.svg").read_text().startswith("<svg")
