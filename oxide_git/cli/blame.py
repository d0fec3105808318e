"""`git oxide blame`: which session, agent and prompt wrote each line (or you)."""

from __future__ import annotations

import os
from typing import Any

import click

from . import main, make_context
from .output import ago, emit_json

_WHO_SHOWN = {"human": "human", "agent or user": "agent or user", "before oxide": "before oxide"}


def _line_range(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    first, sep, last = value.partition(",")
    try:
        start = int(first)
        if not sep or not last:
            end = 1 << 31
        elif last.startswith("+"):
            end = start + int(last[1:]) - 1
        else:
            end = int(last)
    except ValueError:
        raise click.BadParameter("give START,END or START,+COUNT (line numbers)", param_hint="-L") from None
    if start < 1 or end < start:
        raise click.BadParameter(f"{value} is not a range of lines", param_hint="-L")
    return start, end


@main.command()
@click.argument("file", required=False)
@click.option("-L", "lines", metavar="START,END", default=None,
              help="Only these lines (START,END or START,+COUNT), as git blame -L.")
@click.option("--rev", default=None, metavar="COMMIT", help="The file as it is at COMMIT, not the worktree's.")
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
    from ..errors import OxideError

    if rng is not None:
        if file or lines or rev or porcelain or summary:
            raise OxideError("--range takes no FILE, -L, --rev, --porcelain or --summary")
        from ..blame_range import blame_range

        res = blame_range(make_context(), rng)
        if as_json:
            emit_json(res.to_json())
        else:
            click.echo(res.markdown(), nl=False)
        return
    if not file:
        raise click.UsageError("give a FILE (or --range A..B)")
    if porcelain and (as_json or summary):
        raise OxideError("give one of --porcelain, --json, --summary")
    from ..blame import blame_file
    from ..blame import summary as summarise

    ctx = make_context()
    result = blame_file(ctx, os.path.abspath(file), rev=rev, lines=_line_range(lines))
    if summary:
        s = summarise(result)
        emit_json(s) if as_json else _print_summary(s)
    elif as_json:
        emit_json(result.to_json())
    elif porcelain:
        _print_porcelain(result)
    else:
        _print_text(result, ctx.now_ms)


def _print_text(result: Any, now_ms: int) -> None:
    rows = []
    for ln in result.lines:
        ident = result.id(ln.session_id) or (result.id(ln.commit) if ln.commit else None) or "-"
        shown = ln.agent if ln.who == "agent" else _WHO_SHOWN.get(ln.who, ln.who)
        rows.append((ident, shown or "agent", ago(ln.when_ms, now_ms) if ln.when_ms else "-", ln.number, ln.text))
    if not rows:
        return
    w = [max(len(str(r[i])) for r in rows) for i in range(4)]
    for ident, shown, age, n, text in rows:
        click.echo(f"{ident:<{w[0]}} ({shown:<{w[1]}} {age:>{w[2]}} {n:>{w[3]}}) {text}")


def _print_porcelain(result: Any) -> None:
    out = []
    for ln in result.lines:
        out.append(f"line {ln.number}\nwho {ln.who}\n")
        for key, value in (("session", ln.session_id), ("message", ln.message_id), ("agent", ln.agent),
                           ("model", ln.model), ("commit", ln.commit), ("checkpoint", ln.checkpoint),
                           ("before-checkpoint", ln.before_checkpoint), ("when", ln.when_ms)):
            if value is not None:
                out.append(f"{key} {value}\n")
        out.append(f"\t{ln.text}\n")
    click.echo("".join(out), nl=False)


def _print_summary(s: dict[str, Any]) -> None:
    total = s["lines"] or 1

    def pct(n: int) -> str:
        return f"{100 * n / total:5.1f}%"

    click.echo(f"{s['path']}: {s['lines']} line(s)")
    agents = ", ".join(f"{a} {n}" for a, n in s["by_agent"].items())
    click.echo(f"  agent          {s['agent']:>6}  {pct(s['agent'])}" + (f"  ({agents})" if agents else ""))
    for key, label in (("human", "human"), ("agent_or_user", "agent or user"), ("before_oxide", "before oxide")):
        click.echo(f"  {label:<13}  {s[key]:>6}  {pct(s[key])}")
    for sid, d in s["by_session"].items():
        click.echo(f"  session {sid} ({d['agent']}): {d['lines']}")
