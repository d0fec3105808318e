"""The tools `git oxide mcp` offers an agent: their names, descriptions and input schemas, and one
call each, from arguments to a JSON-ready result. No MCP SDK here (``mcp_server`` wires these to
it), so the tools run and are tested in-process like any other operation.

Every result is redacted on the way out as an export is (``redact.redactor_for``: the repository's
rules and allowlist, again, over what git holds), and bounded: at most ``MAX_CHARS`` characters of
JSON and a page of items; a result that stops early carries ``next_cursor``, which the same tool
takes back to go on. The bodies of the tools are ``mcp_views``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oxide_git.core.errors import OxideError
from oxide_git.mcp.paging import MAX_CHARS as MAX_CHARS
from oxide_git.mcp.paging import BadCursor as BadCursor
from oxide_git.mcp.paging import Page as Page
from oxide_git.mcp.paging import clip as clip
from oxide_git.mcp.paging import limit_of as limit_of
from oxide_git.mcp.paging import make_cursor as make_cursor
from oxide_git.mcp.paging import read_cursor as read_cursor

if TYPE_CHECKING:  # the server lists the tools before any call needs the index
    from oxide_git.store.context import Context


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    schema: dict[str, Any]
    run: Callable[[Context, dict[str, Any]], dict[str, Any]]
    writes: bool = False


def _limit(default: int, most: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": most, "default": default,
            "description": f"at most this many items (default {default})"}


_CURSOR = {"type": "string", "description": "next_cursor of an earlier result of this tool, to go on "
                                            "where it stopped (the other arguments are then its own)"}


def _object(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        d["required"] = required
    return d


class _Views:
    """``mcp_views``'s functions, imported at the first call (listing the tools needs none)."""

    def __getattr__(self, name: str) -> Callable[[Context, dict[str, Any]], dict[str, Any]]:
        def run(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
            from oxide_git.mcp import views as mcp_views

            return getattr(mcp_views, name)(ctx, args)
        return run


def tools(allow_writes: bool = False) -> list[Tool]:
    """The tools offered; ``memory_add`` only when the user allowed writes."""
    from oxide_git.agents import AGENT_NAMES

    v = _Views()

    session = {"type": "string", "description": "a session id (git oxide's or the agent's own), or a "
                                                "unique prefix of one"}
    path = {"type": "string", "description": "a file of this repository (relative to its top, or absolute)"}
    out = [
        Tool("search", "Search past agent sessions",
             "Full-text search over every AI coding-agent session kept in this repository by git "
             "oxide (whichever agent made it, on every worktree and branch): prompts, "
             "answers, tool calls and their output. Each hit names the session, the message and a "
             "snippet with the matched words in [brackets]; read around it with show_session.",
             _object({"query": {"type": "string", "description": "words that must all occur"},
                      "agent": {"type": "string", "enum": list(AGENT_NAMES),
                                "description": "only this agent's sessions"},
                      "branch": {"type": "string", "description": "only sessions made on this branch"},
                      "since": {"type": "string", "description": "only messages from this time on "
                                "(ISO 8601 date or date-time, UTC if no offset)"},
                      "until": {"type": "string", "description": "only messages before this time (ISO 8601)"},
                      "limit": _limit(10, 50), "cursor": _CURSOR}), v.search),
        Tool("show_session", "Read a past session",
             "The messages of one session in order, as `git oxide show` prints them (tool calls on "
             "one line, long output folded; full=true unfolds). By default it starts at the last "
             "compaction, whose summary stands for what came before (start=0 reads from the "
             "beginning); a page ends with next_cursor when there is more.",
             _object({"session": session,
                      "start": {"type": "integer", "minimum": 0,
                                "description": "first message (seq) to show"},
                      "full": {"type": "boolean", "default": False, "description": "every part in full"},
                      "limit": _limit(20, 100), "cursor": _CURSOR}), v.show_session),
        Tool("blame", "Which session wrote these lines",
             "For each line of a file: the session, prompt, agent and model whose turn wrote it, "
             "'human' (written outside any agent turn) or 'before oxide' (older than the first "
             "checkpoint), through the checkpoints git oxide took at every prompt and the commits' "
             "notes. Returns the lines and, once each, the prompts behind them.",
             _object({"path": path, "start_line": {"type": "integer", "minimum": 1},
                      "end_line": {"type": "integer", "minimum": 1},
                      "rev": {"type": "string", "description": "blame the file as of this commit "
                                                              "(default: the worktree)"},
                      "limit": _limit(200, 500), "cursor": _CURSOR}), v.blame),
        Tool("checkpoints", "Checkpoints of a session or a file",
             "The worktree snapshots git oxide took (at every prompt, before rewinds, by hand), "
             "newest first: of one session, or those where one file changed (each with the "
             "change and the prompt it was taken for), or all. `git show ID` shows one.",
             _object({"session": session, "path": path, "limit": _limit(20, 100), "cursor": _CURSOR}),
             v.checkpoints),
        Tool("memory_read", "Read the project memory",
             "The project memory kept in git (refs/oxide/memory): MEMORY.md, the index of topics, "
             "or one topic's file, and the list of topics.",
             _object({"topic": {"type": "string", "description": "a topic (default: MEMORY.md)"},
                      "cursor": _CURSOR}), v.memory_read),
    ]
    if allow_writes:
        out.append(Tool(
            "memory_add", "Add to the project memory",
            "Append text to a topic of the project memory (one git commit, naming the current "
            "session) and list the topic in MEMORY.md.",
            _object({"topic": {"type": "string", "description": "letters, digits, '.', '_' or '-' "
                                                               "(e.g. build-commands)"},
                     "text": {"type": "string"}}, ["topic", "text"]), v.memory_add, writes=True))
    return out


def call(ctx: Context, name: str, args: dict[str, Any], *, allow_writes: bool = False) -> dict[str, Any]:
    """Run one tool; its result redacted (raises OxideError for the caller to show)."""
    tool = next((t for t in tools(allow_writes) if t.name == name), None)
    if tool is None:
        hint = ("the user starts `git oxide mcp --allow-writes` to allow it" if name == "memory_add"
                else "tools: " + ", ".join(t.name for t in tools(allow_writes)))
        raise OxideError(f"no tool {name}", hint=hint)
    if not ctx.repo.initialised:
        from oxide_git.core.errors import NotInitialised

        raise NotInitialised(f"git oxide keeps no sessions in {ctx.repo.workdir} yet",
                             hint="run `git oxide init` and `git oxide import` there")
    return redacted(ctx, tool.run(ctx, args))


_TYPES = {"string": (str,), "integer": (int,), "boolean": (bool,), "object": (dict,)}


def check_arguments(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """What is wrong with ``args`` for the tool's input ``schema`` (the parts of JSON Schema the
    tools use, said as jsonschema says it), or None. The server checks here, so the SDK's
    validation, and its import of jsonschema at every start, is not needed."""
    props = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in args:
            return f"{key!r} is a required property"
    extra = [k for k in args if k not in props]
    if extra and schema.get("additionalProperties") is False:
        return f"Additional properties are not allowed ({', '.join(repr(k) for k in extra)} " \
               f"{'was' if len(extra) == 1 else 'were'} unexpected)"
    for key, value in args.items():
        p = props.get(key, {})
        want = _TYPES.get(p.get("type", ""))
        whole = want == (int,) and isinstance(value, float) and value.is_integer()  # as jsonschema has it
        flag = isinstance(value, bool) and want != (bool,)  # True is an int to Python, not to JSON
        if want and not whole and (flag or not isinstance(value, want)):
            return f"{value!r} is not of type {p['type']!r}"
        if "enum" in p and value not in p["enum"]:
            return f"{value!r} is not one of {p['enum']!r}"
        if "minimum" in p and value < p["minimum"]:
            return f"{value!r} is less than the minimum of {p['minimum']!r}"
        if "maximum" in p and value > p["maximum"]:
            return f"{value!r} is greater than the maximum of {p['maximum']!r}"
    return None


def redacted(ctx: Context, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` as an export would show it: every string through the repository's redactor, and
    ``redactions`` (per kind) when that found anything."""
    from collections import Counter

    from oxide_git.store.redact import redactor_for

    r = redactor_for(ctx)
    if r is None:
        return result
    counts: Counter[str] = Counter()
    out = r.value(result, counts)
    if counts:
        out = {**out, "redactions": dict(sorted(counts.items()))}
    return dict(out)


# -- paging -------------------------------------------------------------------------------------


