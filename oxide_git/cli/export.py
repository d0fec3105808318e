"""`git oxide export`: sessions as Markdown, HTML, JSON or JSONL, to stdout or a file."""

from __future__ import annotations

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import status, warn


@main.command()
@click.argument("sessions", nargs=-1)
@click.option("--commit", "commit", default=None, metavar="SHA", help="Sessions behind this commit.")
@click.option("--range", "rng", default=None, metavar="A..B", help="Sessions behind these commits.")
@click.option("--format", "fmt", default="markdown", show_default=True,
              type=click.Choice(["markdown", "html", "json", "jsonl"]))
@click.option("-o", "--output", default=None, metavar="FILE", help="Write here instead of stdout.")
def export(sessions: tuple[str, ...], commit: str | None, rng: str | None, fmt: str,
           output: str | None) -> None:
    """Export sessions (default: the current one) for reading or for tools.

    \b
    --commit and --range find the sessions through the commit notes
    (refs/notes/oxide) and Oxide-Session trailers, e.g. in CI:
      git fetch origin 'refs/oxide/*:refs/oxide/*' 'refs/notes/oxide:refs/notes/oxide'
      git oxide export --range origin/main..HEAD --format markdown >> "$GITHUB_STEP_SUMMARY"
    With --range, who wrote the range's lines comes first (`git oxide blame --range`).
    The output is redacted and deterministic; JSON follows docs/export.schema.json.
    """
    import sys

    from oxide_git.core.errors import OxideError
    from oxide_git.export.sessions import export as do_export
    from oxide_git.export.sessions import resolve

    if (commit or rng) and sessions:
        raise OxideError("give sessions, or --commit, or --range, not several")
    ctx = make_context()
    ids, problems = resolve(ctx, list(sessions), commit, rng)
    for p in problems:
        warn(p)
    summary = None
    if rng:
        from oxide_git.blame.range import blame_range

        summary = blame_range(ctx, rng)  # who wrote the range's lines, first
    if output:
        with open(output, "w", encoding="utf-8", newline="\n") as f:
            res = do_export(ctx, ids, fmt, f, blame=summary)
        status(f"Exported {len(ids)} session(s) to {output}")
    else:
        res = do_export(ctx, ids, fmt, sys.stdout, blame=summary)
    if res.redactions:
        status("redacted: " + ", ".join(f"{k} {v}" for k, v in res.redactions.items()))
