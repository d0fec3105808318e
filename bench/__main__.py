"""`python -m bench [--quick] [--only MODULE,...]`: run the benchmark modules, print one table.

The table is a report: a missed target does not fail the run (exit 0); only a crash of the
runner itself does. The rows also go to ``.bench-cache/results.json`` (a JSON list).
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import json
import math
import os
import platform
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from . import common

MODULES = ("store", "importing", "hooks", "export", "resume", "mcp", "blame")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes, fewer reps (CI)")
    ap.add_argument("--only", default="", help="comma-separated modules (default: all present)")
    ap.add_argument("--json", default=str(common.CACHE / "results.json"),
                    help="where to write the rows (default: .bench-cache/results.json)")
    args = ap.parse_args(argv)
    wanted = [m for m in args.only.split(",") if m] or list(MODULES)
    os.environ["PATH"] = f"{common.BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    common.CACHE.mkdir(parents=True, exist_ok=True)
    # One run at a time: runs share .bench-cache/run/ and would skew each other's timings.
    lock = open(common.CACHE / "bench.lock", "w")  # noqa: SIM115  (held until exit)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("waiting for another bench run in this checkout to finish…", flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for name in wanted:
        try:
            mod = importlib.import_module(f"bench.{name}")
        except ModuleNotFoundError as e:
            if e.name in (f"bench.{name}",):
                continue  # not written (yet)
            raise
        fn = getattr(mod, "run", None)
        if fn is None:
            continue
        print(f"== bench.{name}{' (quick)' if args.quick else ''}", flush=True)
        t0 = time.perf_counter()
        try:
            got = fn(args.quick)
        except Exception as e:  # one module's crash is reported as a row, the others still run
            traceback.print_exc()
            got = [common.error_row(f"bench.{name}", "(module crashed)", e)]
        print(f"   ({time.perf_counter() - t0:.0f} s)", flush=True)
        rows += got
    total = time.perf_counter() - started
    print()
    print(f"git oxide benchmarks{' (quick)' if args.quick else ''}: "
          f"{platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {common.run(['git', '--version'], common.ROOT).decode().strip()}, "
          f"{total:.0f} s")
    print(table(rows))
    out = Path(args.json)
    for r in rows:
        r.setdefault("met", met(r))
    out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    print(f"\n(rows written to {out})")
    if any(r.get("chart") for r in rows):
        from .chart import write

        svg = write(rows, out.with_suffix(".svg"), f"git oxide benchmarks, {time.strftime('%Y-%m-%d')}")
        print(f"(chart written to {svg})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
