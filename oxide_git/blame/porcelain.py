"""`git blame --porcelain` for `git oxide blame`: run (or taken from ``blame.prefetch``, which
started it first) and read, one entry a line; a file git does not know yet is all new lines."""

from __future__ import annotations

import os
from typing import NamedTuple

from oxide_git.core.errors import NotFound, OxideError
from oxide_git.store.context import Context

ZERO = "0" * 40  # the commit `git blame` gives a line not committed yet


class BadRevision(OxideError):
    """A revision or path git cannot blame."""


class Entry(NamedTuple):
    """One line as `git blame` gives it: its commit, its line there and here (1-based), the
    file's name in that commit, the line, and the commit's author time (seconds)."""

    commit: str
    orig: int
    final: int
    filename: str
    text: str
    time: int | None


def relative(ctx: Context, path: str) -> str:
    """``path`` (absolute, or from the worktree's top) from the worktree's top, POSIX."""
    top = str(ctx.repo.workdir)
    full = os.path.normpath(path if os.path.isabs(path) else os.path.join(top, path))
    real_full, real_top = os.path.realpath(full), os.path.realpath(top)
    for f, t in ((full, top), (real_full, real_top)):
        if f == t or f.startswith(t.rstrip("/") + "/"):
            return os.path.relpath(f, t).replace(os.sep, "/")
    raise NotFound(f"{path} is outside the repository at {top}")


def git_blame(ctx: Context, rel: str, rev: str | None, lines: tuple[int, int] | None) -> list[Entry]:
    """`git blame --porcelain` of ``rel`` (the one started first, ``blame.prefetch``, when it was
    started for this question), one entry a line; a file not in HEAD: every line new."""
    from oxide_git.blame import prefetch as blame_prefetch

    early = blame_prefetch.take(os.path.join(ctx.repo.workdir, rel), rev, lines)
    if early is not None:
        code, out, stderr = early
    else:
        args = ["git", "blame", "--porcelain"]
        if lines:
            args += ["-L", f"{lines[0]},{lines[1]}"]
        if rev:
            args.append(rev)
        import subprocess

        from oxide_git.git.repo import clean_git_env

        r = subprocess.run([*args, "--", rel], cwd=ctx.repo.workdir, capture_output=True, env=clean_git_env())
        code, out, stderr = r.returncode, r.stdout, r.stderr
    if code != 0:
        err = stderr.decode("utf-8", "replace").strip().removeprefix("fatal: ")
        new = "no such path" in err or "HEAD" in err
        if rev is None and new and os.path.isfile(ctx.repo.workdir / rel):
            return _untracked(ctx, rel, lines)  # not in HEAD (new, or no commit yet): all of it is new
        raise BadRevision(f"cannot blame {rel}{' at ' + rev if rev else ''}: {err}",
                          hint="check the path and the revision (`git log -- PATH`)")
    return parse_porcelain(out)


def _untracked(ctx: Context, rel: str, lines: tuple[int, int] | None) -> list[Entry]:
    data = (ctx.repo.workdir / rel).read_bytes()
    texts = data.decode("utf-8", "replace").splitlines()
    first, last = (lines if lines else (1, len(texts)))
    if lines and (first < 1 or first > max(len(texts), 1)):
        raise BadRevision(f"file {rel} has only {len(texts)} lines")
    return [Entry(ZERO, n, n, rel, texts[n - 1], None) for n in range(first, min(last, len(texts)) + 1)]


def parse_porcelain(out: bytes) -> list[Entry]:
    """`git blame --porcelain` output as one entry per line: each line's header (commit, line
    in it, line now), the commit's fields the first time it comes, then TAB and the line."""
    entries: list[Entry] = []
    names: dict[str, str] = {}
    times: dict[str, int] = {}
    head: list[str] | None = None
    for raw in out.split(b"\n"):
        if head is None:
            if raw:
                head = raw.decode("ascii", "replace").split(" ")
            continue
        if raw[:1] == b"\t":
            sha = head[0]
            entries.append(Entry(sha, int(head[1]), int(head[2]), names.get(sha, ""),
                                  raw[1:].decode("utf-8", "replace"), times.get(sha)))
            head = None
        elif raw.startswith(b"filename "):
            names[head[0]] = _unquote(raw[9:].decode("utf-8", "surrogateescape"))
        elif raw.startswith(b"author-time "):
            times[head[0]] = int(raw[12:] or 0)
    return entries


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        return name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode(
            "latin-1").decode("utf-8", "surrogateescape")
    return name
