"""Index writes of a long import, on a thread of their own, in the order they were made.

A bulk import is bound by one core: parsing, encoding and writing packs are Python. The index
writes that follow each batch (rows, full-text indexing by the FTS5 triggers) run inside SQLite
with the GIL released (``Index.put_messages`` writes each table in one statement), so they can
use the machine's other core while the next batch is parsed. The queue is short (a batch or two
in flight bounds memory), jobs run strictly in order on their own connection, and an error in one
is raised in the importing thread at the next ``submit``, ``drain`` or ``close``: git was written
first, the index is a cache, and ``reindex`` heals what a failed job left out.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path

from oxide_git.store.index import Index

Job = Callable[[Index], None]


class IndexQueue:
    def __init__(self, path: Path, depth: int = 2) -> None:
        self._path = path
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="oxide-index", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> None:
        self._raise()
        self._jobs.put(job)

    def drain(self) -> None:
        """Wait until every job so far is written (before reading what they write)."""
        self._jobs.join()
        self._raise()

    def close(self, raise_error: bool = True) -> None:
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()
        if raise_error:
            self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _run(self) -> None:
        index: Index | None = None
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                if self._error is None:  # after a failure the rest is left to reindex
                    if index is None:
                        index = Index(self._path)
                    job(index)
            except BaseException as e:  # raised again in the importing thread
                self._error = e
            finally:
                self._jobs.task_done()
                if job is None and index is not None:
                    index.close()
