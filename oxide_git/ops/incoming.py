"""What a pull takes from a remote: every fetched ref screened before a local ref moves to it.

A remote holds whatever anyone with push access put there. Before `pull` reconciles a ref, the
objects it reaches that no local ref reaches yet are listed by `git rev-list --objects` and sized
from their headers by `git cat-file --batch-check` (neither inflates a blob): a ref reaching an
object over ``oxide.maxRemoteObjectSize``, a tree nested deeper than ``MAX_DEPTH``, or an object git
cannot walk (a missing or mistyped parent) is refused whole, and its objects are never read here.
A session log that passes is then read the way `reindex` will read it (``check_log``): every new
message must decode, so the index never meets a log it cannot show. Screening many refs costs one
pass; only when something is refused is the set halved to find the ref that holds it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pygit2

from oxide_git.core import codec
from oxide_git.core.errors import OxideError
from oxide_git.git.repo import Repo, clean_git_env
from oxide_git.store import sessionlog
from oxide_git.store.context import Context

# An object this size costs a reader about five times as much memory (the blob, its decoded text,
# what is rendered of it): 8 MiB keeps `show` and `export` of any pulled message under 100 MB.
DEFAULT_MAX_OBJECT = 8 * 1024 * 1024
MAX_DEPTH = 256  # folders in folders; real worktrees stay under 40, Python's own walks stop at ~1000
_MAX_SPLITS = 64


@dataclass(frozen=True)
class Limits:
    max_object: int = DEFAULT_MAX_OBJECT
    max_depth: int = MAX_DEPTH


def limits(ctx: Context) -> Limits:
    return Limits(max(1024, ctx.config_size("oxide.maxRemoteObjectSize", DEFAULT_MAX_OBJECT)))


def size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


def screen(ctx: Context, tips: Mapping[str, str], lim: Limits,
           have: Sequence[str] | None = None) -> dict[str, str]:
    """``{ref: why}`` for the refs (name -> fetched id) that reach an object over the limits or one
    git cannot walk; objects the local refs already reach are not looked at again (``have``: only
    those these commits reach, when the caller knows that is enough: a session's log shares
    nothing with other refs but its own older tips, and walking from every one of a team's
    100,000 refs costs more than the screening)."""
    items = sorted(tips.items())
    out: dict[str, str] = {}
    budget = [_MAX_SPLITS]

    def bad(part: list[tuple[str, str]]) -> None:
        why = _scan(ctx, [oid for _n, oid in part], lim, have)
        if why is None:
            return
        if len(part) == 1 or budget[0] <= 0:
            out.update({name: why for name, _oid in part})
            return
        budget[0] -= 1
        mid = len(part) // 2
        bad(part[:mid])
        bad(part[mid:])

    if items:
        bad(items)
    return out


def _scan(ctx: Context, oids: list[str], lim: Limits, have: Sequence[str] | None) -> str | None:
    """The first reason to refuse what ``oids`` reach beyond the local refs (or ``have``), or None."""
    env = clean_git_env({"GIT_TERMINAL_PROMPT": "0"})
    cwd = ctx.repo.workdir
    besides = ["--not", "--exclude=refs/oxide/remotes/*", "--all"] if have is None else []
    rev = subprocess.Popen(
        ["git", "rev-list", "--objects", "--stdin", *besides],
        cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cat = subprocess.Popen(
        ["git", "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize) %(rest)"],
        cwd=cwd, env=env, stdin=rev.stdout, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert rev.stdin is not None and rev.stdout is not None and cat.stdout is not None
    rev.stdout.close()  # cat-file holds it now
    try:
        rev.stdin.write("".join([*(o + "\n" for o in oids), *("^" + o + "\n" for o in have or ())]).encode())
        rev.stdin.close()
    except BrokenPipeError:
        pass
    why = None
    for raw in cat.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        oid, _, rest = line.partition(" ")
        kind, _, rest = rest.partition(" ")
        size, _, path = rest.partition(" ")
        if kind == "missing" or not size.isdigit():
            why = f"object {oid} is missing"
            break
        what = f"{kind} {path}" if path else f"{kind} {oid[:12]}"
        if int(size) > lim.max_object:
            why = (f"{what} is {size_text(int(size))}, over the {size_text(lim.max_object)} git oxide "
                   "takes from a remote (oxide.maxRemoteObjectSize); not read")
            break
        if path.count("/") >= lim.max_depth:
            why = f"its trees are nested more than {lim.max_depth} deep (at {path[:60]}...)"
            break
    if why is not None:
        rev.kill()
        cat.kill()
    cat.stdout.close()
    cat.wait()
    err = rev.stderr.read().decode("utf-8", "replace").strip() if rev.stderr else ""
    if rev.stderr:
        rev.stderr.close()
    if rev.wait() != 0 and why is None:
        first = next((ln for ln in err.splitlines() if ln.strip()), "git rev-list failed")
        why = f"git cannot walk it: {first.removeprefix('fatal: ').removeprefix('error: ')}"
    return why


def check_log(repo: Repo, sid: str, theirs: pygit2.Oid, known: pygit2.Oid | None) -> None:
    """A screened session log read as the index will read it: the session it names, and every
    message after what ``known`` (the local tip) already holds; OxideError says what is wrong."""
    log = sessionlog.load_commit(repo, theirs)
    if log.session.id != sid:
        raise OxideError(f"its log names session {log.session.id}")
    old = None
    if known is not None:
        c = repo.git.get(known)
        old = c.peel(pygit2.Tree) if isinstance(c, pygit2.Commit) else None
    start = sessionlog.first_difference(repo, old, log.commit.tree)
    for seq, data in sessionlog.iter_blobs(repo, log.commit.tree, start):
        try:
            codec.decode_message(data)
        except OxideError as e:
            raise OxideError(f"message {seq}: {e.message}") from None
