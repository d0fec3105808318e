"""`git oxide status` (this worktree's current session, and why) and `git oxide switch SESSION`."""

from __future__ import annotations

from typing import Any

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import ago, emit_json, status
from oxide_git.core.titles import display


def _describe(ctx: Any, session_id: str) -> dict[str, Any] | None:
    rows = ctx.index.session_rows(ids=[session_id])
    return rows[0] if rows else None


def current_line(ctx: Any, session_id: str | None) -> str:
    """``session 019c5296 (claude: title)``, or that there is none."""
    if not session_id:
        return "no session"
    row = _describe(ctx, session_id)
    short = ctx.index.session_prefix(session_id)
    if row is None:
        return f"session {short} (no longer in the store)"
    return f"session {short} ({row['agent']}: {display(row['title'], row['first_prompt'], session_id, 50)})"


@main.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def status_(as_json: bool) -> None:
    """Show this worktree's current session (what checkpoints and commit notes attach to) and why."""
    from oxide_git.store.writes import current_session, current_session_why

    ctx = make_context()
    repo = ctx.repo
    cur = current_session(ctx)
    why = current_session_why(ctx)
    row = _describe(ctx, cur) if cur else None
    if as_json:
        emit_json({"worktree": repo.worktree_id, "worktree_path": str(repo.workdir),
                   "branch": repo.branch(), "current_session": cur, "why": why["why"],
                   "set_at": why["at"], "session": row})
        return
    click.echo(f"worktree {repo.worktree_id} ({repo.workdir}), branch {repo.branch()}")
    if not cur:
        click.echo("No current session: a checkpoint taken now is tied to no session.")
        click.echo("hint: `git oxide switch SESSION` makes one current; "
                   "`git oxide checkpoint --session SESSION` ties a single checkpoint")
        return
    click.echo(f"Current session: {current_line(ctx, cur)}")
    if row is not None:
        click.echo(f"  updated {ago(row['updated_at'], ctx.now_ms)}, worktree {row['worktree'] or '-'}, "
                   f"branch {row['branch'] or '-'}")
        if row["worktree"] != repo.worktree_id:
            where = row["cwd"] or "an unknown folder"
            click.echo(f"  note: it was recorded outside this worktree (in {where})")
    reason = why["why"] or "it was set by an import, a resume or an agent hook"
    when = f" ({ago(why['at'], ctx.now_ms)})" if isinstance(why["at"], int) else ""
    click.echo(f"  why: {reason}{when}")
    click.echo("  `git oxide checkpoint`, the pre-commit checkpoint and commit notes attach to it.")
    click.echo("hint: `git oxide switch SESSION` to change it (`git oxide switch --none` for none), "
               "or `--session SESSION` for one checkpoint")


@main.command()
@click.argument("session", required=False)
@click.option("--none", "none_", is_flag=True, help="No current session (checkpoints tie to none).")
def switch(session: str | None, none_: bool) -> None:
    """Make SESSION this worktree's current session (see `git oxide status`)."""
    from oxide_git.store.writes import set_current_session

    if bool(session) == none_:
        raise click.UsageError("give a SESSION, or --none")
    ctx = make_context()
    target = ctx.index.resolve_session(session) if session else None
    set_current_session(ctx, target, why="chosen with `git oxide switch`" if target else None)
    status(f"Current session of this worktree: {current_line(ctx, target)}")
