"""`git oxide blame`: which session, agent and prompt wrote each line (or you)."""

from __future__ import annotations

import os

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import emit_json


def _line_range(value: str | None) -> tuple[int, int] | None:
    from oxide_git.blame.command import line_range

    if value is None:
        return None
    got = line_range(value)
    if got is None:
        raise click.BadParameter(f"{value} is not START,END or START,+COUNT (line numbers from 1)",
                                 param_hint="-L")
    return got


@main.command()
@click.argument("file", required=False)
@click.option("-L", "lines", metavar="START,END", default=None,
              help="Only these lines (START,END or START,+COUNT), as git blame -L.")
@click.option("--rev", default=None, metavar="COMMIT",
              help="The file as it is at COMMIT, not the worktree's.")
@click.option("--porcelain", is_flag=True, help="One block of key-value lines per line, for tools.")
@click.option("--json", "as_json", is_flag=True, help="The lines (or the summary) as JSON.")
@click.option("--summary", is_flag=True, help="Lines by agent, by session, yours and unknown.")
@click.option("--range", "rng", default=None, metavar="A..B",
              help="Who wrote the lines a range of commits added, in Markdown (CI step summaries).")
def blame(file: str | None, lines: str | None, rev: str | None, porcelain: bool, as_json: bool,
          summary: bool, rng: str | None) -> None:
    """Show which session, agent and prompt wrote each line of FILE.

    \b
    Each line is one of: the agent (its session, prompt and model: the turn
    whose tool calls wrote it), human (written outside the agent's tool
    calls), agent or user (both changed it in one turn and nothing tells
    which), before oxide (older than the first checkpoint that covers it).
    Committed lines go through `git blame` and the commit's oxide note.
    \b
      git oxide blame src/app.py -L 10,40
      git oxide blame --range origin/main..HEAD >> "$GITHUB_STEP_SUMMARY"
    """
    from oxide_git.core.errors import OxideError

    if rng is not None:
        if file or lines or rev or porcelain or summary:
            raise OxideError("--range takes no FILE, -L, --rev, --porcelain or --summary")
        from oxide_git.blame.range import blame_range

        res = blame_range(make_context(), rng)
        if as_json:
            emit_json(res.to_json())
        else:
            click.echo(res.markdown(), nl=False)
        return
    if not file:
        raise click.UsageError("give a FILE (or --range A..B)")
    from oxide_git.blame.attribution import blame_file
    from oxide_git.blame.command import form_of, render

    form = form_of(porcelain, as_json, summary)
    if form is None:
        raise OxideError("give one of --porcelain, --json, --summary")
    ctx = make_context()
    result = blame_file(ctx, os.path.abspath(file), rev=rev, lines=_line_range(lines))
    click.echo(render(result, form, ctx.now_ms), nl=False)
    if result.missing:
        from oxide_git.blame.result import missing_hint

        click.echo(missing_hint(result.missing), nl=False, err=True)
