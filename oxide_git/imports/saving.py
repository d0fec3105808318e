"""Where an import's batches go (``Store``): git, then this process's index; a new session linked to
the one whose history it copied (an agent's resume-by-copy or fork)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from oxide_git.core.model import Message, Session
from oxide_git.store.batch import FileBatch
from oxide_git.store.context import Context

Progress = Callable[[int, int], None]


class Store:
    """Where a file's batches go: git, then this process's index (its rows on a thread of their
    own for a big file). Also links a new session to the one whose history it copied."""

    def __init__(self, ctx: Context, background: bool, batch: FileBatch | None = None) -> None:
        self.ctx = ctx
        self.batch = batch  # the files' writes held and stored together (``import_batch``)
        # A big file: its index rows are written on another core while the next batch is parsed.
        self.queue = None
        if background:
            from oxide_git.store.index_queue import IndexQueue

            self.queue = IndexQueue(ctx.index.path)
        self.linked: dict[str, Session] = {}  # sessions found to be forks, by id

    @functools.cached_property
    def redactor(self) -> Any:
        """The repository's redactor, looked up once for every batch (its config read through
        pygit2 and its allowlists' stat were 5% of a bulk import of 1,500 small files)."""
        from oxide_git.store import redact

        return redact.redactor_for(self.ctx)

    def share_with_children(self) -> None:
        """What forked children use, looked up here once for all of them: the project id (read,
        or asked of git and kept) and the redactor (a bulk import's children redact with it)."""
        self.ctx.repo.project_id()
        _ = self.redactor

    @property
    def later(self) -> Callable[[Callable[[Any], None]], None] | None:
        if self.batch is not None:
            return self.batch.later
        return self.queue.submit if self.queue is not None else None

    def link(self, s: Session, start: int, native_ids: list[str | None]) -> Session:
        """``s`` with the parent its first batch revealed (an agent's resume-by-copy or fork)."""
        if s.parent_id is not None:
            return s
        known = self.linked.get(s.id)
        if known is not None:
            return replace(s, parent_id=known.parent_id, fork_message_id=known.fork_message_id)
        if start != 0 or not native_ids:
            return s
        if self.queue is not None:
            self.queue.drain()  # it reads what earlier batches indexed
        if self.batch is not None:
            if self.batch.links_into(s.agent, s.extra.get("forked_from") or s.extra.get("parent_native_id"),
                                     next((n for n in native_ids if n), None)):
                self.batch.flush(wait=True)  # the session it copies is held, or queued: index it first
            elif self.batch.began_empty:  # a first import: only the batch's own could be copied
                return s
        s = _link_copied_history(self.ctx, s, native_ids)
        if s.parent_id is not None:
            self.linked[s.id] = s
        return s

    def save(self, s: Session, start: int, msgs: list[Message]) -> Session:
        from oxide_git.store import (
            writes as store,  # git and what writes to it: not loaded when nothing changed
        )

        s = self.link(s, start, [m.native_id for m in msgs])
        store.save(self.ctx, s, dict(enumerate(msgs, start)), summary=summary(s, len(msgs)), later=self.later)
        if self.batch is not None:
            self.batch.remember(s.agent, s.native_id, [m.native_id for m in msgs])
        return s

    def close(self, raise_error: bool = True) -> None:
        """Every batch indexed (raises what an index write raised)."""
        if self.queue is not None:
            queue, self.queue = self.queue, None
            queue.close(raise_error)


def summary(s: Session, n: int) -> str:
    return f"import {n} message(s) from {s.agent}"


def _link_copied_history(ctx: Context, s: Session, native_ids: list[str | None]) -> Session:
    """A session whose first messages (their ``native_ids``) are another session's (an agent's
    resume-by-copy or fork) becomes a fork of it instead of an unrelated session. The session the
    agent names (``forked_from``, ``parent_native_id``) wins; either way the fork point is the last
    message they share (a pi branch repeats the path it left, then goes its own way)."""
    first = next((n for n in native_ids if n), None)
    hint = s.extra.get("forked_from") or s.extra.get("parent_native_id")
    rows = ctx.index.query("SELECT id FROM sessions WHERE native_id=? AND id!=?",
                           (str(hint), s.id)) if hint else []
    if not rows and first:
        rows = ctx.index.query(
            "SELECT m.session_id FROM messages m JOIN sessions x ON x.id=m.session_id "
            "WHERE m.native_id=? AND m.session_id!=? AND x.agent=? LIMIT 1", (first, s.id, s.agent))
    if not rows:
        return s
    parent = rows[0][0]
    if not first:
        return replace(s, parent_id=parent)
    theirs = ctx.index.query(
        "SELECT id, native_id FROM messages WHERE session_id=? ORDER BY seq", (parent,))
    shared = None
    for mine, (mid, nid) in zip(native_ids, theirs, strict=False):
        if mine != nid:
            break
        shared = mid
    return replace(s, parent_id=parent, fork_message_id=shared)
