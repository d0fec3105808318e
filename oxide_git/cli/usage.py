"""`git oxide usage`: tokens and cost per session, agent, model or day."""

from __future__ import annotations

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import emit_json, sid, status, table

_HEAD = {"session": ["ID", "AGENT", "MODEL"], "agent": ["AGENT"], "model": ["MODEL"], "day": ["DAY"]}


@main.command()
@click.option("--by", "by", type=click.Choice(["session", "agent", "model", "day"]), default="session",
              show_default=True, help="One row per session, agent, model or day (UTC).")
@click.option("--since", default=None, metavar="DATE",
              help="Only what was spent from that day on: 2026-12-01, an ISO time, or 7d / 2w ago.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def usage(by: str, since: str | None, as_json: bool) -> None:
    """Tokens (input, output, cache read, cache write) and cost of every session of the store.

    From what the agents recorded, each response once, however its agent split it over records
    (every worktree's sessions; a fork's copies count in its parent). The cost is
    the agent's own figure where it recorded one in USD, else the tokens priced from the
    table in the package (`git config oxide.prices FILE` or OXIDE_PRICES=FILE override it);
    `-` (null in JSON) where a model has no price.
    """
    from oxide_git.ops.usage import TOKENS, cost_text, report, since_day, total

    ctx = make_context()
    rows = report(ctx, by, since_day(since, ctx.now_ms) if since else None)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        status("No usage recorded" + (" since then" if since else "")
               + "; `git oxide import` brings in the agents' sessions")
        return

    def key(r: dict[str, object]) -> list[object]:
        if by == "session":
            return [sid(str(r["session"])), r["agent"] or "-", r["model"] or "-"]
        return [r[by] or "-"]

    def nums(r: dict[str, object]) -> list[str]:
        return [f"{r[k]:,}" for k in TOKENS] + [cost_text(r["cost_usd"])]  # type: ignore[arg-type]

    t = total(rows)
    pad = [""] * (len(_HEAD[by]) - 1)
    heads = ["INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST"]
    cells = [nums(r) for r in rows] + [nums(t)]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    cells = [[v.rjust(w) for v, w in zip(c, widths, strict=True)] for c in cells]  # numbers right-aligned
    table([*_HEAD[by], *(h.rjust(w) for h, w in zip(heads, widths, strict=True))],
          [[*key(r), *c] for r, c in zip(rows, cells, strict=False)] + [["total", *pad, *cells[-1]]])
