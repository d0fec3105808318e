"""Carrying a removal to a remote: `rm --remote` and `push --prune`.

A session removed here (``tombstones``) is deleted on the remote only while the remote still
holds what was removed (its tip is the removed one or older): git's ``--force-with-lease`` makes
that check on the remote itself, so a session someone changed since is never deleted there (it
is named in ``problems``, and a pull brings it back as a fork). Nothing else is ever forced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pygit2

from oxide_git.git import refs
from oxide_git.ops.remote_refs import RemoteError, git_cmd
from oxide_git.ops.share import remote_name
from oxide_git.store import tombstones
from oxide_git.store.context import Context


@dataclass
class Removals:
    remote: str
    updated: dict[str, str] = field(default_factory=dict)  # ref -> removed / would remove
    kept: list[str] = field(default_factory=list)  # refs changed there since: not removed
    problems: list[str] = field(default_factory=list)


def push_removals(ctx: Context, remote: str | None = None, removed: Mapping[str, str] | None = None,
                  *, dry_run: bool = False) -> Removals:
    """Delete on the remote the sessions removed here (``removed``: {session: its tip when removed};
    default: every tombstone's); ``updated`` names each ``removed`` (or ``would remove``)."""
    name = remote_name(ctx, remote)
    res = Removals(name)
    git = ctx.repo.git
    gone = dict(removed) if removed is not None else dict(tombstones.all_removed(git))
    if not gone:
        return res
    r = git_cmd(ctx, "ls-remote", name, refs.SESSIONS + "*")
    if r.returncode != 0:
        raise RemoteError(f"cannot reach remote {name!r}: {r.stderr.strip()}",
                          hint="add it with `git remote add`, or set `git config oxide.remote`")
    there = {ref: oid for oid, _, ref in (ln.partition("\t") for ln in r.stdout.splitlines())}
    leases, specs = [], []
    for sid, tip in sorted(gone.items()):
        ref = refs.session_ref(sid)
        oid = there.get(ref)
        if oid is None:
            continue
        if tombstones.changed_since(git, tip, pygit2.Oid(hex=oid)):
            res.kept.append(ref)
            continue
        if dry_run:
            res.updated[ref] = "would remove"
            continue
        leases.append(f"--force-with-lease={ref}:{oid}")
        specs.append(f":{ref}")
    if not specs:
        return res
    out = git_cmd(ctx, "push", "--porcelain", "--no-verify", *leases, name, *specs)
    for line in out.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        ref = parts[1].partition(":")[2]
        if parts[0] == "-":
            res.updated[ref] = "removed"
        elif parts[0] == "!":
            res.problems.append(f"{name} {ref}: not removed there ({parts[2]})")
    if out.returncode != 0 and not res.updated and not res.problems:
        raise RemoteError(f"push to {name!r} failed: {out.stderr.strip()}")
    return res
