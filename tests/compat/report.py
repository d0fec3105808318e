"""The "Tested with" table, from the rows the last `make compat` recorded (``checks.record``).

    python -m tests.compat.report          # print it
    python -m tests.compat.report --write  # and put it into the README, between its markers
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
    head = ["agent", "version", "import", "round trip (identical)"] + [f"into {a}" for a in agents]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for a in agents:
        imported = any(s == a and r.get("request_holds") for (s, _t), r in cross.items())
        same, total = trips.get(a, (0, 0))
        cells = [a, pins()[a].version, "yes" if imported else "no",
                 f"yes, {same}/{total} ({100 * same // total}%)" if total else "not run"]
        for b in agents:
            if a == b:
                cells.append("-")
                continue
            r = cross.get((a, b))
            if r is None:
                cells.append("not run")
            elif r.get("accepted") and r.get("request_holds") and r.get("duplicates") == 0:
                n = r.get("tool_calls_handed_over", 0)
                cells.append("yes" + (f", {n} tool calls as its own" if n else ", as text"))
            else:
                cells.append("no")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_readme(text: str) -> None:
    readme = ROOT / "README.md"
    s = readme.read_text()
    if START not in s or END not in s:
        raise SystemExit(f"README.md has no {START} ... {END} markers")
    before, rest = s.split(START, 1)
    _old, after = rest.split(END, 1)
    readme.write_text(f"{before}{START}\n{text}\n{END}{after}")


def main(argv: list[str]) -> int:
    results = rows()
    if not results:
        print("no compatibility results yet: run `make compat`", file=sys.stderr)
        return 1
    text = table(results)
    print(text)
    if "--write" in argv:
        write_readme(text)
        print(f"written into {Path('README.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
