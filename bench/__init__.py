"""Benchmarks for `make bench`: medians and ratios against git itself, in one table.

Each module here (store, importing, and the optional hooks, export, resume) exposes
``run(quick: bool) -> list[dict]``. A row is::

    {"name": str, "median_s": float | None, "baseline_s": float | None,
     "ratio": float | None, "target": str,
     # optional:
     "met": bool | None,   # decided by the module; when absent, the runner reads the target
     "value": str,         # shown instead of the median when the figure is not a time ("52 MB/s")
     "note": str, "samples": [float], "error": str}

When ``met`` is absent the runner understands targets written as ``≤ 1.5× ...`` / ``< 3x ...``
(against ``ratio``) and ``< 150 ms`` / ``<= 2 s`` (against ``median_s``); anything else shows "?".
"""

from __future__ import annotations
