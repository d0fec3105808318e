"""The "Tested with" table, from the rows the last `make compat` recorded (``checks.record``), and
the blame's results on real agents.

    python -m tests.compat.report          # print them
    python -m tests.compat.report --write  # and put them between their markers: the table into
                                           # README.md, the blame's into docs/blame.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .checks import RESULTS
from .install import ROOT, pins

START, END = "<!-- compat:start -->", "<!-- compat:end -->"


def rows() -> list[dict[str, Any]]:
    if not RESULTS.exists():
        return []
    return [json.loads(line) for line in RESULTS.read_text().splitlines() if line.strip()]


def table(results: list[dict[str, Any]]) -> str:
    agents = list(pins())
    trips: dict[str, tuple[int, int]] = {}
    for r in results:
        if str(r.get("check", "")).startswith("round_trip") and r.get("agent") in agents:
            same = r.get("lines_same", r.get("rows_same", 0))
            total = r.get("lines_total", r.get("rows_total", 0))
            a, b = trips.get(r["agent"], (0, 0))
            trips[r["agent"]] = (a + int(same), b + int(total))
    cross = {(r["source"], r["target"]): r for r in results if r.get("check") == "cross"}
    out = ["| agent | version | import | round trip: lines identical | into a first run |",
           "|---|---|---|---|---|"]
    for a in agents:
        imported = any(s == a and r.get("request_holds") for (s, _t), r in cross.items())
        same, total = trips.get(a, (0, 0))
        trip = f"{same}/{total} ({100 * same // total}%)" if total else "not run"
        first = first_run_cell([r for r in results if r.get("check") == "first_run" and r.get("agent") == a])
        out.append(f"| {a} | {pins()[a].version} | {'yes' if imported else 'no'} | {trip} | {first} |")
    out += ["", "| from \\ into | " + " | ".join(agents) + " |", "|---|" + "---|" * len(agents)]
    for a in agents:
        cells = [a]
        for b in agents:
            r = cross.get((a, b))
            if a == b:
                cells.append("-")
            elif r is None:
                cells.append("not run")
            elif r.get("accepted") and r.get("request_holds") and r.get("duplicates") == 0:
                n = r.get("tool_calls_handed_over", 0)
                cells.append(f"{n} tools" if n else "text")
            else:
                cells.append("**no**")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def first_run_cell(rows: list[dict[str, Any]]) -> str:
    """`resume --into` the agent where it never ran (tests/compat/test_first_run.py), configured
    after the write and before it: "yes" when both resumed with the whole history; "refused until
    configured" when the write waited for the configuration, said so, and then resumed."""
    orders = {r.get("order"): r for r in rows}  # the last run of each order
    if not orders:
        return "not run"
    if any(not r.get("request_holds") for r in orders.values()):
        return "**no**"
    if set(orders) != {"after", "before"}:
        return "not run"
    return "refused until configured" if orders["after"].get("refused") else "yes"


BLAME_START, BLAME_END = "<!-- blame:start -->", "<!-- blame:end -->"


def blame_table(results: list[dict[str, Any]]) -> str:
    """`git oxide blame` on real runs (tests/compat/test_blame.py): lines attributed right."""
    got = [r for r in results if r.get("check") == "blame"]
    if not got:
        return ""
    out = ["| agent | version | case | lines | correct |", "|---|---|---|---:|---:|"]
    for r in got:
        out.append(f"| {r['agent']} | {r['version']} | {r['case']} | {r['lines']} | {r['correct']} |")
    lines, correct = sum(r["lines"] for r in got), sum(r["correct"] for r in got)
    out.append(f"| all | | {len(got)} cases | {lines} | {correct} ({100 * correct // max(lines, 1)}%) |")
    return "\n".join(out)


README, BLAME_PAGE = ROOT / "README.md", ROOT / "docs" / "blame.md"


def write_readme(text: str, start: str = START, end: str = END, page: Path = README) -> None:
    """``text`` between the ``start`` and ``end`` markers of ``page`` (what was there goes)."""
    s = page.read_text()
    if start not in s or end not in s:
        raise SystemExit(f"{page.relative_to(ROOT)} has no {start} ... {end} markers")
    before, rest = s.split(start, 1)
    _old, after = rest.split(end, 1)
    page.write_text(f"{before}{start}\n{text}\n{end}{after}")


def main(argv: list[str]) -> int:
    results = rows()
    if not results:
        print("no compatibility results yet: run `make compat`", file=sys.stderr)
        return 1
    text = table(results)
    print(text)
    blame = blame_table(results)
    if blame:
        print("\n" + blame)
    if "--write" in argv:
        write_readme(text)
        if blame:
            write_readme(blame, BLAME_START, BLAME_END, BLAME_PAGE)
        print(f"written into {README.relative_to(ROOT)}" + (f" and {BLAME_PAGE.relative_to(ROOT)}" if blame else ""),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
