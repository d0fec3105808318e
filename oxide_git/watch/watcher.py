"""`git oxide watch`: the agents' stores and every worktree watched (``watch_observers``).

The observers only forward paths; ``capture_plan.Plan`` decides; this loop imports
what is due, checkpoints each new user prompt, keeps the worktree journals (``journal``), and
re-schedules stores and worktrees that vanish or appear. Errors are logged, never fatal.
"""

from __future__ import annotations

import logging
import os
import queue
import subprocess
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.core.errors import LockTimeout
from oxide_git.core.oxide_log import log
from oxide_git.git import watch_journal as journal
from oxide_git.git.repo import Repo, find_repo
from oxide_git.store.context import Context
from oxide_git.watch.capture_plan import Plan
from oxide_git.watch.observers import Observers
from oxide_git.watch.paths import database_of, may_hold_sessions, store_roots

JOURNAL_MAX_BYTES = 4 * 1024 * 1024  # past this the journal is dropped (full status) and rebuilt
RESCAN_S = 1.0
BARRIER_PREFIX = "watch-barrier-"
BARRIER_TIMEOUT_S = 1.0
LOCKED_RETRY_S = 5.0  # an import that found its session's ref locked tries again after this


class Watcher:
    def __init__(self, ctx: Context, token: str,
                 answer: Callable[[Path, Mapping[str, Repo]], Any] | None = None) -> None:
        """``answer(common_dir, repos)`` makes what answers `checkpoint` and `search` over the socket
        (``cli.watch.checkpoint_handler``); None: no socket."""
        self.ctx, self.token, self.answer = ctx, token, answer
        self.events: queue.Queue[str] = queue.Queue()
        self.obs = Observers(self.events, self.log)
        self.overflowed = self.obs.overflowed  # events were lost: the journals cannot be trusted
        self.watches = self.obs.watches
        self.repos: dict[str, Repo] = {}
        self.heads: dict[str, str | None] = {}
        self.known: dict[str, str] | None = None  # discovered agent files -> agent (None: not yet)
        self.stop = threading.Event()
        from oxide_git.agents import worktree_files

        self.plan = Plan(store_roots(ctx), {}, worktree_files())
        self.server: Any = None  # watch_server.Server: `git oxide checkpoint` answered from here
        self.serve: Any = None
        self.barriers = 0  # barrier files written (their names are unique)
        self.indexer: Any = None  # the child catching the search index up (subprocess.Popen)
        self.index_due = False  # imports came while it ran: another one when it is done

    def log(self, text: str) -> None:
        log(self.ctx.repo.oxide_dir, f"watch: {text}")

    def rescan(self) -> None:
        """(Re)schedule stores and worktrees; rebuild journals whose HEAD moved."""
        tops = {str(top): wid for top, wid in self.ctx.repo.worktree_ids() if top.is_dir()}
        self.plan.worktrees = tops
        for gone in set(self.repos) - set(tops):
            self.repos.pop(gone, None)
        appeared = [p for p in [*self.plan.stores, *tops, *self.watches] if self.obs.schedule(p, p in tops)]
        if self.known is not None and set(appeared) & set(self.plan.stores):
            # a store that (re)appeared may already hold files written before we watched it
            self.known = {str(p): a for a, p in _safe_discover(self)}
            self.import_due(sorted((a, p) for p, a in self.known.items()), prompts=True)
        for top in tops:
            if top not in self.watches:  # nothing sees its changes: checkpoints run git status
                if top in self.heads and top in self.repos:
                    journal.drop(self.repos[top])
                self.heads.pop(top, None)
                continue
            try:
                repo = self.repos.get(top) or find_repo(Path(top), environ={})
            except Exception as e:
                self.log(f"worktree {top}: {e}")
                continue
            self.repos[top] = repo
            head = journal.head_oid(repo)
            if top not in self.heads or self.heads[top] != head or journal.size(repo) > JOURNAL_MAX_BYTES \
                    or journal.read(repo) is None:
                self.baseline(repo)
                self.heads[top] = head

    def baseline(self, repo: Repo) -> None:
        from oxide_git.git import status

        try:
            st = status.run(repo.workdir)
            journal.write_baseline(repo, self.token, st.paths)
        except Exception as e:
            journal.drop(repo)
            self.log(f"journal of {repo.workdir} dropped: {e}")

    # work --------------------------------------------------------------------------------

    def import_due(self, paths: list[tuple[str, str]], prompts: bool) -> None:
        paths = [(a, database_of(p)) for a, p in paths]
        known = self.known or {}
        if any(p not in known and may_hold_sessions(a, p) for a, p in paths):
            known = self.known = {str(p): a for a, p in _safe_discover(self)}
        for path in dict.fromkeys(p for _a, p in paths):
            if path in known:
                self.import_one(known[path], path, prompts)
        self.keep_search_up()

    def keep_search_up(self) -> None:
        """The search index brought up to the imports, in a child process (see
        ``search_index.catch_up_in_child``), one at a time: while one runs, the next waits for it.
        A search over the socket meanwhile catches up in a child of its own, and waits."""
        if self.indexer is not None and self.indexer.poll() is None:
            self.index_due = True
            return
        self.indexer, self.index_due = None, False
        from oxide_git.store import search_index

        try:
            if search_index.pending(self.ctx.index.db, self.ctx.index.path) != 0:
                self.indexer = search_index.catch_up_in_child(self.ctx.index.path)
        except Exception:
            self.log(f"updating the search index failed:\n{traceback.format_exc()}")

    def import_one(self, agent: str, path: str, prompts: bool) -> None:
        from oxide_git.imports.importing import import_file

        ctx = self.ctx
        try:
            before = {r[0]: r[1] for r in ctx.index.query("SELECT id, message_count FROM sessions")}
            report = import_file(ctx, agent, Path(path))
        except LockTimeout as e:  # a ref another writer holds, or one a killed writer left
            self.log(f"import of {path} waits: {e}; trying again in {LOCKED_RETRY_S:g} s")
            self.plan.retry(agent, path, time.monotonic(), LOCKED_RETRY_S)
            return
        except Exception:
            self.log(f"import of {path} failed:\n{traceback.format_exc()}")
            return
        from oxide_git.imports.importing import ImportReport

        for p in report.problems + ImportReport([report]).drift_warnings():
            self.log(p)
        for sid in report.sessions:
            try:
                self.after_import(sid, before.get(sid, 0), prompts)
            except Exception:
                self.log(f"after importing {sid}:\n{traceback.format_exc()}")

    def after_import(self, sid: str, seen: int, prompts: bool) -> None:
        """Make the session current in its worktree; checkpoint its newest new user prompt."""
        from oxide_git.ops.checkpoint import checkpoint
        from oxide_git.store import ties as hook_ties
        from oxide_git.store import writes as store

        row = self.ctx.index.query("SELECT worktree FROM sessions WHERE id=?", (sid,))
        wid = row[0][0] if row else None
        top = next((t for t, w in self.plan.worktrees.items() if w == wid), None)
        repo = self.repos.get(top) if top else None
        if repo is None:
            return
        wctx = Context(repo, int(time.time() * 1000), self.ctx.environ, self.ctx._index)
        store.set_current_session(wctx, sid)
        hook_ties.tie_imported(wctx, [sid])  # a hook's prompt checkpoint taken before the file was there
        if not prompts:
            return
        rows = self.ctx.index.query(
            "SELECT m.id, m.text FROM messages m WHERE m.session_id=? AND m.seq>=? AND m.role='user' "
            "AND m.text!='' AND NOT EXISTS (SELECT 1 FROM parts p WHERE p.session_id=m.session_id "
            "AND p.seq=m.seq AND p.type='tool_result') ORDER BY m.seq DESC LIMIT 1", (sid, seen))
        if rows:
            self.journal_pending([repo])
            checkpoint(wctx, kind="prompt", session=sid, message_id=rows[0][0],
                       text=(rows[0][1] or "").strip()[:200], status=journal.status_from_journal(repo))

    def journal_paths(self, paths: list[str], now: float) -> None:
        """Changed paths into the journals of their worktrees (agent files wait in the plan)."""
        paths = [p for p in paths if p]  # "" only wakes us for a checkpoint request
        for j in self.plan.feed(paths, now):
            repo = next((r for t, r in self.repos.items() if self.plan.worktrees.get(t) == j.worktree), None)
            if repo is not None:
                try:
                    journal.append(repo, list(j.paths))
                except OSError as e:
                    self.log(f"journal of {repo.workdir}: {e}")

    def journal_pending(self, repos: Sequence[Repo] = ()) -> None:
        """Every event queued so far into the journals: a checkpoint taken now holds what changed
        before it (an import can take long enough for a tool's write to queue meanwhile).

        Each watch delivers its events in order, but watches race each other: a tool's write in a
        worktree can arrive after the agent's session line written after it (seen: 0.4 s late,
        while the worktree's watch read the checkpoint's own writes in .git). So for each of
        ``repos`` whose gitdir lies in its worktree, a barrier file is written there and its
        event awaited: everything that worktree's watch saw before it is then in the queue."""
        waiting: set[str] = set()
        for repo in repos:
            marker = self._barrier(repo)
            if marker:
                waiting.add(marker)
        paths = []
        deadline = time.monotonic() + BARRIER_TIMEOUT_S
        while True:
            try:
                if waiting:
                    p = self.events.get(timeout=max(0.0, deadline - time.monotonic()))
                else:
                    p = self.events.get_nowait()
            except queue.Empty:
                for late in waiting:
                    self.log(f"no event for {late} after {BARRIER_TIMEOUT_S} s")
                    _unlink(late)
                break
            if p in waiting:
                waiting.discard(p)
                _unlink(p)
            elif os.path.basename(p).startswith(BARRIER_PREFIX):
                continue  # a barrier's later events (close, delete)
            else:
                paths.append(p)
        if paths:
            self.journal_paths(paths, time.monotonic())
        self.drop_journals_if_overflowed()

    def _barrier(self, repo: Repo) -> str | None:
        """Write a barrier file in ``repo``'s watched tree (its gitdir, when inside it)."""
        top = next((t for t, r in self.repos.items() if r is repo and t in self.watches), None)
        if top is None or not self.obs.watching(top):
            return None
        run = os.path.realpath(repo.oxide_dir / "run")
        rel = os.path.relpath(run, os.path.realpath(top))
        if rel.startswith(os.pardir):
            # A linked worktree: nothing in it is ours to write. Where its events come on the
            # descriptor the tree holding the gitdir (the main worktree) is watched on, in the
            # kernel's order whatever the tree (inotify_tree), a barrier there comes after them.
            top = self.obs.same_queue_tree(top, run)
            if top is None:
                return None
            rel = os.path.relpath(run, os.path.realpath(top))
        run_dir = os.path.join(top, rel)  # spelt as the watch spells its events' paths
        self.barriers += 1
        path = os.path.join(run_dir, f"{BARRIER_PREFIX}{os.getpid()}-{self.barriers}")
        try:
            os.makedirs(run_dir, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as e:
            self.log(f"no barrier in {run_dir}: {e}")
            return None
        return path

    def drop_journals_if_overflowed(self) -> None:
        """After the kernel dropped events, every journal may miss paths: rebuild them."""
        if not self.overflowed.is_set():
            return
        self.overflowed.clear()
        self.log("the file event queue overflowed; journals rebuilt from git status")
        for repo in self.repos.values():
            journal.drop(repo)
        self.rescan()

    def run(self, ready: threading.Event | None = None) -> None:
        overflow = _OverflowFlag(self.overflowed)
        logging.getLogger("watchdog").addHandler(overflow)
        self.obs.start()
        try:
            self.rescan()
            self.known = {str(p): a for a, p in _safe_discover(self)}
            self.import_due(sorted((a, p) for p, a in self.known.items()), prompts=False)
            self.start_server()
            if ready:
                ready.set()
            last_scan = time.monotonic()
            while not self.stop.is_set():
                paths = []
                try:
                    paths.append(self.events.get(timeout=0.05))
                    while True:
                        paths.append(self.events.get_nowait())
                except queue.Empty:
                    pass
                now = time.monotonic()
                self.journal_paths(paths, now)
                self.drop_journals_if_overflowed()
                if self.server is not None and self.server.has_pending():
                    # after the journals took every event seen so far, and the worktrees' own
                    # watches caught up with the writes made before the request
                    self.journal_pending(list(self.repos.values()))
                    self.server.serve_pending(self.serve)
                due = self.plan.due(now)
                if due:
                    self.import_due([(d.agent, d.path) for d in due], prompts=True)
                elif self.indexer is not None and self.indexer.poll() is not None:
                    self.indexer = None  # ended (and reaped): the next one if imports came meanwhile
                    if self.index_due:
                        self.keep_search_up()
                if now - last_scan > RESCAN_S:
                    self.rescan()
                    last_scan = now
        finally:
            if self.indexer is not None:  # it may be left mid-way (a catch-up is safe to cut short)
                self.indexer.terminate()
                try:
                    self.indexer.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.indexer.kill()
                    self.indexer.wait()
            if self.server is not None:
                self.server.close()
            self.obs.stop()
            logging.getLogger("watchdog").removeHandler(overflow)

    def start_server(self) -> None:
        """Answer `git oxide checkpoint` over the socket (see ``fastpath``); optional."""
        from oxide_git.watch import server as watch_server

        if self.answer is None:
            return
        try:
            server = watch_server.Server(self.ctx.repo.common_dir, self.log, lambda: self.events.put(""))
            self.serve = self.answer(self.ctx.repo.common_dir, self.repos)
            if server.start():
                self.server = server
        except Exception:
            self.log(f"not serving checkpoints:\n{traceback.format_exc()}")


class _OverflowFlag(logging.Handler):
    """watchdog reports a kernel queue overflow (lost events) only in its log."""

    def __init__(self, flag: threading.Event) -> None:
        super().__init__(logging.WARNING)
        self.flag = flag

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.flag.set()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _safe_discover(w: Watcher) -> list[tuple[str, Path]]:
    from oxide_git.imports.importing import discover

    try:
        return discover(w.ctx)
    except Exception:
        w.log(f"discover failed:\n{traceback.format_exc()}")
        return []
