"""`git oxide memory`: project memory kept in git (MEMORY.md plus topic files)."""

from __future__ import annotations

import sys

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import ago, emit_json, short, status, table


@main.group(context_settings={"help_option_names": ["-h", "--help"]})
def memory() -> None:
    """Project memory on refs/oxide/memory: one commit per write, naming its session.

    \b
    show [TOPIC], add TOPIC [TEXT|-], rm TOPIC, log,
    import --from claude, export --into claude
    """


@memory.command("show")
@click.argument("topic", required=False)
def show(topic: str | None) -> None:
    """Print MEMORY.md, or TOPIC's file."""
    from oxide_git.ops.memory import show as do_show

    click.echo(do_show(make_context(), topic), nl=False)


@memory.command("add")
@click.argument("topic")
@click.argument("text", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the new commit as JSON.")
def add(topic: str, text: str | None, as_json: bool) -> None:
    """Append TEXT (or stdin with `-` or no TEXT) to TOPIC and list it in MEMORY.md."""
    from oxide_git.ops.memory import add as do_add

    if text is None or text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise click.UsageError("nothing to add: give TEXT or pipe it on stdin")
    oid = do_add(make_context(), topic, text)
    if as_json:
        emit_json({"commit": oid, "topic": topic})
        return
    status(f"Added to {topic} ({short(oid)})")


@memory.command("rm")
@click.argument("topic")
@click.option("--json", "as_json", is_flag=True, help="Print the new commit as JSON.")
def rm(topic: str, as_json: bool) -> None:
    """Remove TOPIC (its history stays in `memory log`)."""
    from oxide_git.ops.memory import rm as do_rm

    oid = do_rm(make_context(), topic)
    if as_json:
        emit_json({"commit": oid, "topic": topic})
        return
    status(f"Removed {topic} ({short(oid)})")


@memory.command("log")
@click.option("-n", "--limit", type=int, default=None, help="At most this many writes.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def log(limit: int | None, as_json: bool) -> None:
    """Memory writes, newest first, with the session and message that made them."""
    from oxide_git.core.model import to_iso
    from oxide_git.ops.memory import log as do_log

    ctx = make_context()
    writes = do_log(ctx, limit)
    if as_json:
        emit_json([{**w.to_dict(), "at": to_iso(w.at)} for w in writes])
        return
    table(["COMMIT", "WHEN", "SESSION", "MESSAGE", "WHAT"],
          [[short(w.id), ago(to_iso(w.at), ctx.now_ms), short(w.session_id), short(w.message_id),
            w.summary] for w in writes])


@memory.command("import")
@click.option("--from", "source", type=click.Choice(["claude"]), required=True,
              help="Whose memory to import.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def import_(source: str, as_json: bool) -> None:
    """Import Claude Code's auto memory (projects/<encoded cwd>/memory/*.md) in one commit."""
    from oxide_git.ops.memory import import_claude

    res = import_claude(make_context())
    if as_json:
        emit_json(res)
        return
    status(f"Imported {len(res['files'])} file(s) from {res['from']}")


@memory.command("export")
@click.option("--into", "target", type=click.Choice(["claude"]), required=True,
              help="Where to write the memory.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def export(target: str, as_json: bool) -> None:
    """Write the memory where Claude Code reads its auto memory."""
    from oxide_git.ops.memory import export_claude

    res = export_claude(make_context())
    if as_json:
        emit_json(res)
        return
    status(f"Wrote {len(res['files'])} file(s) into {res['into']}")
