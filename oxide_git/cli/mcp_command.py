"""`git oxide mcp`: serve this repository's sessions to an agent as MCP tools (stdio)."""

from __future__ import annotations

import click

from oxide_git.cli import main


@main.command()
@click.option("--allow-writes", is_flag=True,
              help="Also offer memory_add (appends to the project memory); read-only without it.")
def mcp(allow_writes: bool) -> None:
    """Serve this repository's sessions to an agent over MCP (stdio).

    \b
    Tools: search, show_session, blame, checkpoints, memory_read
    (and memory_add with --allow-writes). Results are redacted as
    exports are and bounded in size, with a cursor for more.
    An agent starts this itself: `git oxide init --mcp claude|codex|opencode`
    registers it in that agent's configuration.
    """
    from oxide_git.mcp.server import serve

    serve(allow_writes=allow_writes)
