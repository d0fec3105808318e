"""`git oxide import`."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from oxide_git.agents import AGENT_NAMES
from oxide_git.cli import main
from oxide_git.cli.output import emit_json, status, table


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
              help="The agent that wrote PATHS (default: told from each file; without PATHS, "
                   "every agent's store is searched).")
@click.option("-n", "--dry-run", is_flag=True, help="List what would be imported and from where.")
@click.option("-q", "--quiet", is_flag=True, help="No progress, no per-file lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_(paths: tuple[Path, ...], agent: str | None, dry_run: bool, quiet: bool, as_json: bool) -> None:
    """Import sessions of this repository from the agents' own stores (or from PATHS).

    Without PATHS, each agent's store is searched for sessions whose working
    directory is a worktree of this repository. Importing again reads only what
    was appended since; a session already imported is never duplicated. Each file
    of PATHS is read as the agent's it looks like (--agent names it; a file that
    looks like another agent's is refused, nothing stored).
    """
    from oxide_git.imports import command as import_command

    progress = _Progress(quiet or as_json)
    try:
        report = import_command.run(list(paths), agent, dry_run=dry_run, progress=progress)
    finally:
        progress.close()
    if report is None:
        return
    if as_json:
        emit_json({"dry_run": dry_run, "sessions": report.sessions, "messages": report.messages,
                   "problems": report.problems, "drift": report.drift_warnings(),
                   "files": [f.to_dict() for f in report.files]})
    elif dry_run:
        table(["AGENT", "STATE", "SESSIONS", "MESSAGES", "FILE"],
              [[f.agent, f.state, len(f.sessions), f.messages, f.path] for f in report.files])
    elif not quiet:
        status(import_command.summary(report))
    import_command.check(report)
