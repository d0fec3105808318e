"""Writes that go to git and to the index together: git first (the truth), then the cache.

Every operation that records sessions, messages or checkpoints goes through here, so the index
never drifts from the refs it describes (and if a crash falls between the two, ``reindex`` heals).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from oxide_git.core import codec
from oxide_git.core.model import Message, Session
from oxide_git.git import refs
from oxide_git.store import logread, logwrite, redact
from oxide_git.store.context import Context
from oxide_git.store.index_rows import Rows
from oxide_git.store.index_rows import message_rows as index_rows

if TYPE_CHECKING:
    from oxide_git.store.index import Index
    from oxide_git.store.snapshots import Checkpoint

# Where the index rows of a write go: None writes them now; an import passes IndexQueue.submit.
Later = Callable[[Callable[["Index"], None]], None] | None


def save(
    ctx: Context,
    session: Session,
    puts: Mapping[int, Message],
    *,
    summary: str,
    truncate_at: int | None = None,
    later: Later = None,
) -> tuple[str | None, dict[int, Message]]:
    """Place messages at their seqs (replacing or appending) on the session's current tip."""
    return _write(ctx, session, lambda _log: puts, summary, truncate_at, later)


def append(ctx: Context, session: Session, messages: list[Message]) -> dict[int, Message]:
    """Append messages at the end of the session (creating it); returns them by seq."""
    _oid, placed = _write(ctx, session, lambda log: dict(enumerate(messages, log.count if log else 0)),
                          f"append {len(messages)} message(s)", None, None)
    return placed


def _write(
    ctx: Context,
    session: Session,
    place: Callable[[logread.Tip | None], Mapping[int, Message]],
    summary: str,
    truncate_at: int | None,
    later: Later,
) -> tuple[str | None, dict[int, Message]]:
    """The one write path: on the current tip (``place`` picks the seqs from it), redacted,
    compare-and-swapped (rebuilt when another writer won), then indexed (now, or by ``later``).
    Returns the new tip's id (None when nothing changed) and the messages written by seq."""
    objects, common = ctx.repo.objects, ctx.repo.common_dir

    def attempt() -> tuple[bytes | None, dict[int, Message], Session]:
        log = logread.tip(objects, common, session.id)
        placed = logwrite.with_ids(session.id, place(log))
        s, placed, blobs = redact.for_write(ctx, log, session, placed, truncate_at)  # secrets never reach git
        oid = logwrite.commit(
            objects, common, s, blobs, now_ms=ctx.now_ms, summary=summary,
            truncate_at=truncate_at, base=log, expected=log.commit if log else None,
        )
        return oid, placed, s

    oid, placed, written = refs.retry_on_move(attempt)
    if oid is not None:
        _index(ctx, oid, written, sorted(placed), index_rows(placed), truncate_at, later)
    return None if oid is None else oid.hex(), placed


def redacted(r: redact.Redactor | None, encoded: Mapping[int, tuple[bytes, bytes]], counts: Counter[str],
             rows: Rows) -> tuple[dict[int, bytes], Counter[str], Rows]:
    """Messages that arrive encoded (by an import's parser process), redacted: ``encoded`` maps
    each seq to the message's bytes and the part of them redaction reads, ``counts`` sums their
    redaction counts, ``rows`` are their index rows. Only a message the gate cannot clear is
    decoded (and walked, and its batch's counts and rows worked out again)."""
    blobs: dict[int, bytes] = {}
    changed: dict[int, Message] = {}
    for q, (blob, scan) in encoded.items():
        blobs[q], m = r.reencoded(blob, scan) if r else (blob, None)
        if m is not None:
            changed[q] = m
    if changed:  # a secret the parser process could not know of: rare
        msgs = {q: changed.get(q) or codec.decode_message(b) for q, b in blobs.items()}
        counts = sum((redact.message_counts(m) for m in msgs.values()), Counter())
        rows = index_rows(msgs)
    return blobs, counts, rows


def save_encoded(ctx: Context, session: Session, blobs: Mapping[int, bytes], ids: Mapping[int, bytes] | None,
                 counts: Counter[str], rows: Rows, *, summary: str, later: Later = None,
                 redactor: redact.Redactor | None = None) -> None:
    """``save`` for messages that arrive encoded and redacted (``redacted``; by an import's parser
    process, with this repository's redactor, ``redactor``): ``blobs`` maps each seq to the
    message's stored bytes, ``ids`` to their object ids (None: worked out here), ``counts`` sums
    their redaction counts, ``rows`` are their index rows. The session's own fields are redacted
    here."""
    objects, common = ctx.repo.objects, ctx.repo.common_dir
    r = redactor or redact.redactor_for(ctx)

    def attempt() -> tuple[bytes | None, Session]:
        log = logread.tip(objects, common, session.id)
        s = redact.session_for_write(ctx, log, session, counts, blobs, None, r)
        oid = logwrite.commit(objects, common, s, blobs, now_ms=ctx.now_ms, summary=summary, base=log,
                              expected=log.commit if log else None, ids=ids)
        return oid, s

    oid, written = refs.retry_on_move(attempt)
    if oid is not None:
        _index(ctx, oid, written, sorted(blobs), rows, None, later)


def _index(ctx: Context, oid: bytes, written: Session, seqs: list[int], rows: Rows,
           truncate_at: int | None, later: Later) -> None:
    """The index rows of a write git took: now, or by ``later``."""
    count = logread.count_of(ctx.repo.objects, oid)
    log_commit = oid.hex()

    def put(index: Index) -> None:
        with index.write() as conn:
            index.put_rows(conn, written.id, seqs, rows, truncate_at=truncate_at)
            index.put_session(conn, written, log_commit=log_commit, count=count)

    if later is None:
        put(ctx.index)
    else:
        later(put)


def record_checkpoint(ctx: Context, cp: Checkpoint) -> None:
    with ctx.index.write() as conn:
        ctx.index.put_checkpoint(conn, cp)


def current_session(ctx: Context) -> str | None:
    """The session this worktree is working in (set by import, resume, hooks), if any."""
    try:
        sid = (ctx.repo.worktree_dir / "current-session").read_text().strip()
    except OSError:
        return None
    return sid or None


def set_current_session(ctx: Context, session_id: str | None, why: str | None = None) -> None:
    """Make ``session_id`` current here; ``why`` (one sentence) is what `git oxide status` says."""
    import json

    ctx.repo.worktree_dir.mkdir(parents=True, exist_ok=True)
    (ctx.repo.worktree_dir / "current-session").write_text((session_id or "") + "\n")
    (ctx.repo.worktree_dir / "current-session.why").write_text(
        json.dumps({"session": session_id, "why": why, "at": ctx.now_ms}) + "\n")


def current_session_why(ctx: Context) -> dict[str, object]:
    """``{"why": sentence or None, "at": ms or None}`` for the current session."""
    import json

    try:
        d = json.loads((ctx.repo.worktree_dir / "current-session.why").read_text())
    except (OSError, ValueError):
        d = {}
    if not isinstance(d, dict) or d.get("session") != current_session(ctx):
        return {"why": None, "at": None}
    return {"why": d.get("why"), "at": d.get("at")}
