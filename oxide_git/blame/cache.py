"""`git oxide blame`'s answers kept in ``<git-common-dir>/oxide/cache/blame/``, served before
anything heavy is imported (stdlib only: ``os``, ``sys``, ``marshal``, ``gitdirs``).

Git is the source of truth and the cache only ever repeats an answer the full command gave for
exactly the same inputs. An answer is a function of the file's bytes and mtime, what HEAD,
refs/notes/oxide, refs/notes/ai and refs/notes/agent-trace point at (the refs files), the git
configuration, the index
(checkpoints, sessions, their calls; keyed by its files' size, mtime and inode), the object
folders of the commits it abbreviates (a new object there can lengthen an abbreviation), the
environment's GIT_*/OXIDE_* variables, the worktree's undo journal, and oxide's own code; the key
holds all of them, read before and after the full run, and the answer is kept only when they did
not move during it and none of the stat-keyed files was written in the last ``RACY_NS`` (a write
within the same clock tick would leave its mtime unchanged: git's "racy" rule). Anything the key
cannot see makes the command skip the cache: a revision (``--rev``), include or ignoreRevs in a
config, alternates, variables that move the repository, a file or message dated after now. The
text form's ages are worked out at print time; the other forms do not depend on the clock.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from typing import Any

from oxide_git.core.ago import ago_ms
from oxide_git.git import gitdirs
from oxide_git.git.gitdirs import REPO_ENV

FORMAT = 1
RACY_NS = 100_000_000  # 0.1 s: more than any file system's timestamp tick
# Variables naming other files than the key reads (GIT_CEILING_DIRECTORIES only decides whether
# the repository is found at all, and every GIT_* value is in the key).
_MOVERS = (*(k for k in REPO_ENV if k != "GIT_CEILING_DIRECTORIES"), "GIT_CONFIG",
           "GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE")
_UNKEYED = ("OXIDE_NOW", "GIT_EXEC_PATH", "GIT_PREFIX")  # the clock; what `git oxide` adds for us
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # oxide_git/


def line_range(value: str) -> tuple[int, int] | None:
    """``START,END``, ``START,+COUNT`` or ``START`` (to the end) as (first, last); None if not."""
    first, sep, last = value.partition(",")
    try:
        start = int(first)
        end = (1 << 31) if not sep or not last else (start + int(last[1:]) - 1 if last.startswith("+")
                                                     else int(last))
    except ValueError:
        return None
    return (start, end) if 1 <= start <= end else None


def form_of(porcelain: bool, as_json: bool, summary: bool) -> str | None:
    """The output form the flags ask for; None when they clash."""
    if porcelain and (as_json or summary):
        return None
    if summary:
        return "summary-json" if as_json else "summary"
    return "json" if as_json else "porcelain" if porcelain else "text"


def parse(argv: list[str]) -> tuple[str, str | None, tuple[int, int] | None, str] | None:
    """(FILE, rev, lines, form) of the plain form of ``blame ARGV``; None for anything else."""
    path = rev = None
    lines = None
    flags: set[str] = set()
    args = iter(argv)
    for a in args:
        if a in ("--porcelain", "--json", "--summary"):
            flags.add(a)
        elif a in ("-L", "--rev"):
            value = next(args, None)
            if value is None:
                return None
            if a == "-L":
                lines = line_range(value)
                if lines is None:
                    return None  # click says what is wrong
            else:
                rev = value
        elif a.startswith("-") or path is not None:
            return None
        else:
            path = a
    form = form_of("--porcelain" in flags, "--json" in flags, "--summary" in flags)
    if path is None or form is None:
        return None
    return path, rev, lines, form


def format_text(rows: list[tuple[str, str, int | None, str, str]], now_ms: int) -> str:
    """`git blame`-like lines of (id, who, when, number, text) rows; ages as of ``now_ms``."""
    ages: dict[int | None, str] = {}  # a turn's lines share their time
    for r in rows:
        if r[2] not in ages:
            ages[r[2]] = ago_ms(r[2], now_ms) if r[2] else "-"
    shown = [(a, b, ages[c], d, t) for a, b, c, d, t in rows]
    if not shown:
        return ""
    w = [max(len(r[i]) for r in shown) for i in range(4)]
    return "".join(f"{a:<{w[0]}} ({b:<{w[1]}} {c:>{w[2]}} {d:>{w[3]}}) {t}\n" for a, b, c, d, t in shown)


def now_ms() -> int:
    now = os.environ.get("OXIDE_NOW")
    if now and now.isdigit():
        return int(now)
    import time

    return time.time_ns() // 1_000_000


# the key -----------------------------------------------------------------------------------------


class Slot:
    """Where one blame's answer is kept and what it depends on (``None`` from ``slot``: not cacheable)."""

    def __init__(self, path: str, key: tuple[Any, ...], newest_ns: int, common: str) -> None:
        self.path, self.key, self.newest_ns, self.common = path, key, newest_ns, common


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def digest_of(data: bytes) -> bytes:
    """20 bytes of blake2b."""
    return hashlib.blake2b(data, digest_size=20).digest()


_CODE: list[tuple[str, int, int]] | None = None


def code() -> list[tuple[str, int, int]]:
    """oxide's own modules (name, size, mtime), read once a process: the code that is running (a
    long-lived process, `mcp`, keeps running what it loaded even if the files change)."""
    global _CODE
    if _CODE is None:
        _CODE = _code()
    return _CODE


def _code() -> list[tuple[str, int, int]]:
    out = []
    folders = [_PACKAGE]
    while folders:  # every package of oxide_git (not __pycache__, not resources)
        with os.scandir(folders.pop()) as it:
            for e in it:
                if e.name.endswith(".py"):
                    st = e.stat()
                    out.append((e.path[len(_PACKAGE):], st.st_size, st.st_mtime_ns))
                elif e.name[0] not in "._" and e.name != "resources" and e.is_dir():
                    folders.append(e.path)
    out.sort()
    return out


def config_files(git_dir: str, common: str, env: Any = os.environ) -> list[bytes | None] | None:
    """The git configuration as read raw: the repository's and worktree's files, the user's, the
    system's, and the GIT_CONFIG_* variables; None when one includes another file (or sets
    blame's ignoreRevs): what they say is not all here."""
    home = env.get("HOME", "")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    user = ([env["GIT_CONFIG_GLOBAL"]] if "GIT_CONFIG_GLOBAL" in env
            else [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")])
    system = env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig")
    got = [_read(p) for p in (os.path.join(common, "config"), os.path.join(git_dir, "config.worktree"),
                              *user, system)]
    got.append("\0".join(v for k, v in sorted(env.items()) if k.startswith("GIT_CONFIG_")).encode(
        "utf-8", "surrogateescape"))  # GIT_CONFIG_COUNT, _KEY_n, _VALUE_n, _PARAMETERS
    for data in got:
        low = (data or b"").lower()
        if b"include" in low or b"ignorerevs" in low:
            return None  # files the key does not follow
    return got


def slot(cwd: str, file: str, rev: str | None, lines: tuple[int, int] | None, form: str) -> Slot | None:
    """The cache slot of `git oxide blame FILE` in ``cwd`` with its key read now; None when the
    answer depends on something the key cannot see."""
    if rev is not None or any(os.environ.get(k) for k in _MOVERS):
        return None
    try:
        found = gitdirs.locate(cwd)
    except (OSError, ValueError):
        return None
    if found is None or found[1] is None:
        return None
    top, git_dir = found[0], found[1]
    common = gitdirs.common_dir(git_dir)
    full = os.path.normpath(file if os.path.isabs(file) else os.path.join(cwd, file))
    real_full, real_top = os.path.realpath(full), os.path.realpath(top)
    rel = None
    for f, t in ((full, top), (real_full, real_top)):
        if f == t or f.startswith(t.rstrip("/") + "/"):
            rel = os.path.relpath(f, t)
            break
    if rel is None or os.path.exists(os.path.join(common, "objects", "info", "alternates")):
        return None
    configs = config_files(git_dir, common)
    if configs is None:
        return None
    try:
        st = os.stat(os.path.join(top, rel))
        data = _read(os.path.join(top, rel))
    except OSError:
        return None
    if data is None or st.st_mtime_ns // 1_000_000 > now_ms():
        return None  # a file from the future: the last interval's end is the clock's
    head = _read(os.path.join(git_dir, "HEAD")) or b""
    target = head[5:].strip().decode("utf-8", "surrogateescape") if head.startswith(b"ref: ") else ""
    refs = [head, _read(os.path.join(git_dir, target)) if target else None,
            _read(os.path.join(common, target)) if target else None,
            _read(os.path.join(common, "refs", "notes", "oxide")),
            _read(os.path.join(common, "refs", "notes", "ai")),  # other tools' notes (blame_foreign)
            _read(os.path.join(common, "refs", "notes", "agent-trace")),
            digest_of(_read(os.path.join(common, "packed-refs")) or b""),
            _read(os.path.join(common, "shallow")), _read(os.path.join(common, "info", "grafts")),
            os.path.isdir(os.path.join(common, "refs", "replace"))
            and sorted(os.listdir(os.path.join(common, "refs", "replace")))]
    oxide = os.path.join(common, "oxide")
    wal = _stat(os.path.join(oxide, "index.db-wal"))
    # An empty WAL holds nothing (SQLite makes one when the index is opened and removes it when
    # the last connection closes): only one with frames in it is part of what the index says.
    stats = [_stat(os.path.join(oxide, "index.db")), wal if wal and wal[0] else None]
    stats.append(_stat(os.path.join(common, "objects", "pack")))
    # the undo journal: which checkpoints a rewind or an undo restored (``blame_restores``)
    worktree = "main" if os.path.realpath(git_dir) == os.path.realpath(common) else os.path.basename(
        os.path.normpath(git_dir))
    stats.append(_stat(os.path.join(oxide, "worktrees", worktree, "journal.jsonl")))
    envs = sorted((k, v) for k, v in os.environ.items()
                  if k.startswith(("GIT_", "OXIDE_", "HOME", "XDG_CONFIG_HOME")) and k not in _UNKEYED)
    modules = code()
    newest = max([s[1] for s in stats if s] + [c[2] for c in modules])
    key = (FORMAT, top, git_dir, rel, lines, form, st.st_mtime_ns, digest_of(data), tuple(refs),
           tuple(configs), tuple(stats), tuple(envs), tuple(modules), sys.version)
    name = digest_of(repr((git_dir, rel, lines, form)).encode("utf-8", "surrogateescape")).hex()
    return Slot(os.path.join(oxide, "cache", "blame", name), key, newest, common)


def _object_dirs(common: str, commits: list[str]) -> tuple[tuple[str, tuple[int, int, int] | None], ...]:
    """The loose-object folders of ``commits`` (a new object there can lengthen an abbreviation)."""
    heads = sorted({c[:2] for c in commits})
    return tuple((h, _stat(os.path.join(common, "objects", h))) for h in heads)


def lookup(s: Slot) -> Any:
    """The answer kept for ``s``'s key, or None."""
    data = _read(s.path)
    if data is None:
        return None
    try:
        key, commits, dirs, payload = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None
    if key != s.key or dirs != _object_dirs(s.common, commits):
        return None
    return payload


def store(before: Slot, after: Slot | None, commits: list[str], payload: Any) -> None:
    """Keep ``payload`` when nothing the key follows moved between ``before`` and ``after`` (the
    key read again after the run) and nothing it stats was written within the racy window."""
    import time

    if after is None or after.key != before.key:
        return
    dirs = _object_dirs(before.common, commits)
    newest = max([before.newest_ns] + [d[1] for _h, d in dirs if d])
    if time.time_ns() - newest < RACY_NS:
        return
    try:
        os.makedirs(os.path.dirname(before.path), exist_ok=True)
        tmp = f"{before.path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(marshal.dumps((before.key, commits, dirs, payload)))
        os.replace(tmp, before.path)
    except OSError:
        pass  # a cache: the next run works it out again


_keyed: tuple[tuple[Any, ...], Slot | None] | None = None  # the slot ``serve`` read, and for what


def slot_before(cwd: str, file: str, rev: str | None, lines: tuple[int, int] | None,
                form: str) -> Slot | None:
    """``slot`` of the question before the run that answers it: the one ``serve`` read for the same
    question in this process (earlier still: as good for ``store``), else read now."""
    global _keyed
    kept, _keyed = _keyed, None
    if kept is not None and kept[0] == (cwd, file, rev, lines, form):
        return kept[1]
    return slot(cwd, file, rev, lines, form)


def forget() -> None:
    """Drop the slot ``serve`` read and no run took (a process that goes on: the files it was
    read from may move before the same question is asked again)."""
    global _keyed
    _keyed = None


def serve(argv: list[str]) -> int | None:
    """Print the kept answer of ``blame ARGV`` and return 0; None when there is none."""
    global _keyed
    if os.environ.get("OXIDE_BLAME_CACHE") == "0":
        return None
    got = parse(argv)
    if got is None:
        return None
    try:
        cwd = os.getcwd()
        s = slot(cwd, got[0], got[1], got[2], got[3])
        _keyed = ((cwd, *got), s)
        payload = None if s is None else lookup(s)
    except OSError:
        return None
    if payload is None:
        return None
    form, body = payload
    out = format_text(body, now_ms()) if form == "text" else body
    try:
        sys.stdout.write(out)
    except BrokenPipeError:
        pass
    return 0
