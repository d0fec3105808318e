"""git's own locks that a killed `git gc` or repack leaves (its packs, its commit-graph,
packed-refs): git asks the user to remove them by hand before it runs again, and so do the soak and
the crash trials, after each kill they make."""

from __future__ import annotations

from pathlib import Path


def clear_killed_gc_locks(gitdir: Path) -> None:
    for p in [*(gitdir / "objects").rglob("*.lock"), gitdir / "packed-refs.lock"]:
        p.unlink(missing_ok=True)
