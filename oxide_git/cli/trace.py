"""`git oxide trace`: a commit's attribution as an Agent Trace record or a Git AI authorship log."""

from __future__ import annotations

import json

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import emit_json, status


@main.command()
@click.argument("rev", required=False, default="HEAD", metavar="[REV | A..B]")
@click.option("--format", "fmt", type=click.Choice(["agent-trace", "git-ai"]), default="agent-trace",
              show_default=True,
              help="An Agent Trace record (JSON) or a Git AI authorship log (authorship/3.0.0).")
@click.option("--write", is_flag=True,
              help="Store it as the commit's note on refs/notes/agent-trace or refs/notes/ai.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per commit: commit, format, ref, note.")
def trace(rev: str, fmt: str, write: bool, as_json: bool) -> None:
    """The attribution of the lines a commit (or each commit of A..B) added, as `blame` gives
    it, in a format other tools read: agent lines are `ai` with the model as provider/model,
    the human's `human`, a human edit of an agent's line `mixed`, the rest `unknown`.

    \b
    Without --write it prints (a range: one record per line, JSON Lines, or one log after a
    `commit SHA` line per commit, oldest first);
    `git config oxide.trace agent-trace,git-ai` writes both at every commit (the post-commit
    hook, within oxide.traceBudget seconds, 10 by default) and after amends and rebases.
    """
    from oxide_git.hooks import queue as hook_queue
    from oxide_git.ops.trace import commit_lines, commits_of, render
    from oxide_git.ops.trace_notes import REF
    from oxide_git.store.notes import write_text

    ctx = make_context()
    # a commit just made: its note (which names the checkpoint its lines are told by) is written by
    # the post-commit hook's background job; without it they would all say `unknown`
    hook_queue.wait_idle(ctx.repo.common_dir, 10)
    rows = []
    for commit in commits_of(ctx, rev):
        text = render(ctx, commit_lines(ctx, commit), fmt)
        if write:
            write_text(ctx, commit, text + "\n", REF[fmt])
        rows.append({"commit": commit, "format": fmt, "ref": REF[fmt] if write else None,
                     "note": json.loads(text) if fmt == "agent-trace" else text})
    if as_json:
        emit_json(rows)
    elif write:
        status(f"wrote {len(rows)} note(s) on {REF[fmt]}")
    elif fmt == "agent-trace":
        for r in rows:
            click.echo(json.dumps(r["note"], ensure_ascii=False, indent=None if ".." in rev else 2))
    else:
        for r in rows:
            if ".." in rev:
                click.echo(f"commit {r['commit']}")
            click.echo(r["note"])
