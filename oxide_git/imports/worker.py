"""A big transcript is parsed in a child process while this one stores what it parsed.

An import is Python on one core: parsing a transcript is about half of it, storing it (the
secret gate, packs, trees, commits, index rows) the other half. For a file with megabytes of new
lines, ``run`` forks: the child runs the importer and the batching of ``importing`` (sessions,
sequence numbers, restart points) and, for each batch, what depends only on the messages: their
ids, their encoding, its redaction (the secret gate first) and object ids, and their index rows.
It sends each batch down a pipe (pickled; the encoded messages are bytes, cheap to send). This
process links, packs, commits and indexes it, exactly as an import in one process stores its
batches (``store.save_encoded``).

The small files of a bulk import (``run_files``) are parsed the same way, dealt out in turn to two
children (``forked.workers``), each file's batches sent once it is read whole and stored here in the
files' order; the run stops before a file whose sessions an earlier file of the run wrote (its child
could not see them stored), which this process then reads itself, on what it stored.

The pipe holds about one batch: the child never runs far ahead (memory stays flat). A child that
dies, or an error on either side, ends the import with nothing half written: every batch stored
is a whole commit, and the file's cursor is only saved after the last one, so importing again
finishes the job.
"""

from __future__ import annotations

import functools
import os
import pickle
import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from oxide_git.core import forked
from oxide_git.core.errors import OxideError

if TYPE_CHECKING:
    from oxide_git.core.model import Message, Session
    from oxide_git.imports.report import FileReport
    from oxide_git.imports.saving import Progress, Store
    from oxide_git.imports.writer import Sink

Resume = tuple[int, Any, dict[str, int]] | None
Read = Callable[["Sink | None", "Progress | None"], Resume]


def run(store: Store, report: FileReport, read: Read, progress: Progress | None) -> Resume:
    """``read(sink, progress)`` in a child process, its batches stored here; the restart point it
    reached. ``report`` ends up as the child left it."""
    pid, rfd = forked.fork(lambda pipe: _child(pipe, read, report))
    done = False
    try:
        with os.fdopen(rfd, "rb", buffering=forked.BUFFER) as pipe:
            resume = _receive(pipe, store, report, progress)
        done = True
        store.close()
        return resume
    finally:
        forked.reap([(pid, rfd)], [], done)  # (killed first unless done)
        if not done:
            store.close(raise_error=False)


Job = tuple[int, "FileReport", Read]  # a file of a run: its number, its report, its reader


def run_files(store: Store, jobs: list[Job], started: Callable[[int], None],
              ended: Callable[[int, Resume, tuple[int, str | None] | None], None],
              children: int | None = None) -> int | None:
    """Many small files parsed in child processes (``children``, default ``workers``: the files
    dealt out in turn), in order, while this one stores them: ``started(k)`` before file k's
    batches are stored, ``ended(k, resume, tail)`` once they are (its report then as the child
    left it; ``tail``: the restart point's offset and ``import_plan.tail`` there, read by the
    child). The run stops before the first file that writes a session an earlier file of the run
    wrote too (its child could not see what this process stored of it): its number is returned,
    for it and the files after it to be read here; None when all were."""
    n = max(1, min(children or forked.workers(len(jobs)), len(jobs)))
    store.share_with_children()
    # every child forked before any thread of this process starts (a fork copies only its caller)
    procs = [forked.fork(functools.partial(_child_files, store=store, jobs=jobs[i::n])) for i in range(n)]
    pipes = [_ReadAhead(rfd, _ReadAhead.AHEAD // n) for _pid, rfd in procs]
    clean = False
    written: set[str] = set()
    try:
        for at, (k, report, _read) in enumerate(jobs):
            pipe, what = pipes[at % n], report.path
            item = _load(pipe, what)
            if item[0] != "start" or item[1] != k:
                forked.raise_sent(item if item[0] == "error" else _OUT_OF_STEP, what)
            if written & set(item[2]):
                return k
            written.update(item[2])
            started(k)
            while (item := _load(pipe, what))[0] == "batch":
                _store_batch(store, item)
            if item[0] != "done":
                forked.raise_sent(item, what)
            report.__dict__.update(item[1].__dict__)
            ended(k, item[2], item[3])
        clean = True
        return None
    finally:
        forked.reap(procs, pipes, clean)


def _child_files(pipe: BinaryIO, store: Store, jobs: list[Job]) -> None:  # pragma: no cover - the child
    from pathlib import Path

    from oxide_git.imports import plan as import_plan

    def work() -> None:
        store.ctx._index = None  # a connection of its own: the inherited one is the parent's
        for k, report, read in jobs:
            held = _Held(store.redactor)
            resume = read(held, None)  # small files: progress is the parent's, file by file
            # the file's digest before its restart point, read here (the parent's main thread,
            # the slower half, opened 1,500 files for it)
            known = None if resume is None else (resume[0], import_plan.tail(Path(report.path), resume[0]))
            pickle.dump(("start", k, sorted(report.sessions)), pipe)
            for item in held.items:
                pickle.dump(item, pipe, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(("done", report, resume, known), pipe)
            pipe.flush()

    forked.in_child(pipe, work)


class _ReadAhead:
    """The pipe read on a thread of its own, up to ``ahead`` reads (of up to 1 MB) ahead of what is
    unpickled: the child goes on parsing while this process writes a pack (the pipe holds 1 MB)."""

    AHEAD = 64  # for all the pipes of a run: what they hold stays under 64 MB

    def __init__(self, fd: int, ahead: int = AHEAD) -> None:
        import queue

        self.fd = fd
        self.chunks: queue.Queue[bytes] = queue.Queue(max(1, ahead))
        self.buf = bytearray()
        self.pos = 0
        self.eof = False
        self.stopped = False
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            while not self.stopped:
                chunk = os.read(self.fd, forked.BUFFER)
                self.chunks.put(chunk)
                if not chunk:
                    return
        except OSError:
            self.chunks.put(b"")

    def _fill(self, n: int) -> None:
        while len(self.buf) - self.pos < n and not self.eof:
            chunk = self.chunks.get()
            if not chunk:
                self.eof = True
                break
            if self.pos:
                del self.buf[:self.pos]
                self.pos = 0
            self.buf += chunk

    def read(self, n: int = -1) -> bytes:
        self._fill(n if n >= 0 else 1 << 62)
        end = len(self.buf) if n < 0 else min(len(self.buf), self.pos + n)
        out = bytes(self.buf[self.pos:end])
        self.pos = end
        return out

    def readline(self) -> bytes:
        while True:
            i = self.buf.find(b"\n", self.pos)
            if i >= 0 or self.eof:
                return self.read(i + 1 - self.pos if i >= 0 else -1)
            self._fill(len(self.buf) - self.pos + 1)

    def close(self) -> None:
        """Once the writer is gone (the read then ends): the thread stopped, the pipe closed."""
        import queue

        self.stopped = True
        while self.thread.is_alive():  # it may wait for room in a full queue
            try:
                self.chunks.get(timeout=0.05)
            except queue.Empty:
                pass
        os.close(self.fd)


def _receive(pipe: BinaryIO, store: Store, report: FileReport, progress: Progress | None) -> Resume:
    while True:
        item = _load(pipe, report.path)
        kind = item[0]
        if kind == "batch":
            _store_batch(store, item)
        elif kind == "progress":
            if progress:
                progress(item[1], item[2])
        elif kind == "done":
            report.__dict__.update(item[1].__dict__)
            return item[2]
        else:
            forked.raise_sent(item, report.path)


def _load(pipe: BinaryIO | _ReadAhead, what: str) -> Any:
    try:
        return pickle.load(pipe)
    except (EOFError, pickle.UnpicklingError):  # no more, or cut short: the child died mid-item
        raise OxideError(f"{what}: the process parsing it ended unexpectedly",
                         hint="import it again: what was stored is kept, the rest is read again") from None


_OUT_OF_STEP = ("error", "the process parsing the files sent them out of order",
                "import again: what was stored is kept, the rest is read again", None)


def _store_batch(store: Store, item: Any) -> None:
    from oxide_git.imports.saving import summary
    from oxide_git.store import writes as stores

    _, s, start, blobs, counts, rows, native_ids, ids, scans = item
    if scans is not None:  # not redacted by the child: here
        scanned = {q: (b, b[at:] if isinstance(at := scans[q], int) else at) for q, b in blobs.items()}
        blobs, counts, rows = stores.redacted(store.redactor, scanned, counts, rows)
    s = store.link(s, start, native_ids)
    stores.save_encoded(store.ctx, s, blobs, ids, counts, rows, summary=summary(s, len(blobs)),
                        later=store.later, redactor=store.redactor)
    if store.batch is not None:
        store.batch.remember(s.agent, s.native_id, native_ids)


Step = Callable[[bytes, bytes], tuple[bytes, Any]]  # a blob and what the gate reads → (blob, changed)


def _scanned(s: Session, start: int, msgs: list[Message]) -> tuple[Any, ...]:
    """A big file's batch as the parent stores it (``_store_batch``), not redacted: the parent
    redacts it (the child is the slower half), from each message's part the gate reads, sent as
    where it starts in the blob (most often its end) or whole."""
    scans: list[int | bytes] = []  # in the blobs' order

    def keep(blob: bytes, scan: bytes) -> tuple[bytes, Any]:
        scans.append(len(blob) - len(scan) if blob.endswith(scan) else scan)
        return blob, None

    batch = _encoded(s, start, msgs, keep)
    return (*batch, None, dict(zip(batch[3], scans, strict=True)))


def _redacted(s: Session, start: int, msgs: list[Message], redactor: Any) -> tuple[Any, ...]:
    """A bulk import's batch, redacted here with the parent's ``redactor`` (None: redaction is off),
    its object ids worked out: the parent, the slower half there, only stores it (the secret gate,
    and the walk of a message it cannot clear, were a fifth of its work)."""
    from oxide_git.git.objects import BLOB, object_id

    step: Step = redactor.reencoded if redactor is not None else (lambda blob, _scan: (blob, None))
    batch = _encoded(s, start, msgs, step)
    return (*batch, {q: object_id(BLOB, b) for q, b in batch[3].items()}, None)


def _encoded(s: Session, start: int, msgs: list[Message], step: Step) -> tuple[Any, ...]:
    """``("batch", s, start, blobs, counts, rows, native_ids)``: what depends on the messages
    alone, each blob passed through ``step`` as it is encoded."""
    from oxide_git.core import codec
    from oxide_git.store import logwrite
    from oxide_git.store.index_rows import message_rows
    from oxide_git.store.redact import COUNTS_KEY, message_counts

    placed = logwrite.with_ids(s.id, dict(enumerate(msgs, start)))
    blobs: dict[int, bytes] = {}
    counts: Counter[str] = Counter()
    for q, m in placed.items():
        blob, changed = step(*codec.encode_message_scan(m))
        if changed is not None:
            m = placed[q] = changed
        blobs[q] = blob
        if COUNTS_KEY in m.extra:
            counts += message_counts(m)
    return ("batch", s, start, blobs, counts, message_rows(placed), [m.native_id for m in msgs])


class _Sender:
    """The child's sink: each batch encoded and sent to the parent."""

    def __init__(self, pipe: BinaryIO) -> None:
        self.pipe = pipe

    def save(self, s: Session, start: int, msgs: list[Message]) -> Session:
        pickle.dump(_scanned(s, start, msgs), self.pipe, protocol=pickle.HIGHEST_PROTOCOL)
        self.pipe.flush()  # all of it: the parent can store it while the next batch is parsed
        return s  # linked to a parent, if at all, by the parent process


class _Held:
    """A small file's batches, encoded and kept until the file is read whole (``run_files``)."""

    def __init__(self, redactor: Any) -> None:
        self.items: list[tuple[Any, ...]] = []
        self.redactor = redactor

    def save(self, s: Session, start: int, msgs: list[Message]) -> Session:
        self.items.append(_redacted(s, start, msgs, self.redactor))
        return s


def _child(pipe: BinaryIO, read: Read, report: FileReport) -> None:  # pragma: no cover - the child
    last = [0]

    def progress(done: int, total: int) -> None:
        if done - last[0] >= total // 100:  # about a hundred updates, not one a message
            last[0] = done
            pickle.dump(("progress", done, total), pipe)

    def work() -> None:
        resume = read(_Sender(pipe), progress)  # fills in ``report``
        pickle.dump(("done", report, resume), pipe)

    forked.in_child(pipe, work)
