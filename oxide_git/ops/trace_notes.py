"""Agent Trace records and Git AI authorship logs as notes (``refs/notes/agent-trace``,
``refs/notes/ai``): written by `git oxide trace --write` and, with ``git config oxide.trace
agent-trace,git-ai``, by the post-commit hook's job; the post-rewrite job writes them again for
the rewritten commits (amend, rebase, squash), worked out from their own lines (the oxide notes
are carried first, so `blame` attributes the rewrites as it did the originals). Pushed and pulled
with the other oxide refs (``share``)."""

from __future__ import annotations

import time
from typing import Any

from oxide_git.git import refs
from oxide_git.ops.trace import FORMATS, commit_lines, render
from oxide_git.store.context import Context
from oxide_git.store.notes import read_text, write_text

REF = {"agent-trace": refs.AGENT_TRACE_NOTES, "git-ai": refs.AI_NOTES}
DEFAULT_BUDGET_S = 10.0


def configured(ctx: Context) -> list[str]:
    """The formats ``oxide.trace`` names (comma- or space-separated; ``all`` or ``true``: both)."""
    raw = (ctx.config("oxide.trace") or "").replace(",", " ").split()
    if any(w.lower() in ("all", "true", "yes", "on", "1") for w in raw):
        return list(FORMATS)
    return [f for f in FORMATS if f in raw]


def write(ctx: Context, commit: str, formats: list[str], budget_s: float | None = None) -> dict[str, str]:
    """Write the notes of ``commit`` in ``formats``; returns {ref: note text}."""
    deadline = time.monotonic() + budget_s if budget_s is not None else None
    got = commit_lines(ctx, commit, deadline)
    out = {}
    for fmt in formats:
        text = render(ctx, got, fmt)
        write_text(ctx, commit, text + "\n", REF[fmt])
        out[REF[fmt]] = text
    return out


def budget(ctx: Context) -> float:
    try:
        return float(ctx.config("oxide.traceBudget") or DEFAULT_BUDGET_S)
    except ValueError:
        return DEFAULT_BUDGET_S


def after_commit(ctx: Context, commit: str) -> dict[str, str]:
    """The post-commit job's part: the configured formats, within the budget."""
    formats = configured(ctx)
    return write(ctx, commit, formats, budget(ctx)) if formats else {}


def after_rewrite(ctx: Context, pairs: dict[str, list[str]]) -> None:
    """Rewritten commits (new -> olds) get the formats configured or that an old one had."""
    git: Any = ctx.repo.git
    wanted = configured(ctx)
    for new, olds in pairs.items():
        had = [f for f in FORMATS if any(read_text(git, o, REF[f]) is not None for o in olds)]
        formats = [f for f in FORMATS if f in wanted or f in had]
        if formats:
            write(ctx, new, formats, budget(ctx))
