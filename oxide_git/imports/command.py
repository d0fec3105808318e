"""`git oxide import`'s work and messages, without click.

The click command (``cli/imports.py``) runs it, and so does the console script directly for the
plain form hooks and scripts run after a transcript grew (``import [--agent NAME] [-q] [PATH...]``,
no terminal to draw progress on): parsing that form by hand saves click's ~25 ms of start-up on a
re-import whose own work is ~15 ms. Anything else goes through click.
"""

from __future__ import annotations

import sys
from pathlib import Path

from oxide_git.agents import AGENT_NAMES
from oxide_git.core.errors import OxideError
from oxide_git.imports.importing import ImportReport, Progress
from oxide_git.store.search_index import EAGER


def run(paths: list[Path], agent: str | None, *, dry_run: bool = False,
        progress: Progress | None = None) -> ImportReport | None:
    """Import what ``paths`` (of ``agent``) or the agents' stores hold for this repository; each
    problem is printed as a warning. None when there was nothing to import."""
    from oxide_git.imports.importing import discover, import_sessions
    from oxide_git.imports.paths import files
    from oxide_git.store.context import for_process

    ctx = for_process()
    items = files(agent, paths) if paths else discover(ctx, [agent] if agent else None)
    if not items:
        where = (f"no {agent or 'agent'}'s session file in {', '.join(map(str, paths))}" if paths
                 else "no session of this repository was found in the agents' stores")
        sys.stderr.write(f"Nothing to import: {where}\n")
        return None
    report = import_sessions(ctx, items, dry_run=dry_run, progress=progress, by_path=bool(paths))
    if not dry_run and report.messages >= EAGER:
        ctx.index.keep_search_up(note=progress is not None)
    earlier = [] if dry_run else report.earlier_warnings()
    for p in earlier + report.warnings():
        sys.stderr.write(f"warning: {p}\n")
    return report


def summary(report: ImportReport) -> str:
    changed = [f for f in report.files if f.state not in ("unchanged", "failed")]
    unchanged = sum(f.state == "unchanged" for f in report.files)
    failed = sum(f.state == "failed" for f in report.files)
    problems = report.problems
    return (f"Imported {report.messages} message(s) in {report.sessions} session(s) from "
            f"{len(changed)} file(s)" + (f"; {unchanged} file(s) unchanged since the last import"
                                         if unchanged else "")
            + (f"; {failed} file(s) failed (see the warnings above)" if failed else "")
            + (f"; {len(problems)} problem(s)" if problems else ""))


def check(report: ImportReport) -> None:
    """Fail when no file could be imported at all."""
    if report.files and all(f.state == "failed" for f in report.files):
        raise OxideError("nothing could be imported",
                         hint="check the warnings above; is --agent right for these files?")


def plain(argv: list[str]) -> int | None:
    """The exit status of ``import ARGV`` run here, or None when ARGV is not the plain form (or a
    progress bar may be wanted): the click command runs it then."""
    agent, quiet, paths = None, False, []
    args = iter(argv)
    for a in args:
        if a in ("-q", "--quiet"):
            quiet = True
        elif a == "--agent":
            agent = next(args, None)
            if agent not in AGENT_NAMES:
                return None  # click says what is wrong
        elif a.startswith("--agent="):
            agent = a[8:]
            if agent not in AGENT_NAMES:
                return None
        elif a.startswith("-"):
            return None  # --json, --dry-run, -h, "--", a typo...
        else:
            paths.append(Path(a))
    if not quiet and sys.stderr.isatty():
        return None

    def work() -> None:
        report = run(paths, agent)
        if report is not None:
            if not quiet:
                sys.stderr.write(summary(report) + "\n")
            check(report)

    from oxide_git.git import failure

    return failure.guarded(work)
