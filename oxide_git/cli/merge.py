"""`git oxide merge`: a fork's conversation and code back into the session it left."""

from __future__ import annotations

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.history import confirm, files_summary
from oxide_git.cli.output import cid, emit_json, sid, status


def _plan_lines(res: object) -> str:
    from oxide_git.ops.merge import MergeResult

    assert isinstance(res, MergeResult)
    conflicted = {c["path"] for c in res.conflicts}
    files = {k: [p for p in v if p not in conflicted] for k, v in res.files.items()}
    lines = [] if not any(files.get(k) for k in ("added", "modified", "deleted", "left")) and (
        res.conflicts or res.messages_added) else [files_summary(files)]
    lines += [f"  conflict {c['path']} ({c['kind']})" for c in res.conflicts]
    if res.messages_added:
        what = "a digest of the fork" if res.digest else "the fork's messages"
        lines.append(f"  append {res.messages_added} message(s) to {sid(res.target['id'])}: a merge marker, "
                     f"then {what}")
    return "\n".join(lines)


@main.command()
@click.argument("fork")
@click.option("--into", "into", default=None, metavar="SESSION",
              help="The session to merge into (default: the session FORK was forked from).")
@click.option("--code", "mode", flag_value="code", help="Merge the files only.")
@click.option("--conversation", "mode", flag_value="conversation", help="Merge the conversation only.")
@click.option("--both", "mode", flag_value="both", default=True, help="Both (the default).")
@click.option("--digest", is_flag=True,
              help="Append only the fork's prompts, final answers and the files it changed.")
@click.option("-n", "--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def merge(fork: str, into: str | None, mode: str, digest: bool, dry_run: bool, yes: bool,
          as_json: bool) -> None:
    """Merge FORK's turns (after the point it left) and code back (undo with `git oxide undo`).

    The code is merged three-way into this worktree: the fork's latest checkpoint against the
    checkpoint where the two diverged, the worktree as it is now (uncommitted changes included)
    as the other side. A file both changed in the same place gets git's conflict markers, is
    listed, and the command exits with status 1.
    """
    from oxide_git.ops.merge import merge as do_merge

    ctx = make_context()
    kw = {"into": into, "code": mode in ("code", "both"), "conversation": mode in ("conversation", "both"),
          "digest_only": digest}
    if not dry_run and not yes and not as_json:
        preview = do_merge(ctx, fork, dry_run=True, **kw)  # type: ignore[arg-type]
        if preview.messages_added or any(preview.files.get(k) for k in ("added", "modified", "deleted")):
            confirm(f"Merging {sid(preview.fork['id'])} into {sid(preview.target['id'])} will:\n"
                     + _plan_lines(preview), False, what="merge")
    res = do_merge(ctx, fork, dry_run=dry_run, **kw)  # type: ignore[arg-type]
    if as_json:
        emit_json(res.to_dict())
        raise SystemExit(1 if res.conflicts else 0)
    changes = res.messages_added or any(res.files.get(k) for k in ("added", "modified", "deleted"))
    if changes:
        click.echo(_plan_lines(res))
    point = (f" (it left {sid(res.ancestor)} after its #{res.fork_point})"
             if res.ancestor and res.fork_point is not None and res.fork_point >= 0 else "")
    status(f"Fork {sid(res.fork['id'])}{point}: code from checkpoint "
           f"{cid(res.theirs) if res.theirs else '-'} against {cid(res.base) if res.base else '-'}")
    for note in res.notes:
        status(f"note: {note}")
    if res.already_merged:
        status(f"{res.already_merged} message(s) of the fork were merged before: not added again")
    if res.uncommitted and changes:
        both = sorted({c["path"] for c in res.conflicts} & set(res.uncommitted))
        status(f"{'Would merge' if dry_run else 'Merged'} with the worktree's uncommitted changes "
               f"({len(res.uncommitted)} file(s)) as its side: none " + ("would be" if dry_run else "was")
               + " overwritten" + (f"; both sides of {', '.join(both)} are in its conflict markers" if both
                                   else ""))
    for c in res.conflicts:
        status(f"CONFLICT ({c['kind']}): {c['path']}")
    if dry_run:
        status("Dry run: nothing was written")
    elif not changes:
        status(f"Already merged: {sid(res.fork['id'])} has nothing {sid(res.target['id'])} and this "
               "worktree lack")
    else:
        status(f"Merged {sid(res.fork['id'])} into {sid(res.target['id'])}: {res.written} file(s) written, "
               f"{res.messages_added} message(s) appended"
               + (f"; the state before is checkpoint {cid(res.before_checkpoint)}" if res.before_checkpoint
                  else "") + " (`git oxide undo` to go back)")
    if res.conflicts:
        status(f"{'Would leave' if dry_run else 'Left'} conflicts in {len(res.conflicts)} file(s)"
               + ("" if dry_run else ": fix them (git's conflict markers) and carry on"))
        raise SystemExit(1)
