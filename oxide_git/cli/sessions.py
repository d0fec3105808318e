"""Session commands: list, show, search."""

from __future__ import annotations

from typing import Any

import click

from oxide_git.agents import AGENT_NAMES
from oxide_git.cli import main, make_context
from oxide_git.cli.output import cid, counted, emit_bytes, emit_json, sid, status, stream_document
from oxide_git.core.titles import display


def _agent_option(agent: str | None) -> str | None:

    if agent is not None and agent not in AGENT_NAMES:
        import difflib

        close = difflib.get_close_matches(agent, AGENT_NAMES, 1)
        raise click.BadParameter(
            f"no agent {agent!r}" + (f"; did you mean {close[0]!r}?" if close else "")
            + f" (agents: {', '.join(AGENT_NAMES)})", param_hint="--agent")
    return agent


@main.command(name="list")
@click.option("--all", "all_", is_flag=True, help="Sessions of every worktree, not just this one.")
@click.option("--agent", default=None, help=f"Only sessions of this agent ({', '.join(AGENT_NAMES)}).")
@click.option("--tree", is_flag=True, help="Show forks under their parent.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def list_(all_: bool, agent: str | None, tree: bool, as_json: bool) -> None:
    """List this worktree's sessions, most recently updated first (--all: every worktree).

    MSGS counts messages, the conversation (prompts, answers, tool calls and results), as
    `show` does; `--json`'s message_count counts records (those kept whole too, such as
    progress events). `man git-oxide`, COUNTING, says how everything is counted.
    """
    from oxide_git.ops.browse import list_sessions, list_sessions_json
    from oxide_git.ops.list_table import listing, tree_order

    agent = _agent_option(agent)
    ctx = make_context()
    if as_json and not tree:
        emit_bytes(list_sessions_json(ctx, all_worktrees=all_, agent=agent))
        return
    if as_json:
        rows = list_sessions(ctx, all_worktrees=all_, agent=agent)
        emit_json([r for _depth, r in tree_order(rows, lambda r: r["id"], lambda r: r.get("parent_id"))])
        return
    shown = listing(ctx, all_worktrees=all_, agent=agent, tree=tree)
    click.echo(shown.text, nl=False)
    if shown.note:
        status(shown.note)


@main.command()
@click.argument("session")
@click.option("--json", "as_json", is_flag=True, help="Print session and messages as JSON.")
@click.option("--full", is_flag=True,
              help="Every message and record in full, structured values as JSON (default: the conversation).")
@click.option("--no-pager", is_flag=True, help="Print straight to the terminal, not through a pager.")
def show(session: str, as_json: bool, full: bool, no_pager: bool) -> None:
    """Show one session: the conversation, with tool results and reasoning folded.

    `--full` shows every record as it was imported; `--json` prints it all as JSON. On a
    terminal the output goes through git's pager (core.pager, GIT_PAGER, PAGER, less).
    """
    from oxide_git.cli.pager import paged
    from oxide_git.ops.browse import show as do_show

    ctx = make_context()
    shown = do_show(ctx, session)
    with paged(no_pager):
        _print_shown(ctx, shown, as_json, full)


def _print_shown(ctx: Any, shown: Any, as_json: bool, full: bool) -> None:
    from oxide_git.export.render_text import conversation
    from oxide_git.ops.browse import session_json

    if as_json:
        stream_document(session_json(shown.session, shown.count, shown.children), shown.json,
                        checkpoints=shown.checkpoints)
        return
    s = shown.session
    first = ctx.index.query("SELECT first_prompt FROM sessions WHERE id=?", (s.id,))
    real = ctx.index.real_message_counts([s.id]).get(s.id, 0)
    click.echo(f"session {sid(s.id)} ({s.id})")
    click.echo(f"title:    {display(s.title, first[0][0] if first else None, s.id)}")
    click.echo(f"agent:    {s.agent}, its id {s.native_id or '-'}")
    click.echo(f"worktree: {s.worktree or '-'}  branch: {s.branch or '-'}  cwd: {s.cwd or '-'}")
    if s.parent_id:
        at = s.extra.get("fork_seq")
        click.echo(f"parent:   {sid(s.parent_id)}, forked "
                   + (f"before its #{at}" if isinstance(at, int) else f"at {s.fork_message_id or '-'}"))
    if shown.children:
        click.echo(f"forks:    {', '.join(sid(c) for c in shown.children)}")
    if s.redactions:
        click.echo("redacted: " + ", ".join(f"{k} {v}" for k, v in sorted(s.redactions.items())))
    cps = ", ".join(cid(c["id"]) for c in shown.checkpoints[:5])
    cps += " …" if len(shown.checkpoints) > 5 else ""
    click.echo(f"messages: {counted(real, shown.count)}"
               + f"  checkpoints: {len(shown.checkpoints)}" + (f" ({cps})" if cps else ""))
    from oxide_git.ops.usage import header_line

    spent = header_line(ctx, s.id)
    if spent:
        click.echo(f"usage:    {spent}")
    hidden: dict[str, int] = {}
    for line in conversation(shown.messages, full=full, hidden=hidden):
        click.echo(line)
    if hidden:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(hidden.items(), key=lambda kv: -kv[1]))
        click.echo(f"\n({sum(hidden.values())} of the {shown.count} records are not shown: {kinds}; "
                   f"`git oxide show {sid(s.id)} --full` shows them)")


@main.command()
@click.argument("query")
@click.option("-n", "--limit", default=50, show_default=True, help="At most this many hits.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def search(query: str, limit: int, as_json: bool) -> None:
    """Full-text search over every message of every session."""
    from oxide_git.ops.search_command import output

    out, err = output(make_context(), query, limit, as_json)
    click.echo(out, nl=False)
    click.echo(err, nl=False, err=True)

