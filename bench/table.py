"""The benchmark's rows as a table: as text for the terminal (``python -m bench`` prints it), and as
Markdown between the markers of docs/performance.md::

    python -m bench.table [RESULTS.json] [--write [PAGE]] [--block NAME]

RESULTS defaults to ``.bench-cache/results.json`` (what ``make bench`` wrote); ``--write``
replaces what is between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` of PAGE (default
docs/performance.md; NAME ``bench``, ``bench-large`` for ``make bench-large``'s rows).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from .common import CACHE, ROOT

PAGE = ROOT / "docs" / "performance.md"
RESULTS = CACHE / "results.json"

_RATIO = re.compile(r"^\s*(≤|<=|<|≥|>=|>)\s*([\d.]+)\s*[x×]", re.I)
_TIME = re.compile(r"^\s*(≤|<=|<|≥|>=|>)\s*([\d.]+)\s*(ms|s)\b", re.I)


def _cmp(op: str, a: float, b: float) -> bool:
    return {"≤": a <= b, "<=": a <= b, "<": a < b, "≥": a >= b, ">=": a >= b, ">": a > b}[op]


def met(r: dict[str, Any]) -> bool | None:
    if r.get("error"):
        return False
    if "met" in r:
        return None if r["met"] is None else bool(r["met"])
    target = str(r.get("target") or "")
    m = _RATIO.match(target)
    if m and r.get("ratio") is not None:
        return _cmp(m.group(1), float(r["ratio"]), float(m.group(2)))
    m = _TIME.match(target)
    if m and r.get("median_s") is not None:
        limit = float(m.group(2)) / (1000 if m.group(3).lower() == "ms" else 1)
        return _cmp(m.group(1), float(r["median_s"]), limit)
    return None


def fmt_time(s: Any) -> str:
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "-"
    s = float(s)
    return f"{s * 1000:.1f} ms" if s < 10 else f"{s:.2f} s"


def table(rows: list[dict[str, Any]]) -> str:
    head = ["name", "median", "baseline", "ratio", "target", "met?"]
    body = []
    for r in rows:
        ok = met(r)
        body.append([
            str(r.get("name", "?")),
            "ERROR" if r.get("error") else (r.get("value") or fmt_time(r.get("median_s"))),
            fmt_time(r.get("baseline_s")),
            "-" if r.get("ratio") is None else f"{float(r['ratio']):.2f}×",
            str(r.get("target", "")),
            "-" if ok is None else ("yes" if ok else "NO"),
        ])
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    right = {1, 2, 3}

    def line(cells: list[str]) -> str:
        return " | ".join(c.rjust(w) if i in right else c.ljust(w)
                          for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(head), "-|-".join("-" * w for w in widths)]
    out += [line(b) for b in body]
    for r in rows:
        if r.get("error"):
            out.append(f"  ERROR in {r['name']}: {r['error']}")
        if r.get("note"):
            out.append(f"  note ({r['name']}): {r['note']}")
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[dict[str, Any]]) -> str:
    """One Markdown table row per benchmark row: the figure, its median (or value), the baseline
    it is compared with, the ratio, the budget and whether it was met."""
    out = ["| figure | median | baseline | ratio | budget | met |",
           "| --- | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        ok = met(r)
        median = "error" if r.get("error") else (r.get("value") or fmt_time(r.get("median_s")))
        ratio = "-" if r.get("ratio") is None else f"{float(r['ratio']):.2f}×"
        out.append("| " + " | ".join(_cell(c) for c in (
            str(r.get("name", "?")), median, fmt_time(r.get("baseline_s")), ratio, str(r.get("target", "")),
            "-" if ok is None else ("yes" if ok else "**no**"))) + " |")
    return "\n".join(out)


def write_block(page: Path, name: str, text: str) -> None:
    """``text`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in ``page``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    s = page.read_text()
    if s.count(start) != 1 or s.count(end) != 1 or s.index(start) > s.index(end):
        raise SystemExit(f"{page} has no single {start} ... {end} block")
    before, rest = s.split(start, 1)
    _old, after = rest.split(end, 1)
    page.write_text(f"{before}{start}\n{text}\n{end}{after}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.table", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="?", default=str(RESULTS), help="the rows (default: %(default)s)")
    ap.add_argument("--write", nargs="?", const=str(PAGE), default=None, metavar="PAGE",
                    help="write the table into PAGE's marked block (default page: docs/performance.md)")
    ap.add_argument("--block", default="bench", help="the block's name (default: bench)")
    args = ap.parse_args(argv)
    path = Path(args.results)
    try:
        rows = json.loads(path.read_text())
    except FileNotFoundError:
        print(f"no results at {path}: run `make bench` first", file=sys.stderr)
        return 1
    text = markdown(rows)
    print(text)
    if args.write:
        write_block(Path(args.write), args.block, text)
        print(f"(written into {args.write})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
