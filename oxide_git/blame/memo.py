"""What a blame works out that depends only on immutable inputs, kept across runs in
``<git-common-dir>/oxide/cache/blame-memo/`` (a file a blamed path, stdlib ``marshal``): the
cold blame's work.

Unlike ``blame_cache`` (a whole answer for exactly the same question, keyed by files' stats),
every entry here is keyed by everything it is a function of, so it never goes stale and needs no
check of the clock or of files: a commit's tree, time and first parent (by its id), the blob at a
path of a tree (by tree id and path), a note's checkpoints and sessions (by the note's blob id),
the line hunks between two blobs (by their ids), how the tool calls of an interval between two
checkpoints explain a file's change (the ``steps`` table: by a digest of the two versions' ids,
the interval's start and governing prompt, and for each call in it, the index rows read about it,
its message's blob id, its session's row and its turn's prompt; ``blame.calls.WorktreeCalls.key``),
and a whole walk back through a timeline (the ``walks`` table, ``blame.timeline.Timeline.walk``:
by the states it goes through, the final version and the lines; served only when the intervals it
explained have the same keys again). So a blame after one new checkpoint works out only the new
interval, and one over an unchanged history reads no object but the notes tree.

The whole file is ignored when it is damaged (a digest of its content heads it), of another
format, or written by other code (the key of oxide's own modules, as ``blame_cache`` keys
answers); it is replaced whole (a temporary file renamed over it), and started again empty when it
grows past ``MAX_ENTRIES``.
``OXIDE_BLAME_MEMO=0`` turns it off (neither read nor written).
"""

from __future__ import annotations

import marshal
import os
import sys
from typing import Any

from oxide_git.blame.cache import code, digest_of  # the modules' list: the answer cache keys by it too

FORMAT = 1
MAGIC = b"oxide-blame-memo\n"  # then a digest of the rest: a file damaged anywhere is not read
MAX_ENTRIES = 50_000  # a file's: ~5 MB, read in ~20 ms
TABLES = ("commits", "paths", "notes", "diffs", "steps", "walks")


def _code_key() -> tuple[Any, ...]:
    return (FORMAT, sys.version, tuple(code()))


class Memo:
    """The memo's tables (dicts by table name), read once; ``save`` writes them back when a run
    added to them. ``path`` None: a memo that keeps nothing (turned off, or no oxide folder)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.tables: dict[str, dict[Any, Any]] = {t: {} for t in TABLES}
        self.added = 0
        self.written_ns = 0  # when the file read was written (0: none)
        self._code: tuple[Any, ...] | None = None
        if path is None:
            return
        try:
            with open(path, "rb") as f:
                data = f.read()
                self.written_ns = os.fstat(f.fileno()).st_mtime_ns
        except OSError:
            return
        body = data[len(MAGIC) + 20:]
        if data[:len(MAGIC)] != MAGIC or data[len(MAGIC):len(MAGIC) + 20] != digest_of(body):
            return  # damaged, cut short, or another format: started again
        try:
            head, tables = marshal.loads(body)
        except (ValueError, EOFError, TypeError):  # pragma: no cover - its sum was right
            return
        self._code = _code_key()
        if head != self._code or not isinstance(tables, dict):
            return
        if all(isinstance(tables.get(t), dict) for t in TABLES):
            self.tables = tables

    def get(self, table: str, key: Any) -> Any:
        return self.tables[table].get(key)

    def put(self, table: str, key: Any, value: Any) -> None:
        t = self.tables[table]
        if t.get(key) != value:
            t[key] = value
            self.added += 1

    def save(self) -> None:
        """Write the tables back if this run added to them (a memo: any failure is ignored)."""
        if self.path is None or not self.added:
            return
        tables = self.tables
        if sum(len(t) for t in tables.values()) > MAX_ENTRIES:
            tables = {t: {} for t in TABLES}
        try:
            body = marshal.dumps((self._code or _code_key(), tables))
        except ValueError:  # pragma: no cover - only plain values are put
            return
        data = MAGIC + digest_of(body) + body
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def memo_path(common_dir: str, rel: str) -> str:
    """Where the memo of blames of ``rel`` (a path from the worktree's top) is kept: one file a
    path, so that a blame reads what its file's history needs and no other file's."""
    name = digest_of(rel.encode("utf-8", "surrogateescape")).hex()
    return os.path.join(common_dir, "oxide", "cache", "blame-memo", name)


def open_memo(common_dir: str, rel: str, environ: Any) -> Memo:
    """The memo of blames of ``rel`` in the repository whose shared gitdir is ``common_dir``."""
    if environ.get("OXIDE_BLAME_MEMO") == "0" or not os.path.isdir(os.path.join(common_dir, "oxide")):
        return Memo(None)
    return Memo(memo_path(common_dir, rel))


def digest(value: Any) -> bytes:
    """A key made of plain values (tuples, str, int, None, bool) as 20 bytes (by ``repr``:
    ``marshal`` writes references to objects met twice, so equal values could differ)."""
    return digest_of(repr(value).encode("utf-8", "surrogateescape"))
