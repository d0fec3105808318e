"""A remote's oxide refs mirrored under ``refs/oxide/remotes/<remote>/`` (what `pull` reconciles
from): which of its refs are ours to take, and fetching only those that moved, the cheap way."""

from __future__ import annotations

import re
import subprocess
from typing import Any

from oxide_git.core.errors import OxideError
from oxide_git.git import refs
from oxide_git.git.repo import clean_git_env
from oxide_git.store.context import Context

REMOTES = "refs/oxide/remotes/"
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_HEX = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
WILDCARD_FROM = 64  # new refs of one kind from which one wildcard refspec fetches them (_fetch_new)
CHUNK = 256  # exact refspecs per `git fetch`
_WILDCARDS = (refs.SESSIONS, refs.CHECKPOINTS)


class RemoteError(OxideError):
    """git could not talk to the remote."""


def namespace(remote: str) -> str:
    """Where a remote's refs are mirrored: ``refs/oxide/remotes/<remote, made ref-safe>/``."""
    return REMOTES + (re.sub(r"[^A-Za-z0-9_-]+", "_", remote).strip("_") or "remote") + "/"


def git_cmd(ctx: Context, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ctx.repo.workdir, capture_output=True, text=True,
                          env=clean_git_env({"GIT_TERMINAL_PROMPT": "0"}))


def mirror(name: str, ns: str) -> str:
    """The remote-tracking name of a ref: sessions/x, memory, notes, checkpoints/x under ``ns``."""
    if name == refs.NOTES:
        return ns + "notes"
    if name in refs.TRACE_NOTES:  # refs/notes/ai -> notes-ai
        return ns + "notes-" + name.removeprefix("refs/notes/")
    return ns + name.removeprefix("refs/oxide/")


def _ours(name: str, checkpoints: bool) -> str | None:
    """Why a remote ref is not one this pull takes (None: it is), or "" when it is one of ours
    that is not asked for or not shared (checkpoints without --checkpoints, trash, mirrors)."""
    if name in (refs.MEMORY, refs.NOTES, *refs.TRACE_NOTES):
        return None
    if name.startswith(refs.SESSIONS):
        return None if _SAFE_ID.match(name[len(refs.SESSIONS):]) else "not a session id, left alone"
    if name.startswith(refs.CHECKPOINTS):
        if not checkpoints:
            return ""
        owner, _, cid = name[len(refs.CHECKPOINTS):].partition("/")
        ok = (owner == "manual" or _SAFE_ID.match(owner)) and _HEX.match(cid)
        return None if ok else "not a checkpoint name git oxide writes, left alone"
    if name.startswith((refs.TRASH, refs.OPLOG, refs.OUTGOING, REMOTES)):
        return ""
    return "not a ref git oxide shares, left alone"


def fetch(ctx: Context, remote: str, *, checkpoints: bool = False, problems: list[str] | None = None,
          mirrored: dict[str, Any] | None = None) -> dict[str, str]:
    """Mirror the remote's oxide refs under ``namespace(remote)``; returns {remote ref: oid} of
    those fetched. A ref that is not ours, or that git cannot fetch (the remote lacks an object it
    names), is left out with a line in ``problems``: one bad ref does not stop the others.
    ``mirrored``: the mirror refs as they are now, when the caller has read them."""
    r = git_cmd(ctx, "ls-remote", remote, "refs/oxide/*", refs.NOTES, *refs.TRACE_NOTES)
    if r.returncode != 0:
        raise RemoteError(f"cannot reach remote {remote!r}: {r.stderr.strip()}",
                          hint="add it with `git remote add`, or set `git config oxide.remote`")
    wanted: dict[str, str] = {}
    dirty: set[str] = set()
    for line in r.stdout.splitlines():
        oid, _, name = line.partition("\t")
        why = _ours(name, checkpoints)
        if why is None:
            wanted[name] = oid
        elif why:
            dirty.update(p for p in _WILDCARDS if name.startswith(p))
            if problems is not None:
                problems.append(f"{remote} {name}: {why}")
    ns, git = namespace(remote), ctx.repo.git
    if mirrored is None:
        mirrored = dict(refs.iter_refs(git, ns))
    # Only what is new: a ref whose mirror already holds the remote's oid is not fetched again.
    new = sorted(n for n, oid in wanted.items() if str(mirrored.get(mirror(n, ns))) != oid)
    failed = _fetch_new(ctx, remote, ns, new, dirty)
    for spec, why in failed.items():
        name = spec[1:].partition(":")[0]
        del wanted[name]
        if problems is not None:
            problems.append(f"{remote} {name}: cannot be fetched, left alone ({why})")
    live = {mirror(n, ns) for n in wanted} | {spec.partition(":")[2] for spec in failed}
    stale = {n: (oid, None) for n, oid in mirrored.items() if n not in live}  # the fetch adds, never removes
    if stale:
        refs.update(git, stale, f"oxide: prune {remote}")  # type: ignore[arg-type]
    return wanted


def _fetch_new(ctx: Context, remote: str, ns: str, new: list[str], dirty: set[str]) -> dict[str, str]:
    """Fetch the refs ``new`` into their mirrors; {spec: git's reason} of those that failed.

    git matches each exact refspec against every ref the remote advertises for them, so n exact
    refspecs cost n^2 (git 2.39: 2,000 took 7 s, 8,000 took 57 s): many new refs of one kind come
    with one wildcard refspec instead, unless the remote holds names there that are not ours
    (``dirty``: their objects are never fetched) or the wildcard fetch fails (a ref the remote
    cannot send): then exact refspecs, ``CHUNK`` at a time, find the ones that fail."""
    for prefix in _WILDCARDS:
        mine = [n for n in new if n.startswith(prefix)]
        many = len(mine) >= WILDCARD_FROM and prefix not in dirty
        if many and _run_fetch(ctx, remote, [f"+{prefix}*:{mirror(prefix, ns)}*"]).returncode == 0:
            new = [n for n in new if not n.startswith(prefix)]
    failed: dict[str, str] = {}
    for at in range(0, len(new), CHUNK):
        failed.update(_fetch_all(ctx, remote, [f"+{n}:{mirror(n, ns)}" for n in new[at:at + CHUNK]]))
    return failed


def _run_fetch(ctx: Context, remote: str, specs: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--stdin", remote],
                          cwd=ctx.repo.workdir, capture_output=True, text=True, input="\n".join(specs) + "\n",
                          env=clean_git_env({"GIT_TERMINAL_PROMPT": "0"}))


def _fetch_all(ctx: Context, remote: str, specs: list[str]) -> dict[str, str]:
    """Fetch ``specs`` in one `git fetch`; when it fails, halve the set to find the refspecs that
    fail on their own. Returns {spec: git's reason} of those."""
    failed: dict[str, str] = {}
    budget = [64]

    def go(part: list[str]) -> None:
        if not part:
            return
        f = _run_fetch(ctx, remote, part)
        if f.returncode == 0:
            return
        if budget[0] <= 0:
            raise RemoteError(f"fetch from {remote!r} failed: {f.stderr.strip()}")
        if len(part) == 1:
            failed[part[0]] = _reason(f.stderr)
            return
        budget[0] -= 1
        go(part[:len(part) // 2])
        go(part[len(part) // 2:])

    go(specs)
    return failed


def _reason(stderr: str) -> str:
    lines = [ln.removeprefix("remote: ").strip() for ln in stderr.splitlines()]
    first = next((ln for ln in lines if ln.startswith(("error:", "fatal:")) and "aborting" not in ln), None)
    return (first or next((ln for ln in lines if ln), "git fetch failed")).removeprefix("error: ") \
        .removeprefix("fatal: ")
