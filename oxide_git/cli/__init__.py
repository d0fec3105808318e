"""The ``git-oxide`` command: the only package that parses arguments, prints and exits.

Each command parses, calls one operation and renders its result. Errors are handled in one place
(``OxideGroup.invoke``): an ``OxideError`` prints ``error:``/``hint:`` and exits 1, a usage error 2,
anything unexpected exits 3 with the traceback logged under ``<git-common-dir>/oxide/``, ^C 130.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..errors import OxideError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _log_unexpected() -> str | None:
    """Write the traceback to oxide.log in the repository (or the temp dir); return its path."""
    from ..repo import find_repo

    try:
        log_dir = find_repo(Path.cwd()).oxide_dir
        log_dir.mkdir(parents=True, exist_ok=True)
    except (OxideError, OSError):
        log_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    path = log_dir / "oxide.log"
    try:
        import platform
        import traceback

        with open(path, "a") as f:
            f.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} git-oxide {__version__} "
                    f"python {platform.python_version()} {platform.platform()}\n")
            f.write(f"argv: {sys.argv!r}\n")
            f.write(traceback.format_exc())
    except OSError:
        return None
    return str(path)


def fail(err: OxideError) -> None:
    click.echo(f"error: {err.message}", err=True)
    if err.hint:
        click.echo(f"hint: {err.hint}", err=True)


class OxideGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OxideError as e:
            fail(e)
            ctx.exit(e.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            ctx.exit(0)
        except Exception:
            where = _log_unexpected()
            click.echo("error: unexpected error in git oxide", err=True)
            if where:
                click.echo(f"hint: the details are in {where}; please report them", err=True)
            ctx.exit(3)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)  # grouped by topic

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is not None:  # its module registers it on `main` when imported
            importlib.import_module(f"{__name__}.{module}")
        return self.commands.get(cmd_name)


@click.group(cls=OxideGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="git oxide")
def main() -> None:
    """Keep every AI coding-agent session of this repository in its own git.

    \b
    Sessions:   import, list, show, search, resume, fork, rm
    Code:       checkpoint, checkpoints, rewind, undo
    Capture:    hooks, watch
    Share:      push, pull, export
    Store:      init, reindex, doctor, gc, pin, unpin, memory

    Run `git oxide COMMAND -h` for a command's help (`git oxide --help` is
    turned into `git help oxide` by git, which shows the man page if installed).
    """


def make_context() -> Any:
    """The operation context for this process: repository from cwd, clock, environment."""
    from ..context import Context
    from ..repo import find_repo

    now = os.environ.get("OXIDE_NOW")
    now_ms = int(now) if now and now.isdigit() else int(time.time() * 1000)
    return Context(find_repo(Path.cwd()), now_ms, dict(os.environ))


# Command -> the module that defines it (and registers it on `main` when imported). Only the
# invoked command's module is imported: the others, and what they import, cost start-up time.
COMMANDS = {
    **dict.fromkeys(("init", "checkpoint", "checkpoints", "reindex", "doctor"), "core"),
    **dict.fromkeys(("list", "show", "search"), "sessions"),
    "import": "imports",
    **dict.fromkeys(("resume", "fork", "rewind", "undo"), "history"),
    **dict.fromkeys(("hooks", "watch", "hook-impl"), "capture"),
    **dict.fromkeys(("push", "pull"), "share"),
    "export": "export",
    **dict.fromkeys(("gc", "pin", "unpin", "rm"), "store_admin"),
    "memory": "memory",
}


def load_all() -> dict[str, click.Command]:
    """Every command, imported (for help listings and tests)."""
    for name in COMMANDS:
        main.get_command(click.Context(main), name)
    return dict(main.commands)
