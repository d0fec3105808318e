"""Share commands: push and pull sessions, memory and notes through a git remote."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from oxide_git.ops.share import ShareResult
from oxide_git.cli import main, make_context
from oxide_git.cli.output import emit_json, sid, status


def _report(res: ShareResult, verb: str) -> None:
    counts = res.summary()
    what = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing new"
    status(f"{verb} {res.remote}: {what}")
    for f in res.forks:
        if f.get("removed"):
            status(f"session {sid(f['session'])} was removed here but changed on {res.remote} since: "
                   f"its messages are in fork {sid(f['fork'])}")
            continue
        status(f"session {sid(f['session'])} changed on both sides: the other side's messages "
               f"are in fork {sid(f['fork'])}")
    for line in res.notes:  # checkpoints a push redacted or withheld (checkpoint_screen)
        status(line)
    for p in res.problems:
        status(f"warning: {p}")


@main.command()
@click.argument("remote", required=False)
@click.option("--checkpoints", is_flag=True,
              help="Also push checkpoint snapshots, secrets taken out (docs/redaction.md).")
@click.option("--prune", is_flag=True,
              help="Also remove on REMOTE the sessions removed here (`rm`) that nobody changed there since.")
@click.option("-n", "--dry-run", is_flag=True, help="Show what would be pushed and removed; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def push(remote: str | None, checkpoints: bool, prune: bool, dry_run: bool, as_json: bool) -> None:
    """Push sessions, memory and notes to REMOTE (default: oxide.remote, else origin).

    Never forced: a session that changed on the remote too is rejected; run
    `git oxide pull` first (it keeps both sides), then push again.
    """
    from oxide_git.ops.share import check_pushed
    from oxide_git.ops.share import push as do_push

    ctx = make_context()
    res = do_push(ctx, remote, checkpoints=checkpoints, dry_run=dry_run)
    if prune:
        from oxide_git.ops.prune import push_removals

        gone = push_removals(ctx, remote, dry_run=dry_run)
        res.updated.update(gone.updated)
        res.problems.extend(gone.problems)
    if as_json:
        emit_json({**res.to_dict(), **({"kept_on_remote": gone.kept} if prune else {})})
    else:
        _report(res, "would push to" if dry_run else "pushed to")
        for ref in gone.kept if prune else ():
            status(f"{ref} changed on {res.remote} after it was removed here: kept there "
                   "(a pull brings it back as a fork)")
    check_pushed(res)


@main.command()
@click.argument("remote", required=False)
@click.option("--checkpoints", is_flag=True, help="Also fetch checkpoint snapshots.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def pull(remote: str | None, checkpoints: bool, as_json: bool) -> None:
    """Fetch sessions, memory and notes from REMOTE and merge them in.

    Local refs are never overwritten: a session appended on both sides stays
    as it is here, and the other side's messages become a fork of it.
    """
    from oxide_git.ops.share import pull as do_pull
    from oxide_git.store.journal import ensure_writable

    ctx = make_context()
    ensure_writable(ctx)  # a pull is undoable: one that could not be journaled changes nothing
    res = do_pull(ctx, remote, checkpoints=checkpoints)
    if as_json:
        emit_json(res.to_dict())
    else:
        _report(res, "pulled from")
