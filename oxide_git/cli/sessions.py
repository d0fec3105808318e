"""Session commands: list, show, search."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from . import main, make_context
from .output import ago, clip, emit_json, emit_json_lines, short, stream_document, table


@main.command(name="list")
@click.option("--all", "all_", is_flag=True, help="Sessions of every worktree, not just this one.")
@click.option("--agent", default=None, help="Only sessions of this agent.")
@click.option("--tree", is_flag=True, help="Show forks under their parent.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def list_(all_: bool, agent: str | None, tree: bool, as_json: bool) -> None:
    """List sessions, most recently updated first."""
    from ..browse import list_sessions, list_sessions_json, session_tree

    ctx = make_context()
    if as_json and not tree:
        emit_json_lines(list_sessions_json(ctx, all_worktrees=all_, agent=agent))
        return
    rows = list_sessions(ctx, all_worktrees=all_, agent=agent)
    if as_json:
        emit_json([r for _depth, r in session_tree(rows)])
        return
    ordered = session_tree(rows) if tree else [(0, r) for r in rows]
    table(["ID", "AGENT", "MSGS", "WORKTREE", "BRANCH", "UPDATED", "TITLE"],
          [[short(r["id"]), r["agent"], r["message_count"], r["worktree"] or "-",
            r["branch"] or "-", ago(r["updated_at"], ctx.now_ms),
            ("  " * depth + ("└ " if depth else "")) + clip(r["title"] or r["first_prompt"], 60)]
           for depth, r in ordered])


@main.command()
@click.argument("session")
@click.option("--json", "as_json", is_flag=True, help="Print session and messages as JSON.")
@click.option("--full", is_flag=True, help="Print every part in full (default: clipped).")
def show(session: str, as_json: bool, full: bool) -> None:
    """Show one session with its messages and parts."""
    from ..browse import session_json
    from ..browse import show as do_show

    ctx = make_context()
    shown = do_show(ctx, session)
    if as_json:
        stream_document(session_json(shown.session, shown.count, shown.children), shown.json,
                        checkpoints=shown.checkpoints)
        return
    s = shown.session
    click.echo(f"session {s.id}")
    click.echo(f"agent:    {s.agent} ({s.native_id or '-'})")
    click.echo(f"title:    {s.title or '-'}")
    click.echo(f"worktree: {s.worktree or '-'}  branch: {s.branch or '-'}  cwd: {s.cwd or '-'}")
    if s.parent_id:
        click.echo(f"parent:   {s.parent_id} at message {s.fork_message_id or '-'}")
    if shown.children:
        click.echo(f"forks:    {', '.join(short(c) for c in shown.children)}")
    if s.redactions:
        click.echo("redacted: " + ", ".join(f"{k} {v}" for k, v in sorted(s.redactions.items())))
    click.echo(f"messages: {shown.count}  checkpoints: {len(shown.checkpoints)}")
    width = 10**9 if full else 300
    for seq, m in shown.messages:
        mark = " (compacted)" if m.compacted else ""
        click.echo(f"\n[{seq}] {m.role} {short(m.id, 20)}{mark}")
        for p in m.parts:
            click.echo("  " + _render_part(p.type, p.data, width))


def _render_part(kind: str, d: Mapping[str, Any], width: int) -> str:
    if kind in ("text", "reasoning"):
        label = "" if kind == "text" else "(reasoning) "
        return label + clip(d.get("text"), width)
    if kind == "tool_call":
        return f"→ {d.get('name')} [{d.get('call_id')}] {clip(d.get('input'), width)}"
    if kind == "tool_result":
        err = " ERROR" if d.get("is_error") else ""
        return f"← [{d.get('call_id')}]{err} {clip(d.get('output'), width)}"
    if kind == "compaction":
        return f"(compaction) {clip(d.get('summary'), width)}"
    if kind in ("file", "image", "patch"):
        return f"({kind}) {clip(d.get('path') or d.get('mime') or d.get('text'), width)}"
    return f"({kind}: {d.get('kind')}) {clip(d.get('raw'), min(width, 120))}"


@main.command()
@click.argument("query")
@click.option("-n", "--limit", default=50, show_default=True, help="At most this many hits.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def search(query: str, limit: int, as_json: bool) -> None:
    """Full-text search over every message of every session."""
    from ..browse import search as do_search

    hits = do_search(make_context(), query, limit)
    if as_json:
        emit_json(hits)
        return
    table(["SESSION", "MSG", "TITLE", "MATCH"],
          [[short(h["session_id"]), h["seq"], clip(h["title"], 30), clip(h["snippet"], 80)] for h in hits])
