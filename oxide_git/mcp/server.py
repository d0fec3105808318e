"""`git oxide mcp`: this repository's sessions as MCP tools, served over stdio with the official
SDK's low-level ``Server`` (``mcp_tools`` declares the tools and runs them).

stdout is the protocol: nothing else may print there (logs go to stderr and ``oxide.log``). The
SDK is imported only here, when the server starts; the index is opened per call, so sessions
imported while the agent runs are found by its next call.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from oxide_git import __version__

INSTRUCTIONS = (
    "git oxide keeps every AI coding-agent session of this repository (Claude Code, Codex, OpenCode, "
    "Aider and more) in its git, with a checkpoint of the worktree at every prompt. Use `search` to "
    "find past prompts, answers and tool output, `show_session` to read a session, `blame` to learn which "
    "session and prompt wrote lines of a file, `checkpoints` for a session's or a file's snapshots, "
    "and `memory_read` for the project memory.")


def _context() -> Any:
    from oxide_git.git.repo import find_repo
    from oxide_git.store.context import Context

    now = os.environ.get("OXIDE_NOW")
    now_ms = int(now) if now and now.isdigit() else int(time.time() * 1000)
    return Context(find_repo(Path.cwd()), now_ms, dict(os.environ))


def answer(name: str, arguments: dict[str, Any], allow_writes: bool) -> tuple[str, bool]:
    """One tool call: (the text the agent gets, is it an error)."""
    from oxide_git.core.errors import OxideError
    from oxide_git.git import failure
    from oxide_git.mcp.tools import call, check_arguments, tools

    tool = next((t for t in tools(allow_writes) if t.name == name), None)
    problem = None if tool is None else check_arguments(tool.schema, arguments)
    if problem is not None:  # as the SDK's own validation said it
        return f"Input validation error: {problem}", True
    ctx = None
    try:
        ctx = _context()
        result = call(ctx, name, arguments, allow_writes=allow_writes)
    except OxideError as e:
        return f"error: {e.message}" + (f"\nhint: {e.hint}" if e.hint else ""), True
    except Exception:
        where = failure.log_unexpected()
        return "error: unexpected error in git oxide" + (f" (details in {where})" if where else ""), True
    finally:
        if ctx is not None:
            ctx.close()
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str), False


def _sdk() -> tuple[Any, Any, Any]:
    """(``mcp.types``, the low-level ``Server``, ``stdio_server``), imported through the SDK's
    public modules. pydantic's documented ``PYDANTIC_DISABLE_PLUGINS`` spares reading every
    installed package's entry points: the server's models want no plugin."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    return types, Server, stdio_server


def main(argv: list[str]) -> int | None:
    """`git oxide mcp [--allow-writes]` without click (the console script's fast path); None for
    anything else (``-h``...), which click then parses."""
    if any(a not in ("--allow-writes",) for a in argv):
        return None
    serve(allow_writes="--allow-writes" in argv)
    return 0


def serve(*, allow_writes: bool = False) -> None:
    """Serve until the agent closes stdin."""
    import gc

    # The SDK's import makes ~200 pydantic model classes and their tables: the cyclic collector's
    # passes over them while they are made free next to nothing. Off until the server is made,
    # then what is there is kept out of later passes (``freeze``), and the collector runs again.
    collecting = gc.isenabled()
    gc.disable()
    import anyio

    from oxide_git.mcp.tools import tools

    mcp_types, Server, stdio_server = _sdk()

    server = Server("git-oxide", version=__version__, instructions=INSTRUCTIONS)

    @server.list_tools()
    async def list_tools() -> list[Any]:
        return [mcp_types.Tool(name=t.name, title=t.title, description=t.description, inputSchema=t.schema,
                               annotations=mcp_types.ToolAnnotations(
                                   title=t.title, readOnlyHint=not t.writes, destructiveHint=False,
                                   idempotentHint=not t.writes, openWorldHint=False))
                for t in tools(allow_writes)]

    @server.call_tool(validate_input=False)  # ``answer`` checks the arguments
    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        text, failed = answer(name, arguments or {}, allow_writes)
        content = [mcp_types.TextContent(type="text", text=text)]
        return mcp_types.CallToolResult(content=content, isError=failed)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    if collecting:
        gc.freeze()
        gc.enable()
    anyio.run(run)
