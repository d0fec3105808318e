"""Full-text search: a tantivy index beside the SQLite index, kept in step with it by a log.

SQLite's FTS5 scored every match to rank them (bm25 over the 65,940 matches of two words in 1M
messages: 92 ms, where counting them took 8), and keeping its index was four fifths of what
writing a message's rows cost. Tantivy ranks the same matches in 4–5 ms
and indexes a message in ~5 µs.

The search index is a cache of a cache: the ``messages`` rows are the truth. Triggers on
``messages`` append the rowid of every row inserted or deleted to ``search_log`` (its ``seq``
only grows: AUTOINCREMENT). ``catch_up`` applies the log: each rowid logged is deleted from the
search index and, when the row is there now, added again with its current text, so applying an
entry twice changes nothing and a crash between tantivy's commit and the note of how far it got
(``<oxide>/search/applied``, with the index's epoch) loses nothing. A new ``index.db`` (a new
epoch in its ``meta``), a missing or broken folder, or a log longer than a quarter of the
messages: the search index is built again whole, from the rows. Searches catch up first, and so
do `import` (when it wrote many messages) and `watch`, never `pull` or `reindex`, whose memory
stays bounded whatever a remote holds; one process at a time does (``search.lock``).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oxide_git.store.index_ids import id_chunks

if TYPE_CHECKING:
    import subprocess

EPOCH_KEY = "search_epoch"
FORMAT = "oxide-search-1"  # the schema of the tantivy index: another one is built anew
EAGER = 10_000  # a command that leaves this many messages to index indexes them before it returns
_BATCH = 20_000
BUSY_MS = 30_000  # the index's own busy timeout (index.py)
_HEAP = 16_000_000  # tantivy's budget for a segment in the making (15 MB at least): +50 MB resident

# The triggers and the log (created with the schema, and by the migration from FTS5).
LOG_SQL = (
    "CREATE TABLE IF NOT EXISTS search_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, rid INTEGER NOT NULL)",
    "CREATE TRIGGER IF NOT EXISTS messages_search_ai AFTER INSERT ON messages BEGIN "
    "INSERT INTO search_log(rid) VALUES (new.rowid); END",
    "CREATE TRIGGER IF NOT EXISTS messages_search_ad AFTER DELETE ON messages BEGIN "
    "INSERT INTO search_log(rid) VALUES (old.rowid); END",
    "CREATE TRIGGER IF NOT EXISTS messages_search_au AFTER UPDATE OF text ON messages BEGIN "
    "INSERT INTO search_log(rid) VALUES (new.rowid); END",
)

# folder → (its tantivy index, the note it was opened at): the watcher and the MCP server search often
_open: dict[str, tuple[Any, str]] = {}
_in_children = False  # catch up in a child process (``in_children``)


@lru_cache(maxsize=1)
def analyzer() -> Any:
    import tantivy

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold()).build())


def _schema() -> Any:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("text", stored=False, tokenizer_name="oxide", index_option="position")
    sb.add_integer_field("rid", stored=False, indexed=True, fast=True)
    return sb.build()


def _tantivy_index(folder: Path | None, *, create: bool) -> Any:
    """The index in ``folder`` (None: in memory); ``create``: made anew, emptied first."""
    import tantivy

    if folder is None:
        idx = tantivy.Index(_schema())
    else:
        if create:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
        idx = tantivy.Index(_schema(), path=str(folder), reuse=not create)
    idx.register_tokenizer("oxide", analyzer())
    return idx


def _folder(db_path: Path) -> Path:
    return db_path.parent / "search"


def new_epoch() -> str:
    """A value for ``meta``'s EPOCH_KEY: set with every index made or emptied."""
    return os.urandom(16).hex()


def _epoch(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT value FROM meta WHERE key=?", (EPOCH_KEY,)).fetchone()
    return str(row[0]) if row and row[0] else "none"


def _log_end(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT seq FROM sqlite_sequence WHERE name='search_log'").fetchone()
    return int(row[0]) if row else 0


def _applied(folder: Path) -> tuple[str, int] | None:
    """The epoch and log position the folder's index holds; None when it is not ours to trust
    (missing, cut short, or made by another version of this schema)."""
    try:
        form, epoch, seq = (folder / "applied").read_text().split()
        return (epoch, int(seq)) if form == FORMAT else None
    except (OSError, ValueError):
        return None


def _note_applied(folder: Path, epoch: str, seq: int) -> None:
    tmp = folder / f"applied.{os.getpid()}"
    tmp.write_text(f"{FORMAT} {epoch} {seq}\n")
    os.replace(tmp, folder / "applied")


def pending(db: sqlite3.Connection, db_path: Path) -> int | None:
    """Log entries the search index has not applied; None: it must be built whole."""
    done = _applied(_folder(db_path))
    if done is None or done[0] != _epoch(db):
        return None
    return max(0, _log_end(db) - done[1])


@contextmanager
def _locked(db_path: Path) -> Iterator[None]:
    fd = os.open(db_path.parent / "search.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def catch_up(db: sqlite3.Connection, db_path: Path, *, note: bool = False) -> None:
    """Bring the search index in ``<oxide>/search`` up to the rows of ``db``; ``note``: say so on
    stderr when there is much to do. Raises OSError when the folder cannot be written."""
    if pending(db, db_path) == 0:
        return
    folder = _folder(db_path)
    with _locked(db_path):
        todo = pending(db, db_path)  # again: another process may have done it meanwhile
        if todo == 0:
            return
        count = db.execute("SELECT max(rowid) FROM messages").fetchone()[0] or 0
        whole = todo is None or (todo > _BATCH and todo > count // 4)
        if note and ((whole and count > EAGER) or (todo or 0) > EAGER):
            print(f"indexing {count if whole else todo:,} messages for search…", file=sys.stderr, flush=True)
        try:
            idx = _tantivy_index(folder, create=whole)
        except (ValueError, OSError):  # left broken: made anew
            idx, whole = _tantivy_index(folder, create=True), True
        writer = idx.writer(heap_size=_HEAP, num_threads=1)
        epoch = _epoch(db)
        db.execute("BEGIN")  # one snapshot: the log's end and the rows it covers
        try:
            end = _log_end(db)
            if whole:
                _add_all(writer, db)
            else:
                done = _applied(folder)
                _apply(writer, db, done[1] if done else 0, end)
        finally:
            db.execute("COMMIT")
        writer.commit()
        writer.wait_merging_threads()
        _note_applied(folder, epoch, end)
        _open.pop(str(folder), None)
    db.execute("PRAGMA busy_timeout = 0")  # a search never waits on a writer to prune
    try:
        db.execute("DELETE FROM search_log WHERE seq <= ?", (end,))
    except sqlite3.OperationalError:
        pass  # busy or read-only: pruned by a later catch-up
    finally:
        db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")


def _add_all(writer: Any, db: sqlite3.Connection) -> None:
    import tantivy

    Document = tantivy.Document
    for rid, text in db.execute("SELECT rowid, text FROM messages WHERE text != ''"):
        writer.add_document(Document(rid=rid, text=text))


def _apply(writer: Any, db: sqlite3.Connection, start: int, end: int) -> None:
    import tantivy

    Document = tantivy.Document
    rids = sorted({r[0] for r in db.execute("SELECT rid FROM search_log WHERE seq > ? AND seq <= ?",
                                            (start, end))})
    for part, marks in id_chunks(rids):
        for rid in part:
            writer.delete_documents_by_term("rid", rid)
        rows = db.execute(f"SELECT rowid, text FROM messages WHERE rowid IN ({marks}) AND text != ''", part)
        for rid, text in rows:
            writer.add_document(Document(rid=rid, text=text))


def forget(db_path: Path, *, note: bool = False) -> None:
    """Drop this process's open search index (``note``: and the note of what it holds, so that
    the next search builds it anew)."""
    folder = _folder(db_path)
    _open.pop(str(folder), None)
    if note:
        (folder / "applied").unlink(missing_ok=True)


def ranked(db: sqlite3.Connection, db_path: Path, terms: list[list[str]], n: int) -> list[int]:
    """The rowids of the ``n`` best messages holding every term, best first."""
    import tantivy

    if not terms:
        return []
    idx = _searchable(db, db_path)
    schema = idx.schema
    must = [tantivy.Query.term_query(schema, "text", t[0]) if len(t) == 1
            else tantivy.Query.phrase_query(schema, "text", list[str | tuple[int, str]](t)) for t in terms]
    q = must[0] if len(must) == 1 else tantivy.Query.boolean_query([(tantivy.Occur.Must, m) for m in must])
    searcher = idx.searcher()
    hits = searcher.search(q, n, count=False).hits
    return [int(r) for r in searcher.fast_field_values("rid", [a for _, a in hits])]


def _searchable(db: sqlite3.Connection, db_path: Path) -> Any:
    """The search index, caught up; in memory when its folder cannot be written."""
    folder = _folder(db_path)
    try:
        if not (_in_children and pending(db, db_path) != 0 and catch_up_in_child(db_path).wait() == 0):
            catch_up(db, db_path, note=True)  # (a child that failed: here, as any command would)
    except OSError:  # a read-only store: a whole index in memory, for this process
        idx = _tantivy_index(None, create=True)
        writer = idx.writer(heap_size=_HEAP, num_threads=1)
        _add_all(writer, db)
        writer.commit()
        writer.wait_merging_threads()
        idx.reload()
        return idx
    done = _applied(folder)
    key = f"{done[0]} {done[1]}" if done else ""
    held = _open.get(str(folder))
    if held is None or held[1] != key:
        held = (_tantivy_index(folder, create=False), key)
        _open[str(folder)] = held
    return held[0]


def in_children() -> None:
    """From now on this process catches up in child processes (``catch_up_in_child``), its
    searches too: for the `watch` daemon, which lives for days."""
    global _in_children
    _in_children = True


def catch_up_in_child(db_path: Path) -> subprocess.Popen[bytes]:
    """``catch_up`` in a child process, started and left running (its failures are logged in
    ``<oxide>/log``). Tantivy's writer takes ~50 MB while it works, and glibc keeps what its
    threads freed in their arenas: in a 30-minute soak the `watch` daemon, which caught up
    itself, grew by 84 MB. A child gives it all back when it exits."""
    import subprocess

    return subprocess.Popen([sys.executable, "-m", "oxide_git.store.search_index", str(db_path)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _main(argv: list[str]) -> int:
    db_path = Path(argv[0])
    try:
        db = sqlite3.connect(str(db_path), timeout=BUSY_MS / 1000, isolation_level=None)
        try:
            catch_up(db, db_path)
        finally:
            db.close()
    except Exception:
        import traceback

        from oxide_git.core.oxide_log import log

        log(db_path.parent, f"search: catching up failed:\n{traceback.format_exc()}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
