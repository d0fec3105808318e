"""Read-only views of the store: list, show, checkpoints, search."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oxide_git.store.context import Context


def to_iso(ms: Any) -> Any:
    """``model.to_iso``, imported when first used: `search` imports no model."""
    from oxide_git.core.model import to_iso as iso

    return iso(ms)


if TYPE_CHECKING:  # `list` reads the index only: no pygit2, no msgpack on its path
    from oxide_git.core.model import Message, Session
    from oxide_git.git.objects import Objects

_TIME_FIELDS = ("created_at", "updated_at")


def _iso(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (to_iso(v) if k in _TIME_FIELDS and isinstance(v, int) else v) for k, v in row.items()}


def list_sessions(
    ctx: Context, *, all_worktrees: bool = False, agent: str | None = None
) -> list[dict[str, Any]]:
    """Sessions, newest first: this worktree's, or every one in the store with ``all_worktrees``."""
    from oxide_git.store.index_list import LIST_FIELDS

    rows = ctx.index.session_rows(
        worktree=None if all_worktrees else ctx.repo.worktree_id, agent=agent)
    return [{k: (to_iso(r.get(k)) if k in _TIME_FIELDS else r.get(k)) for k in LIST_FIELDS}
            for r in rows]


def list_sessions_json(ctx: Context, *, all_worktrees: bool = False, agent: str | None = None) -> bytes:
    """The same rows as ``list_sessions``, as the JSON text `list --json` prints (UTF-8)."""
    return ctx.index.session_list_json(
        worktree=None if all_worktrees else ctx.repo.worktree_id, agent=agent)


@dataclass
class Shown:
    session: Session
    count: int
    children: list[str]
    messages: Iterator[tuple[int, Message]]
    checkpoints: list[dict[str, Any]]
    json: Iterator[dict[str, Any]]  # the same messages, JSON-ready (use one or the other)
    last_compaction: int = -1  # seq of the last compaction message (-1: none)
    start: int = 0  # the first seq the messages stream from


def show(ctx: Context, ref: str, start: int | None = 0) -> Shown:
    """One session from git (the truth): header, then its messages streamed in order (from seq
    ``start``; None: from the last compaction, whose summary stands for what came before)."""
    from oxide_git.core import codec
    from oxide_git.store import logread

    sid = ctx.index.resolve_session(ref)
    objects = ctx.repo.objects  # the log read without pygit2: `show` is a command people wait on
    log = logread.tip_required(objects, ctx.repo.common_dir, sid, ref)
    rows = ctx.index.query(
        "SELECT max(seq) FROM messages WHERE session_id=? AND is_compaction=1", (sid,))
    last_compaction = rows[0][0] if rows and rows[0][0] is not None else -1
    first = max(last_compaction, 0) if start is None else start
    children = [r[0] for r in ctx.index.query("SELECT id FROM sessions WHERE parent_id=?", (sid,))]

    def messages() -> Iterator[tuple[int, Message]]:
        from dataclasses import replace

        for seq, data in logread.iter_blobs(objects, log.tree, first):
            m = codec.decode_message(data)
            yield seq, (replace(m, compacted=True) if seq < last_compaction else m)

    return Shown(log.session, log.count, children, messages(),
                 [_iso(c) for c in ctx.index.checkpoint_rows(sid)],
                 json_messages(objects, log.tree, first, last_compaction), last_compaction, first)


def session_json(s: Session, count: int | None = None, children: list[str] | None = None) -> dict[str, Any]:
    from oxide_git.core import codec

    d = codec.session_to_dict(s)
    d.pop("source", None)
    for k in _TIME_FIELDS:
        d[k] = to_iso(d.get(k))
    if count is not None:
        d["message_count"] = count
    if children is not None:
        d["children"] = children
    return d


def message_json(seq: int, m: Message) -> dict[str, Any]:
    from oxide_git.core import codec

    return message_dict_json(seq, codec.message_to_dict(m))


def message_dict_json(seq: int, d: dict[str, Any], compacted: bool = False) -> dict[str, Any]:
    """A stored message dict as `show --json` prints it: id, seq, role, created_at (ISO),
    compacted, parts first, then the other fields."""
    created = d.pop("created_at", None)
    return {"id": d.pop("id", ""), "seq": seq, "role": d.pop("role"),
            "created_at": to_iso(created) if isinstance(created, int) else created,
            "compacted": bool(d.pop("compacted", False)) or compacted, "parts": d.pop("parts"), **d}


def json_messages(
    objects: Objects, tree: bytes, start: int = 0, compacted_before: int = -1, stop: int | None = None
) -> Iterator[dict[str, Any]]:
    """Messages of the log tree ``tree`` straight to JSON-ready dicts (no model objects: this is
    the hot loop of `show --json` and `resume --format json`)."""
    from oxide_git.core import codec
    from oxide_git.store import logread

    for seq, data in logread.iter_blobs(objects, tree, start, stop):
        yield message_dict_json(seq, codec.decode_message_dict(data), seq < compacted_before)


def list_checkpoints(ctx: Context, session: str | None = None) -> list[dict[str, Any]]:
    from oxide_git.store.retention import annotate

    sid = ctx.index.resolve_session(session) if session else None
    return [_iso(r) for r in annotate(ctx, ctx.index.checkpoint_rows(sid))]


def search(ctx: Context, query: str, limit: int = 50) -> list[dict[str, Any]]:
    from oxide_git.store.search_query import search

    hits = search(ctx.index, query, limit)
    from oxide_git.core.titles import display

    titles = {r["id"]: display(r.get("title"), r.get("first_prompt"), r["id"])
              for r in ctx.index.session_rows(ids={h["session_id"] for h in hits})}
    return [{**h, "title": titles.get(h["session_id"])} for h in hits]
