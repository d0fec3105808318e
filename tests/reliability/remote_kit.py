"""Building hostile remotes: real bare repositories holding what a teammate's push could hold, and
measuring the real `git oxide` process that meets them (its time and peak memory).

The objects are written the way a hostile client would: with git's own plumbing (``hash-object
--literally``, ``mktree``) or as raw loose objects, so that nothing of ours shapes them.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..conftest import git
from .conftest import env

MB = 1024 * 1024


@dataclass
class Run:
    """One `git oxide` run: its exit, output, wall time and peak resident memory."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float  # the oxide process and every process it started (git fetch, index-pack...)

    @property
    def out(self) -> str:
        return self.stdout + self.stderr


def measured(cwd: Path, *args: str, timeout: float = 300) -> Run:
    """``git oxide ARGS`` as the user runs it, and its peak RSS: the largest of it and every process
    it started (git's fetch and index-pack too), as ``/usr/bin/time`` reports it. A process forked
    from this one starts with the test process's resident pages and keeps that high-water mark
    through exec, so its own rusage would only say "no more than pytest"; time forks it from a
    small process."""
    import shutil
    import tempfile

    timer = shutil.which("time", path="/usr/bin")
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp, "peak")
        cmd = ["git", "oxide", *args]
        if timer:
            cmd = [timer, "-q", "-f", "%M", "-o", str(peak_file), *cmd]
        t = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"git oxide {' '.join(args)} took over {timeout} s") from None
        seconds = time.monotonic() - t
        kb = float(peak_file.read_text().split()[-1]) if timer else float("nan")
    return Run(p.returncode, p.stdout, p.stderr, seconds, kb / 1024)


def write_zero_blob(objects_dir: Path, size: int) -> str:
    """A loose blob of ``size`` zero bytes (1 GiB is ~1 MB on disk), streamed: never in memory."""
    head = b"blob %d\0" % size
    h = hashlib.sha1(head)
    z = zlib.compressobj(9)
    chunk = bytes(MB)
    tmp = objects_dir / f"tmp-zero-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(z.compress(head))
        left = size
        while left:
            b = chunk if left >= MB else bytes(left)
            h.update(b)
            f.write(z.compress(b))
            left -= len(b)
        f.write(z.flush())
    hexid = h.hexdigest()
    (objects_dir / hexid[:2]).mkdir(exist_ok=True)
    os.replace(tmp, objects_dir / hexid[:2] / hexid[2:])
    return hexid


def literally(repo: Path, kind: str, data: bytes) -> str:
    """An object of any type and content, unchecked (``git hash-object -w --literally``)."""
    r = subprocess.run(["git", "hash-object", "-w", "--literally", "-t", kind, "--stdin"], cwd=repo,
                       input=data, capture_output=True, check=True)
    return r.stdout.decode().strip()


def mktree(repo: Path, entries: list[tuple[str, str, str, str]]) -> str:
    """A tree from ``(mode, type, id, name)`` rows (``git mktree --missing``: ids need not exist)."""
    text = "".join(f"{m} {t} {o}\t{n}\n" for m, t, o, n in entries)
    return subprocess.run(["git", "mktree", "--missing"], cwd=repo, input=text, capture_output=True,
                          text=True, check=True).stdout.strip()


def tree_rows(repo: Path, tree: str) -> list[tuple[str, str, str, str]]:
    rows = []
    for line in git(repo, "ls-tree", "-z", tree).split("\0"):
        if line:
            meta, _, name = line.partition("\t")
            m, t, o = meta.split()
            rows.append((m, t, o, name))
    return rows


def with_entry(repo: Path, tree: str, path: list[str], mode: str, kind: str, oid: str) -> str:
    """``tree`` with the entry at ``path`` (folders made as needed) set to ``oid``."""
    rows = [r for r in tree_rows(repo, tree) if r[3] != path[0]] if tree else []
    if len(path) == 1:
        rows.append((mode, kind, oid, path[0]))
    else:
        sub = next((r[2] for r in tree_rows(repo, tree) if r[3] == path[0]), "") if tree else ""
        rows.append(("040000", "tree", with_entry(repo, sub, path[1:], mode, kind, oid), path[0]))
    return mktree(repo, rows)


def commit(repo: Path, tree: str, parents: list[str], message: str) -> str:
    body = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
    body += "author git oxide <oxide@localhost> 1767225600 +0000\n"
    body += "committer git oxide <oxide@localhost> 1767225600 +0000\n\n" + message
    return literally(repo, "commit", body.encode())


def set_ref(repo: Path, name: str, oid: str) -> None:
    git(repo, "update-ref", name, oid)


def store_state(root: Path) -> dict[str, str]:
    """Everything of ours and the user's a refused pull must leave as it was: every ref outside the
    remote's mirror, and the index's rows."""
    import sqlite3

    refs = git(root, "for-each-ref", "--format=%(refname) %(objectname)")
    state = {"refs": "\n".join(ln for ln in refs.splitlines() if not ln.startswith("refs/oxide/remotes/"))}
    db = root / ".git" / "oxide" / "index.db"
    if db.exists():
        c = sqlite3.connect(db)
        try:
            for table in ("sessions", "messages", "checkpoints", "links"):
                rows = c.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                state[table] = repr(rows)
        finally:
            c.close()
    return state
