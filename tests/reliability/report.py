"""Figures the reliability suite collects, and the table printed at the end of the session."""

from __future__ import annotations

import os
from collections import Counter

QUICK = os.environ.get("OXIDE_RELIABILITY_QUICK", "") not in ("", "0")

FIGURES: Counter[str] = Counter()

ROWS = [
    ("trials", "crash trials run"),
    ("kills", "kills survived (SIGKILL mid-operation)"),
    ("half_done", "kills that left the work half done (then finished by a rerun)"),
    ("messages_acked", "messages acknowledged before a kill"),
    ("messages_lost", "messages lost (must be 0)"),
    ("checkpoints_acked", "checkpoints acknowledged before a kill"),
    ("checkpoints_lost", "checkpoints lost (must be 0)"),
    ("stale_locks", "ref locks left by a killed process (removed by doctor --fix)"),
    ("repairs", "index/lock damage detected and repaired"),
    ("concurrent_messages", "messages written concurrently"),
    ("concurrent_checkpoints", "checkpoints written concurrently"),
    ("fuzz_execs", "fuzz executions (importers)"),
    ("fuzz_crashes", "fuzz crashes"),
    ("hostile_tried", "hostile inputs tried"),
    ("hostile_refused", "hostile inputs refused or handled cleanly"),
]


def add(key: str, n: int = 1) -> None:
    FIGURES[key] += n


def table() -> str:
    width = max(len(label) for _k, label in ROWS)
    lines = [f"git oxide reliability ({'quick' if QUICK else 'full'} mode)", "-" * (width + 12)]
    for key, label in ROWS:
        lines.append(f"{label:<{width}}  {FIGURES.get(key, 0):>9}")
    return "\n".join(lines)
