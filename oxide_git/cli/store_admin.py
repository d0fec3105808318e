"""Store upkeep: gc, pin, unpin, rm."""

from __future__ import annotations

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import cid, emit_json, sid, status


@main.command()
@click.option("-n", "--dry-run", is_flag=True, help="Show what would be removed; remove nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def gc(dry_run: bool, as_json: bool) -> None:
    """Remove expired checkpoints, empty old trash and thin the watch oplog.

    Never removes pinned checkpoints, checkpoints linked from a commit a branch
    reaches, or anything younger than its TTL (oxide.checkpointTTL, default 30d;
    oxide.trashTTL, default 14d). Afterwards `git gc --prune=now` frees the space.
    """
    from oxide_git.ops.gc import gc as do_gc
    from oxide_git.store.retention import size_text

    ctx = make_context()
    res = do_gc(ctx, dry_run=dry_run)
    if res.removed and not dry_run:
        from oxide_git.store import journal

        # undo cannot bring back what gc removed: an older undo entry is refused after this
        journal.record(ctx, journal.Entry("gc", ctx.now_ms, f"git oxide gc (removed {res.removed} ref(s))",
                                          undoable=False))
    if as_json:
        emit_json(res.to_dict())
        return
    verb = "would remove" if dry_run else "removed"
    for c in res.checkpoints:
        click.echo(f"{verb} checkpoint {cid(c['id'])} ({c['kind']}, session {sid(c['session_id'])})")
    for name in res.trash:
        click.echo(f"{verb} trash {name}")
    for name in res.oplog:
        click.echo(f"{verb} oplog snapshot {name}")
    for why, n in sorted(res.kept.items()):
        status(f"kept {n} checkpoint(s) past their TTL: {why}")
    status(f"{'Would free' if dry_run else 'Freed'} {res.removed} ref(s), about {size_text(res.freed_bytes)}"
           + ("" if dry_run or not res.removed else "; run `git gc --prune=now` to reclaim the space"))


def _pin(checkpoint: str, on: bool, as_json: bool) -> None:
    from oxide_git.store.retention import pin as do_pin

    res = do_pin(make_context(), checkpoint, on=on)
    if as_json:
        emit_json(res)
        return
    word = "Pinned" if on else "Unpinned"
    status(f"{word} checkpoint {cid(res['id'])}" + ("" if res["changed"] else " (it already was)"))


@main.command()
@click.argument("checkpoint")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def pin(checkpoint: str, as_json: bool) -> None:
    """Keep CHECKPOINT forever (gc never removes a pinned checkpoint)."""
    _pin(checkpoint, True, as_json)


@main.command()
@click.argument("checkpoint")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def unpin(checkpoint: str, as_json: bool) -> None:
    """Let CHECKPOINT expire again with oxide.checkpointTTL."""
    _pin(checkpoint, False, as_json)


@main.command()
@click.argument("session")
@click.option("-r", "--recursive", is_flag=True, help="Remove its forks too.")
@click.option("--keep-forks", is_flag=True, help="Keep its forks (their history stays complete).")
@click.option("-n", "--dry-run", is_flag=True, help="Show what would be removed.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--remote", "on_remote", is_flag=True,
              help="Also remove it on the remote (oxide.remote, else origin), unless changed there since.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def rm(session: str, recursive: bool, keep_forks: bool, dry_run: bool, yes: bool, on_remote: bool,
       as_json: bool) -> None:
    """Remove SESSION (to the trash: `git oxide undo` brings it back until gc empties it).

    Its checkpoints stay and expire with oxide.checkpointTTL. A pull does not bring it back
    unless the remote changed it since (then as a fork); --remote removes it there too.
    """
    from oxide_git.cli.history import confirm
    from oxide_git.ops.rm import rm as do_rm

    ctx = make_context()
    if not dry_run and not yes:
        preview = do_rm(ctx, session, recursive=recursive, keep_forks=keep_forks, dry_run=True)
        confirm("This removes:\n" + "\n".join(f"  session {s}" for s in preview.sessions), yes,
                 what="remove sessions")
    if not dry_run:
        from oxide_git.store.journal import ensure_writable

        ensure_writable(ctx)  # what cannot be journaled could not be undone: nothing is removed
    res = do_rm(ctx, session, recursive=recursive, keep_forks=keep_forks, dry_run=dry_run)
    there = None
    if on_remote:
        from oxide_git.git.refs import session_ref
        from oxide_git.ops.prune import push_removals

        tips = {s: res.refs[session_ref(s)][0] for s in res.sessions if session_ref(s) in res.refs}
        there = push_removals(ctx, None, {s: t for s, t in tips.items() if t}, dry_run=dry_run)
    if as_json:
        emit_json({**res.to_dict(), **({"remote": dict(there.__dict__)} if there else {})})
        return
    for s in res.sessions:
        click.echo(f"{'would remove' if dry_run else 'removed'} session {s}")
    for ref, what in (there.updated.items() if there else ()):
        click.echo(f"{what} {ref} on {there.remote}")  # type: ignore[union-attr]
    for ref in there.kept if there else ():
        status(f"{ref} changed on {there.remote} after it was removed here: kept there "  # type: ignore[union-attr]
               "(a pull brings it back as a fork)")
    for p in there.problems if there else ():
        status(f"warning: {p}")
    for s in res.kept_forks:
        status(f"kept fork {sid(s)} (now a root session)")
    if not dry_run:
        status("Moved to the trash; `git oxide undo` brings it back until `git oxide gc` empties it")
