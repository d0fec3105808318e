"""The interactive session picker of `git oxide resume`.

A line-oriented picker (it works in any terminal, over ssh, in tmux, and through a pty in tests):
type words to filter by title and message text (full-text index), a number to choose, `s` to
toggle the sort (updated/created), `a AGENT` / `b BRANCH` / `w` (all worktrees) to filter, empty
line to take the first. Without a terminal it prints a plain numbered list and picks nothing.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .output import ago, clip, short


def _latest_checkpoint(ctx: Any, session_id: str) -> str:
    """How the session's newest checkpoint stands: its id and when its code rewind expires."""
    from ..browse import list_checkpoints

    rows = list_checkpoints(ctx, session_id)
    if not rows:
        return "no checkpoint"
    top = rows[0]
    return f"checkpoint {short(top['id'])}: {top.get('expiry') or '-'}"


def _render(rows: list[dict[str, Any]], now_ms: int, sort: str, ctx: Any = None) -> None:
    for i, r in enumerate(rows[:20], 1):
        click.echo(f"{i:>3}. {short(r['id'])}  {r['agent']:<8} {r['branch'] or '-':<14} "
                   f"{ago(r[sort], now_ms):>9}  {r['message_count']:>4} msgs  "
                   f"{r['checkpoint_count']:>3} cps  {clip(r['title'] or r['first_prompt'], 50)}")
    if rows:
        top = rows[0]
        click.echo(f"     first: {clip(top['first_prompt'], 90)}")
        click.echo(f"     last:  {clip(top['last_message'], 90)}")
        click.echo(f"     worktree {top['worktree'] or '-'}, branch {top['branch'] or '-'}"
                   + (f", {_latest_checkpoint(ctx, top['id'])}" if ctx is not None else ""))


def pick(ctx: Any, *, all_worktrees: bool = False) -> str | None:
    from ..browse import list_sessions

    sort = "updated_at"
    agent = branch = None
    query = ""
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    while True:
        rows = list_sessions(ctx, all_worktrees=True, agent=agent)
        if branch:
            rows = [r for r in rows if r["branch"] == branch]
        if query:
            hits = {h["session_id"] for h in ctx.index.search(query, 500)}
            words = query.lower().split()
            rows = [r for r in rows if r["id"] in hits
                    or all(w in (r["title"] or "").lower() for w in words)]
        here = ctx.repo.worktree_id
        rows.sort(key=lambda r: r[sort] or "", reverse=True)
        rows.sort(key=lambda r: r["worktree"] != here)  # this worktree first
        if not all_worktrees:
            rows = [r for r in rows if r["worktree"] == here] or rows
        _render(rows, ctx.now_ms, sort, ctx)
        if not interactive:
            click.echo("hint: not a terminal; run `git oxide resume SESSION` with an id above", err=True)
            return None
        try:
            line = click.prompt(f"filter [{query}] sort={sort.split('_')[0]} (number, words, s, a AGENT, "
                                "b BRANCH, w, q)", default="", show_default=False).strip()
        except (click.Abort, EOFError):
            return None
        if line == "q":
            return None
        if line == "" and rows:
            return str(rows[0]["id"])
        if line.isdigit() and 1 <= int(line) <= min(len(rows), 20):
            return str(rows[int(line) - 1]["id"])
        if line == "s":
            sort = "created_at" if sort == "updated_at" else "updated_at"
        elif line == "w":
            all_worktrees = not all_worktrees
        elif line.startswith("a "):
            agent = line[2:].strip() or None
        elif line.startswith("b "):
            branch = line[2:].strip() or None
        else:
            query = line
