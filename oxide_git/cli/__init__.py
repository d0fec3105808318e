"""The ``git-oxide`` command: the only package that parses arguments, prints and exits.

Each command parses, calls one operation and renders its result. Errors are handled in one place
(``OxideGroup.invoke``): an ``OxideError`` prints ``error:``/``hint:`` and exits 1, a usage error 2,
anything unexpected exits 3 with the traceback logged under ``<git-common-dir>/oxide/``, ^C 130.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from oxide_git import __version__
from oxide_git.git import failure

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# click's own ways out (usage errors, --help, --version) are click's to print.
_CLICK_EXITS = (click.exceptions.Exit, click.ClickException, click.exceptions.Abort)


class OxideGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        code = failure.guarded(lambda: super(OxideGroup, self).invoke(ctx), passthrough=_CLICK_EXITS)
        if code:
            ctx.exit(code)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)  # grouped by topic

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if args and not name.startswith("-") and self.get_command(ctx, name) is None:
            import difflib

            visible = [c for c in COMMANDS if c not in ("hook-impl", "agent-hook")]
            close = difflib.get_close_matches(name, visible, 3)
            hint = (f"\n\nThe most similar command{'s are' if len(close) > 1 else ' is'}: "
                    + ", ".join(close)) if close else ""
            raise click.UsageError(f"'{name}' is not a git oxide command.{hint}\n"
                                   "Run `git oxide -h` for the list.", ctx)
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is not None:  # its module registers it on `main` when imported
            importlib.import_module(f"{__name__}.{module}")
        return self.commands.get(cmd_name)


@click.group(cls=OxideGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="git oxide")
@click.option("-P", "--no-pager", is_flag=True, help="Never page the output (`show` pages on a terminal).")
def main(no_pager: bool) -> None:
    """Keep every AI coding-agent session of this repository in its own git.

    \b
    Sessions:   import, list, show, search, status, switch, resume, fork, merge, rm, usage
    Code:       checkpoint, checkpoints, rewind, undo, blame, trace
    Capture:    hooks, hook, watch
    Share:      push, pull, export
    Store:      init, reindex, doctor, gc, pin, unpin, memory
    Agents:     mcp (this history as tools for any agent)

    Run `git oxide COMMAND -h` for a command's help (`git oxide --help` is
    turned into `git help oxide` by git, which shows the man page if installed).
    """
    if no_pager:
        from oxide_git.cli.pager import disable

        disable()


def make_context() -> Any:
    """The operation context for this process: repository from cwd, clock, environment."""
    from oxide_git.cli.output import use_store
    from oxide_git.store.context import for_process

    ctx = for_process()
    use_store(ctx)  # ids are printed by their shortest unique prefix in this store
    return ctx


# Command -> the module that defines it (and registers it on `main` when imported). Only the
# invoked command's module is imported: the others, and what they import, cost start-up time.
COMMANDS = {
    **dict.fromkeys(("init", "checkpoint", "checkpoints", "reindex", "doctor"), "core"),
    **dict.fromkeys(("list", "show", "search"), "sessions"),
    **dict.fromkeys(("status", "switch"), "current"),
    "import": "imports",
    **dict.fromkeys(("resume", "fork", "rewind", "undo"), "history"),
    "merge": "merge",
    **dict.fromkeys(("hooks", "hook", "hook-impl", "agent-hook"), "capture"),
    "watch": "watch",
    **dict.fromkeys(("push", "pull"), "share"),
    "export": "export",
    "blame": "blame",
    **dict.fromkeys(("gc", "pin", "unpin", "rm"), "store_admin"),
    "memory": "memory",
    "mcp": "mcp_command",
    "usage": "usage",
    "trace": "trace",
}


def load_all() -> dict[str, click.Command]:
    """Every command, imported (for help listings and tests)."""
    for name in COMMANDS:
        main.get_command(click.Context(main), name)
    return dict(main.commands)
