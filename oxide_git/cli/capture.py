"""Capture commands: `hooks install|uninstall|status`, `hook`, and the hidden `hook-impl` and `agent-hook`
(`watch` is in ``cli.watch``)."""

from __future__ import annotations

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import emit_json, status


@main.group()
def hooks() -> None:
    """Install, remove or inspect git oxide's git hooks (they chain the hooks already there)."""


def _print_report(report: object, as_json: bool) -> None:
    d = report.to_dict()  # type: ignore[attr-defined]
    if as_json:
        emit_json(d)
        return
    for a in d["actions"]:
        status(a)


@hooks.command("install")
@click.option("--tracked", is_flag=True,
              help="In a hooks folder the team commits (Husky's, a tracked .githooks): write portable "
                   "shims there, which run `git oxide` from PATH (no path of this machine).")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def hooks_install(tracked: bool, as_json: bool) -> None:
    """Install the hook shims where git looks for hooks (core.hooksPath included).

    A hook already there is moved to <hook>.pre-oxide and run first; its exit
    code still decides. The shims call this Python by absolute path.
    prepare-commit-msg is installed only while oxide.trailers is true (the
    pre-commit shim installs it when it sees them turned on; running this
    again with them off removes it). A hooks folder inside the worktree that
    git tracks (or does not ignore) is the team's: nothing is changed there
    unless --tracked; the lines to add to the team's hooks are printed instead.
    """
    from oxide_git.hooks.install import install
    from oxide_git.ops.checkpoint import init

    ctx = make_context()
    init(ctx)
    report = install(ctx.repo, tracked=tracked)
    _print_report(report, as_json)
    if as_json:
        return
    if report.written:
        status(f"Installed git oxide hooks in {report.hooks_dir}")
    else:
        _team_lines(report)


def _team_lines(report: object) -> None:
    """What to add to the team's hooks, when install left their folder alone."""
    for line in report.team_lines:  # type: ignore[attr-defined]
        click.echo(line)
    if report.folder == "tracked":  # type: ignore[attr-defined]
        status("or run `git oxide hooks install --tracked` to write portable shims there for the team "
               "to commit")


@hooks.command("uninstall")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def hooks_uninstall(as_json: bool) -> None:
    """Remove the shims and put back the hooks they chained, exactly as they were."""
    from oxide_git.hooks.install import uninstall

    _print_report(uninstall(make_context().repo), as_json)


@hooks.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON.")
def hooks_status(as_json: bool) -> None:
    """Show which hooks are installed, chained, and whether oxide is enabled."""
    from oxide_git.hooks.install import status as hook_status

    d = hook_status(make_context().repo).to_dict()
    if as_json:
        emit_json(d)
        return
    click.echo(f"hooks folder: {d['layout']}")
    click.echo(f"oxide: {'enabled' if d['enabled'] else 'disabled (oxide.enabled=false)'}"
               f"{'' if d['initialised'] else ', not initialised (run `git oxide init`)'}")
    for h in d["hooks"]:  # type: ignore[attr-defined]
        extra = f" (runs {h['chained']} first)" if h["chained"] else ""
        extra += " (portable: `git oxide` from PATH)" if h["portable"] else ""
        click.echo(f"  {h['hook']:<20} {h['state']}{extra}")
    if d["pending_jobs"]:
        click.echo(f"{d['pending_jobs']} hook job(s) queued")
    for line in d["team_lines"]:  # type: ignore[attr-defined]
        click.echo(line)


@main.command("hook", context_settings={"ignore_unknown_options": True})
@click.argument("hook", type=click.Choice(("pre-commit", "prepare-commit-msg", "post-commit", "post-checkout",
                                           "post-rewrite", "pre-push")))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook(hook: str, args: tuple[str, ...]) -> None:
    """What a team's hook runs: `git oxide hook HOOK "$@"` in a Husky script or a
    tracked hooks folder, a lefthook.yml command (`git oxide hooks status` prints
    them). It does what git oxide's shim does, from PATH; never fails git."""
    from oxide_git.hooks.entry import main as impl

    raise SystemExit(impl([hook, *args]))


@main.command("hook-impl", hidden=True, context_settings={"ignore_unknown_options": True})
@click.option("--hook-type", default=None)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook_impl(hook_type: str | None, args: tuple[str, ...]) -> None:
    """Called by the hook shims (they call `python -m oxide_git.hooks.impl` directly)."""
    from oxide_git.hooks.impl import main as impl

    raise SystemExit(impl((["--hook-type", hook_type] if hook_type else []) + list(args)))


@main.command("agent-hook", hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def agent_hook(args: tuple[str, ...]) -> None:
    """What the agents' hooks run (`init --agent-hooks`): never fails, prints nothing."""
    import sys

    from oxide_git.hooks.agent_hooks import main as impl

    # click takes the first `--` as the end of options; Codex's notify needs it (what follows is the
    # user's own notify command, chained): hand the words over as they were given
    raw = sys.argv[sys.argv.index("agent-hook") + 1:] if "agent-hook" in sys.argv else list(args)
    raise SystemExit(impl(raw))


def init_capture(hooks: bool, agent_hooks: tuple[str, ...], remove: bool) -> None:
    """The capture part of `git oxide init --hooks / --agent-hooks AGENT [--remove]`."""
    from oxide_git.hooks.agent_hooks import configure
    from oxide_git.hooks.install import install, uninstall

    ctx = make_context()
    if hooks:
        report = (uninstall if remove else install)(ctx.repo)
        _print_report(report, False)
        if not report.written:
            _team_lines(report)
    for agent in agent_hooks:
        for line in configure(ctx, agent, remove=remove):
            status(line)
