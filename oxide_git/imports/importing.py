"""`git oxide import`: bring the agents' sessions into the store, incrementally and idempotently.

Agent modules parse (pure); this module decides what to read (discovery, per-file cursors) and
writes what they found through ``store`` in batches, so memory stays flat on huge transcripts.
A file is re-read from the last restart point its parser gave (``Resumable``); messages land at
fixed sequence numbers, so reading the same bytes twice rewrites identical trees and makes no
commit. Cursors live in the index (a cache): without them a file is parsed again from the start,
with the same result.
"""

from __future__ import annotations

import gc
import inspect
import os
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any

from oxide_git.agents import (
    AGENT_NAMES,
    AgentEnv,
    FoundMessage,
    FoundSession,
    Problem,
    Resumable,
    Unknown,
    registry,
)
from oxide_git.agents import agent as agent_module
from oxide_git.core.errors import UnsupportedFormat
from oxide_git.imports import plan as import_plan
from oxide_git.imports.plan import FilePlan, Resume
from oxide_git.imports.report import FileReport, ImportReport
from oxide_git.imports.saving import Progress as Progress
from oxide_git.imports.saving import Store as _Store
from oxide_git.imports.saving import summary as summary
from oxide_git.imports.writer import Sink, Writer
from oxide_git.store import batch as import_batch
from oxide_git.store.batch import FileBatch
from oxide_git.store.context import Context

__all__ = ["FileReport", "ImportReport", "Sink", "agent_env", "discover", "import_file",
           "import_sessions"]

FLUSH_BYTES = 16 * 1024 * 1024
BACKGROUND_BYTES = 4 * 1024 * 1024  # from this much new data, index rows are written on a thread
WORKER_BYTES = 8 * 1024 * 1024  # from this much, the file is parsed in a child process (imports.worker)


def agent_env(ctx: Context) -> AgentEnv:
    return AgentEnv(
        home=ctx.home, environ=ctx.environ,
        worktrees=tuple(ctx.repo.worktrees()), project_id=ctx.repo.project_id(),
    )


def discover(ctx: Context, agents: list[str] | None = None) -> list[tuple[str, Path]]:
    """Every (agent, file) in the agents' own stores that holds sessions of this project."""
    env = agent_env(ctx)
    found: list[tuple[str, Path]] = []
    reg = registry()
    for name in agents or AGENT_NAMES:
        try:
            found += [(name, p) for p in reg[name].discover(env)]
        except OSError:
            continue
    return found


def _feed(writer: Writer, events: Any, path: Path, size: int, flushed_at: int,
          progress: Progress | None) -> None:
    report = writer.report
    try:
        for ev in events:
            if isinstance(ev, FoundMessage):
                writer.message(ev.session_id, ev.message)
            elif isinstance(ev, FoundSession):
                writer.session(ev.session)
            elif isinstance(ev, Resumable):
                if ev.offset - flushed_at > FLUSH_BYTES:  # bounded memory on huge transcripts
                    writer.flush_all()
                    flushed_at = ev.offset
                writer.resume = (ev.offset, ev.state, writer.seqs_at_this_point())
                if report.unknown:
                    report.unknown_at_resume = dict(report.unknown)
                if progress:
                    progress(ev.offset, size)
            elif isinstance(ev, Problem):
                where = f"{path}:{ev.line}" if ev.line else str(path)
                report.problems.append(f"{where}: {ev.text}")
            elif isinstance(ev, Unknown):
                key = (ev.kind, ev.version)
                report.unknown[key] = report.unknown.get(key, 0) + 1
    except (UnsupportedFormat, OSError, UnicodeError) as e:
        report.problems.append(f"{path}: {getattr(e, 'message', e)}")
        report.state = "failed"


def import_file(
    ctx: Context, agent: str, path: Path, *, dry_run: bool = False,
    progress: Progress | None = None, batch: FileBatch | None = None, here: str | None = None,
) -> FileReport:
    """Import one file; with ``batch``, its writes are held with the batch's (``import_batch``)."""
    p = import_plan.plan(ctx, agent, path)
    if isinstance(p, FileReport):
        return p
    read = _reader(ctx, p, here=here)
    if dry_run:
        resume = read(None, progress)
    elif batch is not None:
        resume = read(_Store(ctx, background=False, batch=batch), progress)
    elif p.new_bytes >= WORKER_BYTES and _worker_available():
        from oxide_git.imports import worker as import_worker

        resume = import_worker.run(_Store(ctx, background=True), p.report, read, progress)
    else:
        sink = _Store(ctx, background=p.new_bytes >= BACKGROUND_BYTES)
        try:
            resume = read(sink, progress)
            sink.close()
        finally:
            sink.close(raise_error=False)  # on an unexpected error: stop the index thread, keep the error
    return import_plan.finish(ctx, p, resume, dry_run=dry_run, batch=batch)


def _reader(ctx: Context, p: FilePlan, run: dict[str, Any] | None = None, here: str | None = None
            ) -> Callable[[Sink | None, Progress | None], Resume]:
    """``read(sink, progress)``: the file parsed into ``sink`` (None: only counted); the last
    restart point reached. ``run``: what the files of one import share (``Writer``)."""
    parser = agent_module(p.agent)
    kwargs: dict[str, Any] = {"offset": p.offset, "state": p.state}
    if "env" in inspect.signature(parser.parse).parameters:
        kwargs["env"] = agent_env(ctx)  # a shared store (opencode.db) holds other projects too

    def read(sink: Sink | None, progress: Progress | None) -> Resume:
        writer = Writer(ctx, p.report, p.seqs, sink, run, here, p.tips)
        if p.state is not None:
            for sid in p.seqs:
                stored = writer.stored(sid)
                if stored is not None:
                    writer.session(stored)
        _feed(writer, parser.parse(p.path, **kwargs), p.path, p.file_size, p.offset, progress)
        writer.flush_all(final=True)
        return writer.resume

    return read


def import_sessions(
    ctx: Context, items: list[tuple[str, Path]], *, dry_run: bool = False,
    progress: Progress | None = None, by_path: bool = False,
) -> ImportReport:
    """Import every (agent, path); a failing file never stops the others (``by_path``: ``Writer.here``)."""
    # Parsing allocates millions of short-lived objects that form no cycles: the cyclic
    # collector's passes over them cost 12-15% of a large import and freed nothing (the peak RSS
    # of a 200 MB import is the same without them).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _import_all(ctx, items, dry_run, progress, ctx.repo.worktree_id if by_path else None)
    finally:
        if collecting:
            gc.enable()


def _import_all(ctx: Context, items: list[tuple[str, Path]], dry_run: bool,
                progress: Progress | None, here: str | None) -> ImportReport:
    report = ImportReport(dry_run=dry_run)
    sizes = [_size(p) for _a, p in items]
    total = sum(sizes) or 1
    done = 0
    small = min(BACKGROUND_BYTES, WORKER_BYTES)
    with import_batch.held(ctx, len(items) >= import_batch.BATCH_MIN_FILES and not dry_run) as batch:
        i, alone, forking = 0, False, batch is not None
        while i < len(items):
            base = done

            def on_progress(n: int, _size_: int = 0, base: int = base) -> None:
                if progress:
                    progress(base + n, total)

            n = 0
            while forking and not alone and i + n < len(items) and sizes[i + n] < small:
                n += 1
            if n >= import_batch.BATCH_MIN_FILES and batch is not None and (forking := _fork_ready(batch)):
                left = _import_run(ctx, report, items[i:i + n], sizes[i:i + n], batch, on_progress, here)
                done += sum(sizes[i:i + left])
                i += left
                alone = left < n  # the file the run stopped at is read in this process
                continue
            alone = False
            agent, path = items[i]  # one file, read in this process
            held = batch if batch is not None and sizes[i] < small else None
            if batch is not None:
                if held is None:
                    batch.settle()  # a big file writes as it goes, after what is held
                batch.file = len(report.files)
            report.files.append(import_file(ctx, agent, path, dry_run=dry_run, progress=on_progress,
                                            batch=held, here=here))
            if batch is not None and batch.held_bytes >= import_batch.BATCH_BYTES:
                batch.flush()
            done += sizes[i]
            i += 1
            if progress:
                progress(done, total)
    for k in batch.redo if batch is not None else []:  # a ref moved under the batch: alone, on the new tip
        f = report.files[k]
        report.files[k] = import_file(ctx, f.agent, Path(f.path), here=here)
    if not dry_run:
        imported = {s for f in report.files for s in f.sessions}
        _follow_latest(ctx, imported)
        from oxide_git.store.ties import tie_imported

        tie_imported(ctx, imported)  # prompt checkpoints a hook took before their session was here
    return report


def _fork_ready(batch: FileBatch) -> bool:
    """Can a child process parse the next files? Not in a process that runs threads of its own
    (`watch`: then never in this import); the batch's index thread is stopped first."""
    if not _worker_available(own_threads=0 if batch.queue is None else 1):
        return False
    if batch.queue is not None:
        batch.settle()
    return _worker_available()


def _import_run(ctx: Context, report: ImportReport, items: list[tuple[str, Path]], sizes: list[int],
                batch: FileBatch, progress: Callable[[int], None], here: str | None = None) -> int:
    """Small files parsed in one child process while this one stores them into ``batch``
    (``imports.worker.run_files``); how many of ``items`` were imported (all, or those before the
    first one that must be read in this process)."""
    from oxide_git.imports import worker as import_worker

    first = len(report.files)
    files: list[FileReport] = []
    plans: dict[int, FilePlan] = {}
    for k, (agent, path) in enumerate(items):
        p = import_plan.plan(ctx, agent, path)
        files.append(p if isinstance(p, FileReport) else p.report)
        if not isinstance(p, FileReport):
            plans[k] = p
    ends = list(accumulate(sizes))

    def started(k: int) -> None:
        batch.file = first + k

    def ended(k: int, resume: Resume, known_tail: tuple[int, str | None] | None = None) -> None:
        import_plan.finish(ctx, plans[k], resume, batch=batch, known_tail=known_tail)
        if batch.held_bytes >= import_batch.BATCH_BYTES:
            batch.flush()
        progress(ends[k])

    run: dict[str, Any] = {}
    jobs = [(k, p.report, _reader(ctx, p, run, here)) for k, p in plans.items()]
    stop = import_worker.run_files(_Store(ctx, background=False, batch=batch), jobs, started, ended)
    left = len(items) if stop is None else stop
    report.files += files[:left]
    return left


def _follow_latest(ctx: Context, imported: set[str]) -> None:
    """This worktree's current session becomes the newest session just imported into it."""
    if not imported:
        return
    rows = [r for r in ctx.index.session_rows(worktree=ctx.repo.worktree_id) if r["id"] in imported]
    if not rows:
        return
    from oxide_git.store import writes as store

    current = store.current_session(ctx)
    latest = rows[0]
    cur_rows = ctx.index.session_rows(ids=[current]) if current else []
    if not cur_rows or (latest["updated_at"] or 0) >= (cur_rows[0]["updated_at"] or 0):
        store.set_current_session(
            ctx, latest["id"], why="the newest session `git oxide import` brought into this worktree")


def _worker_available(own_threads: int = 0) -> bool:
    from oxide_git.core.forked import available

    return available(own_threads)


def _size(p: Path) -> int:
    try:
        return os.stat(p).st_size
    except OSError:
        return 0
