"""``Assisted-by: AGENT:MODEL`` trailers (the Linux kernel's, for AI-assisted commits): the agent
and model of each turn whose lines are in the files being committed, as `blame` attributes the
not yet committed lines of those files. Added by the prepare-commit-msg hook with
``oxide.trailers``, next to ``Oxide-Session:``, within a budget (the hook runs while git waits)."""

from __future__ import annotations

import subprocess
import time
from typing import Any

from oxide_git.blame.attribution import blame_file
from oxide_git.blame.calls import AGENT
from oxide_git.git.repo import clean_git_env

BUDGET_S = 3.0  # past it, the files left are not looked at (the trailers name what was found)


def staged_paths(workdir: str, index_file: str | None = None) -> list[str]:
    """The paths the commit adds or modifies (``index_file``: the index git commits from)."""
    env = clean_git_env({"GIT_INDEX_FILE": index_file} if index_file else None)
    r = subprocess.run(["git", "diff", "--cached", "--no-renames", "--diff-filter=AM", "--name-only", "-z"],
                       cwd=workdir, capture_output=True, text=True, env=env)
    return [p for p in r.stdout.split("\0") if p] if r.returncode == 0 else []


def assisted_by(ctx: Any, paths: list[str], budget_s: float = BUDGET_S) -> list[str]:
    """``AGENT:MODEL`` of the agents' turns that wrote uncommitted lines of ``paths``, most lines first."""
    deadline = time.monotonic() + budget_s
    count: dict[str, int] = {}
    for path in paths:
        if time.monotonic() > deadline:
            break
        try:
            lines = blame_file(ctx, path).lines
        except Exception:  # a file blame cannot read (binary, gone): it says nothing here
            continue
        for ln in lines:
            if ln.commit is None and ln.who == AGENT:
                key = f"{ln.agent or 'agent'}:{ln.model or 'unknown'}"
                count[key] = count.get(key, 0) + 1
    return sorted(count, key=lambda k: (-count[k], k))
