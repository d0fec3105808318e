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
import types
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
    from .mcp_tools import call, check_arguments, tools

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


class _Deferred(types.ModuleType):
    """A module imported when first used: the SDK's server imports jsonschema (for the input
    validation ``answer`` does itself) and, through its sessions, httpx (for one status code of a
    timed-out request), ~45 ms of CPU at every start for what a run most often never touches.
    Any attribute looked up (``__path__`` by a submodule's import too) imports the real module."""

    def __getattr__(self, attr: str) -> Any:
        import importlib
        import sys

        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, attr)


DEFERRED = ("jsonschema", "httpx")


class _DeferredFunctions(_Deferred):
    """A ``_Deferred`` module whose ``functions`` are there before it is imported: each imports
    the real module when it is called. pydantic takes ``version`` and ``entry_points`` from
    ``importlib.metadata`` when its modules are imported (for email-validator's version and
    plugins, which the server never asks for: plugins are off), and that import reads in
    ``email``, ``zipfile`` and ``csv`` (39 modules): ~10 ms of CPU at every start."""

    def __init__(self, name: str, functions: tuple[str, ...], path: list[str] | None) -> None:
        super().__init__(name)
        if path is not None:  # a package: ``from name import fn`` looks for ``__path__`` first
            self.__dict__["__path__"] = path
        for fn in functions:
            self.__dict__[fn] = self._later(fn)

    def _later(self, fn: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.__getattr__(fn)(*args, **kwargs)  # the real function (and module) from now on
        call.__name__ = call.__qualname__ = fn
        return call


def _defer_functions(name: str, functions: tuple[str, ...]) -> None:
    """``name`` (a submodule of a package already imported) as a ``_DeferredFunctions`` in
    ``sys.modules`` and on its package, as an import would have put it."""
    import importlib
    import importlib.util
    import sys

    if name in sys.modules:
        return
    parent, _, child = name.rpartition(".")
    package = importlib.import_module(parent)
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None:
        return
    path = list(spec.submodule_search_locations) if spec.submodule_search_locations is not None else None
    lazy = _DeferredFunctions(name, functions, path)
    sys.modules[name] = lazy
    setattr(package, child, lazy)


def _server_half_of_sdk() -> None:
    """Make ``import mcp.server.lowlevel`` load the SDK's server modules without running the
    ``__init__`` of ``mcp`` and ``mcp.server``, which import its client and FastMCP (httpx-sse,
    starlette, uvicorn, pydantic-settings): about 80 ms of CPU at every start of the server. The
    packages are entered in ``sys.modules`` as bare packages over the same folders; anything that
    goes wrong leaves the normal import to run. jsonschema and httpx are ``_Deferred``, and
    pydantic looks for no plugins (its ``PYDANTIC_DISABLE_PLUGINS``: reading every installed
    package's entry points costs ~6 ms, and the server's models want none)."""
    import importlib.machinery
    import importlib.util
    import sys

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
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    _defer_pydantic_builds()
    for lazy in DEFERRED:
        if lazy not in sys.modules:
            sys.modules[lazy] = _Deferred(lazy)
    _defer_functions("importlib.metadata", ("version", "entry_points"))
    for name, folder in (("mcp", root), ("mcp.server", root / "server")):
        pkg = types.ModuleType(name)
        pkg.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        pkg.__spec__.submodule_search_locations = [str(folder)]
        pkg.__path__ = [str(folder)]
        pkg.__package__ = name
        sys.modules[name] = pkg


def _defer_pydantic_builds() -> None:
    """Let pydantic build each of the SDK's ~200 models when it is first used, not when its class
    is made (``defer_build``, pydantic's own option, as the default of every model): the models a
    run never validates or dumps (the client's side of the protocol, tasks, sampling, elicitation)
    are never built, ~20 ms of CPU at every start. The default lives in a private table of
    pydantic's; where it is not (another pydantic), the models are built as before."""
    try:
        from pydantic._internal import _config
    except ImportError:
        return
    defaults = getattr(_config, "config_defaults", None)
    if isinstance(defaults, dict) and defaults.get("defer_build") is False:
        defaults["defer_build"] = True


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
    import gc

    # The SDK's import makes ~200 pydantic model classes and their tables: the cyclic collector's
    # passes over them while they are made free next to nothing. Off until the server is made,
    # then what is there is kept out of later passes (``freeze``), and the collector runs again.
    collecting = gc.isenabled()
    gc.disable()
    import anyio

    from .mcp_tools import tools

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
