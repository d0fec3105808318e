"""Checkpoint retention: when a checkpoint expires, what keeps it, and pins.

A checkpoint expires ``oxide.checkpointTTL`` after it was taken (a duration: ``90s``, ``12h``,
``30d``, ``2w``, or ``never``; default ``30d``), measured with the context's clock. Three things
keep it past that: a pin (the ref ``refs/oxide/pins/<checkpoint id>``, which also keeps its commit
alive on its own), a note on ``refs/notes/oxide`` naming it on a commit that a branch or tag still
reaches, and nothing else. Expiry only matters to ``git oxide gc``, which removes expired refs.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable
from typing import Any

import pygit2

from oxide_git.core.errors import NotFound, OxideError
from oxide_git.core.model import to_iso
from oxide_git.git import refs
from oxide_git.store.context import Context

PINS = "refs/oxide/pins/"
DEFAULT_CHECKPOINT_TTL = "30d"
DEFAULT_TRASH_TTL = "14d"
_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$", re.I)


class BadDuration(OxideError):
    pass


def parse_duration(text: str) -> int | None:
    """Milliseconds of ``90s``/``12h``/``30d``/``2w`` (bare numbers are days); None for ``never``."""
    t = text.strip().lower()
    if t in ("never", "off", "0", "none", "forever"):
        return None
    m = _DURATION.match(t)
    if not m:
        raise BadDuration(f"'{text}' is not a duration",
                          hint="use a number with s, m, h, d or w (e.g. 30d), or `never`")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "d").lower()])


def ttl_ms(ctx: Context, key: str, default: str) -> int | None:
    """The duration configured under ``key`` (git config), in ms; None when it is ``never``."""
    return parse_duration(ctx.config(key, default) or default)


def pin_ref(checkpoint_id: str) -> str:
    return PINS + checkpoint_id


def pinned_ids(git: pygit2.Repository) -> set[str]:
    return {name[len(PINS):] for name, _ in refs.iter_refs(git, PINS)}


def _reachable_tips(git: pygit2.Repository) -> list[pygit2.Oid]:
    tips = []
    for name, oid in refs.iter_refs(git, "refs/"):
        if name.startswith(("refs/heads/", "refs/tags/", "refs/remotes/")):
            obj = git.get(oid)
            try:
                commit = obj.peel(pygit2.Commit) if obj is not None else None
            except (pygit2.GitError, ValueError):
                commit = None
            if commit is not None:
                tips.append(commit.id)
    return tips


def linked_ids(git: pygit2.Repository) -> set[str]:
    """Checkpoints named by a note on a commit that a branch, tag or remote branch reaches."""
    try:
        notes = list(git.notes(refs.NOTES))  # type: ignore[call-arg]  # stubs lack the ref argument
    except (pygit2.GitError, KeyError, ValueError):
        return set()
    if not notes:
        return set()
    tips = _reachable_tips(git)
    out: set[str] = set()
    for note in notes:
        try:
            data = json.loads(note.message)
        except ValueError:
            continue
        cps = data.get("checkpoints") if isinstance(data, dict) else None
        if not cps:
            continue
        target = note.annotated_id
        if target in git and any(t == target or git.descendant_of(t, target) for t in tips):
            out.update(str(c) for c in cps)  # (a pulled note may name a commit not fetched here)
    return out


def _expand(ids: Iterable[str], candidates: Iterable[str]) -> set[str]:
    """Full ids of ``candidates`` named by ``ids`` (which may be abbreviated)."""
    ids = [i for i in ids if i]
    return {c for c in candidates if any(c.startswith(i) for i in ids)}


class Policy:
    """What decides whether a checkpoint may go: the TTL, the pins and the linked checkpoints."""

    def __init__(self, ctx: Context) -> None:
        git = ctx.repo.git
        self.now_ms = ctx.now_ms
        self.ttl = ttl_ms(ctx, "oxide.checkpointTTL", DEFAULT_CHECKPOINT_TTL)
        self.pinned = pinned_ids(git)
        self._linked_raw = linked_ids(git)

    def linked(self, checkpoint_id: str) -> bool:
        return bool(_expand(self._linked_raw, [checkpoint_id]))

    def describe(self, checkpoint_id: str, created_at: int) -> dict[str, Any]:
        """``expires_at`` (ms or None), ``pinned``, ``linked``, ``expired`` and a human ``expiry``."""
        pinned = checkpoint_id in self.pinned
        linked = self.linked(checkpoint_id)
        expires = None if self.ttl is None else created_at + self.ttl
        expired = expires is not None and expires <= self.now_ms and not pinned and not linked
        if pinned:
            text = "pinned"
        elif linked:
            text = "kept: linked from a commit"
        elif expires is None:
            text = "never expires"
        elif expired:
            text = "expired: code rewind no longer possible"
        else:
            text = f"expires in {human(expires - self.now_ms)}"
        return {"expires_at": expires, "pinned": pinned, "linked": linked, "expired": expired,
                "expiry": text}


def human(ms: int) -> str:
    s = max(0, ms) // 1000
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if s >= size:
            n = s // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{s} second{'s' if s != 1 else ''}"


def annotate(ctx: Context, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Checkpoint index rows (``created_at`` in ms) with their expiry fields added."""
    if not rows:
        return rows
    policy = Policy(ctx)
    out = []
    for r in rows:
        d = policy.describe(r["id"], int(r["created_at"]))
        d["expires_at"] = to_iso(d["expires_at"]) if d["expires_at"] is not None else None
        out.append({**r, **d})
    return out


def pin(ctx: Context, ref: str, *, on: bool = True) -> dict[str, Any]:
    """Pin (or unpin) a checkpoint; returns ``{"id", "ref", "pinned", "changed"}``."""
    git = ctx.repo.git
    cid = ctx.index.resolve_checkpoint(ref)
    name = pin_ref(cid)
    current = refs.read(git, name)
    if on:
        if git.get(cid) is None:
            raise NotFound(f"checkpoint {ref} has expired: its commit is gone")
        if current is None:
            refs.update(git, {name: (None, pygit2.Oid(hex=cid))}, "oxide: pin checkpoint")
    elif current is not None:
        refs.update(git, {name: (current, None)}, "oxide: unpin checkpoint")
    return {"id": cid, "ref": name, "pinned": on, "changed": (current is None) == on}


def disk_usage(ctx: Context, tips: Iterable[str], exclude: Iterable[str] = ()) -> int:
    """Bytes on disk of the objects reachable from ``tips`` and not from ``exclude``."""
    lines = [t for t in tips] + ["^" + e for e in exclude]
    if not [t for t in lines if not t.startswith("^")]:
        return 0
    r = subprocess.run(["git", "rev-list", "--objects", "--disk-usage", "--stdin"],
                       cwd=ctx.repo.workdir, input="\n".join(lines) + "\n", capture_output=True,
                       text=True)
    try:
        return int(r.stdout.strip() or 0) if r.returncode == 0 else 0
    except ValueError:
        return 0  # not a number: a git whose --disk-usage prints something else


def user_tips(ctx: Context) -> list[str]:
    """Tips of the user's own refs (branches, tags, remotes) and of every worktree's HEAD."""
    git = ctx.repo.git
    out = [str(t) for t in _reachable_tips(git)]
    try:
        if not git.head_is_unborn:
            out.append(str(git.head.target))
    except pygit2.GitError:
        pass
    return out


def usage(ctx: Context, largest: int = 5, limit: int = 300) -> dict[str, Any]:
    """Space oxide's refs use beyond the user's refs, per family, and the largest checkpoints."""
    git = ctx.repo.git
    mine = user_tips(ctx)
    out: dict[str, Any] = {}
    for label, prefix in (("sessions", refs.SESSIONS), ("checkpoints", refs.CHECKPOINTS),
                          ("oplog", refs.OPLOG), ("trash", refs.TRASH), ("memory", refs.MEMORY)):
        tips = [str(o) for _, o in refs.iter_refs(git, prefix)]
        out[label] = disk_usage(ctx, tips, mine)
    sizes = []
    for _name, oid in list(refs.iter_refs(git, refs.CHECKPOINTS))[:limit]:
        commit = git.get(oid)
        parents = [str(p) for p in getattr(commit, "parent_ids", [])]
        sizes.append((disk_usage(ctx, [str(oid)], parents + mine), str(oid)))
    sizes.sort(reverse=True)
    out["largest checkpoints"] = [{"id": c, "bytes": b} for b, c in sizes[:largest] if b]
    return out


def size_text(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    for unit in ("KiB", "MiB", "GiB"):
        n_f = n / 1024
        if n_f < 1024 or unit == "GiB":
            return f"{n_f:.1f} {unit}"
        n = int(n_f)
    return f"{n} bytes"


def usage_report(ctx: Context) -> dict[str, str]:
    """``usage`` as doctor prints it: ``space <family>`` and ``largest checkpoints``."""
    try:
        u = usage(ctx)
    except (OSError, pygit2.GitError):
        return {}
    out = {f"space {k}": size_text(v) for k, v in u.items() if isinstance(v, int)}
    out["largest checkpoints"] = ", ".join(
        f"{c['id'][:12]} ({size_text(c['bytes'])})" for c in u["largest checkpoints"]) or "-"
    return out
