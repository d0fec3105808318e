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

from . import __version__

INSTRUCTIONS = (
    "git oxide keeps every AI coding-agent session of this repository (Claude Code, Codex, OpenCode, "
    "Aider and more) in its git, with a checkpoint of the worktree at every prompt. Use `search` to "
    "find past prompts, answers and tool output, `show_session` to read a session, `blame` to learn which "
    "session and prompt wrote lines of a file, `checkpoints` for a session's or a file's snapshots, "
    "and `memory_read` for the project memory.")


def _context() -> Any:
    from .context import Context
    from .repo import find_repo

    now = os.environ.get("OXIDE_NOW")
    now_ms = int(now) if now and now.isdigit() else int(time.time() * 1000)
    return Context(find_repo(Path.cwd()), now_ms, dict(os.environ))


def answer(name: str, arguments: dict[str, Any], allow_writes: bool) -> tuple[str, bool]:
    """One tool call: (the text the agent gets, is it an error)."""
    from . import failure
    from .errors import OxideError
    from .mcp_tools import call

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


def _server_half_of_sdk() -> None:
    """Make ``import mcp.server.lowlevel`` load the SDK's server modules without running the
    ``__init__`` of ``mcp`` and ``mcp.server``, which import its client and FastMCP (httpx-sse,
    starlette, uvicorn, pydantic-settings): about 80 ms of CPU at every start of the server. The
    packages are entered in ``sys.modules`` as bare packages over the same folders; anything that
    goes wrong leaves the normal import to run."""
    import importlib.machinery
    import importlib.util
    import sys
    import types

    if "mcp" in sys.modules:
        return
    # httpx (imported by the SDK's sessions) imports its command-line tool when click, pygments
    # and rich are installed (~110 ms more); the server never runs it, and httpx does without it.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    try:
        spec = importlib.util.find_spec("mcp")
    except (ImportError, ValueError):
        return
    if spec is None or not spec.submodule_search_locations:
        return
    root = Path(next(iter(spec.submodule_search_locations)))
    if not all((root / "server" / f).is_file() for f in ("lowlevel/server.py", "stdio.py")):
        return
    for name, folder in (("mcp", root), ("mcp.server", root / "server")):
        pkg = types.ModuleType(name)
        pkg.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        pkg.__spec__.submodule_search_locations = [str(folder)]
        pkg.__path__ = [str(folder)]
        pkg.__package__ = name
        sys.modules[name] = pkg


def _sdk() -> tuple[Any, Any, Any]:
    """(``mcp.types``, the low-level ``Server``, ``stdio_server``)."""
    import sys

    _server_half_of_sdk()
    try:
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError:  # another layout of the SDK: import it whole
        for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
            del sys.modules[name]
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
    import anyio

    from .mcp_tools import tools

    types, Server, stdio_server = _sdk()

    server = Server("git-oxide", version=__version__, instructions=INSTRUCTIONS)

    @server.list_tools()
    async def list_tools() -> list[Any]:
        return [types.Tool(name=t.name, title=t.title, description=t.description, inputSchema=t.schema,
                           annotations=types.ToolAnnotations(
                               title=t.title, readOnlyHint=not t.writes, destructiveHint=False,
                               idempotentHint=not t.writes, openWorldHint=False))
                for t in tools(allow_writes)]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        text, failed = answer(name, arguments or {}, allow_writes)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=failed)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
