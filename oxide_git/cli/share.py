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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def push(remote: str | None, checkpoints: bool, as_json: bool) -> None:
    """Push sessions, memory and notes to REMOTE (default: oxide.remote, else origin).

    Never forced: a session that changed on the remote too is rejected; run
    `git oxide pull` first (it keeps both sides), then push again.
    """
    from oxide_git.ops.share import check_pushed
    from oxide_git.ops.share import push as do_push

    res = do_push(make_context(), remote, checkpoints=checkpoints)
    if as_json:
        emit_json(res.to_dict())
    else:
        _report(res, "pushed to")
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
