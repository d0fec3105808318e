"""`python -m bench [--quick] [--only MODULE,...]`: run the benchmark modules, print one table.

The table is a report: a missed target does not fail the run (exit 0). A row that could not be
measured does (exit 1, after the table): a module that crashed, as when a change to oxide broke
the path it measures; CI's `make bench-quick` fails then. The rows also go to ``.bench-cache/results.json`` (a JSON list), which
``python -m bench.table`` turns into docs/performance.md's table.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from . import common
from .table import met, table

MODULES = ("store", "importing", "hooks", "export", "resume", "mcp", "blame")

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
    crashed = [r for r in rows if r.get("error")]
    for r in crashed:
        print(f"error: {r['name']}: {r['error']}", file=sys.stderr)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
