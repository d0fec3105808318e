"""`git oxide import`."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from ..agents import AGENT_NAMES
from ..errors import OxideError
from . import main, make_context
from .output import emit_json, status, table


class _Progress:
    """A progress bar on stderr, shown only on a terminal and only once work passes a second."""

    def __init__(self, quiet: bool) -> None:
        self.enabled = not quiet and sys.stderr.isatty()
        self.start = time.monotonic()
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < 1.0:
                return
            self.bar = click.progressbar(length=total, label="Importing", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


@main.command(name="import")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--agent", type=click.Choice(AGENT_NAMES),
              help="The agent that wrote PATHS (default: search every agent's store).")
@click.option("-n", "--dry-run", is_flag=True, help="List what would be imported and from where.")
@click.option("-q", "--quiet", is_flag=True, help="No progress, no per-file lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_(paths: tuple[Path, ...], agent: str | None, dry_run: bool, quiet: bool, as_json: bool) -> None:
    """Import sessions of this repository from the agents' own stores (or from PATHS).

    Without PATHS, each agent's store is searched for sessions whose working
    directory is a worktree of this repository. Importing again reads only what
    was appended since; a session already imported is never duplicated.
    """
    from ..importing import discover, expand, import_sessions

    ctx = make_context()
    if paths and not agent:
        raise OxideError("PATHS need --agent", hint="e.g. `git oxide import --agent claude FILE`")
    items = expand(agent, list(paths)) if paths and agent else discover(ctx, [agent] if agent else None)
    if not items:
        status("Nothing to import: no session of this repository was found in the agents' stores")
        return
    progress = _Progress(quiet or as_json)
    try:
        report = import_sessions(ctx, items, dry_run=dry_run, progress=progress)
    finally:
        progress.close()
    problems = report.problems
    for p in problems:
        click.echo(f"warning: {p}", err=True)
    if as_json:
        emit_json({"dry_run": dry_run, "sessions": report.sessions, "messages": report.messages,
                   "problems": problems, "files": [f.__dict__ for f in report.files]})
    elif dry_run:
        table(["AGENT", "STATE", "SESSIONS", "MESSAGES", "FILE"],
              [[f.agent, f.state, len(f.sessions), f.messages, f.path] for f in report.files])
    elif not quiet:
        changed = [f for f in report.files if f.state not in ("unchanged", "failed")]
        status(f"Imported {report.messages} message(s) in {report.sessions} session(s) from "
               f"{len(changed)} file(s); {len(report.files) - len(changed)} unchanged or failed"
               + (f"; {len(problems)} problem(s)" if problems else ""))
    if report.files and all(f.state == "failed" for f in report.files):
        raise OxideError("nothing could be imported",
                         hint="check the warnings above; is --agent right for these files?")
