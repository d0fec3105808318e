"""Ids as people give and see them: resolving an id, a prefix or an agent's own id to a session,
a checkpoint or a message, and the shortest unique prefixes printed for them (``abbrev``).

A mixin of ``Index`` (it needs only ``query``), kept apart so that the index stays a cache module.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from oxide_git.core.abbrev import Abbreviator
from oxide_git.core.errors import Ambiguous, NotFound

CHECKPOINT_MIN = 7  # as git abbreviates a commit


def id_chunks(ids: Sequence[Any], size: int = 500) -> Iterator[tuple[list[Any], str]]:
    """``ids`` a few hundred at a time (within SQLite's limit on parameters), each part with the
    marks of its ``IN (...)`` list."""
    for at in range(0, len(ids), size):
        part = list(ids[at:at + size])
        yield part, ",".join("?" * len(part))


class IdLookups:
    def query(self, sql: str, args: Iterable[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def resolve_session(self, prefix: str) -> str:
        """A session id from its oxide id or its agent's own id, or a unique prefix of either.

        An exact match wins over prefix matches (a Claude session's own id is a prefix of its
        sub-agents' ids); an oxide id wins over an agent's id."""
        prefix = prefix.strip()
        if not prefix:
            raise NotFound("empty session id")
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self.query(
            "SELECT id, native_id, agent, title, first_prompt FROM sessions "
            "WHERE id LIKE ? ESCAPE '\\' OR native_id LIKE ? ESCAPE '\\'", (like, like))
        exact = sorted({r[0] for r in rows if r[0] == prefix})
        native = sorted({r[0] for r in rows if r[1] == prefix})
        ids = exact or native or sorted({r[0] for r in rows})
        if not ids:
            raise NotFound(f"session {prefix} not found",
                           hint="run `git oxide list --all` to see sessions")
        if len(ids) > 1:
            short = self.session_abbrev().of
            about = {r[0]: r for r in rows}
            some = "; ".join(
                f"{short(i)} ({about[i][2]}: {' '.join(str(about[i][3] or about[i][4] or '-').split())[:40]})"
                for i in ids[:5]) + (f"; and {len(ids) - 5} more" if len(ids) > 5 else "")
            raise Ambiguous(f"session id {prefix} is ambiguous: it matches {len(ids)} sessions",
                            hint=f"give one of: {some}")
        return str(ids[0])

    def session_abbrev(self, every: Iterable[tuple[str, str | None]] | None = None) -> Abbreviator:
        """The shortest unique prefix of each session id (against every oxide and agent id).
        ``every``: each session's (id, native_id), when the caller has read them all already."""
        rows = list(every) if every is not None else self.query("SELECT id, native_id FROM sessions")
        return Abbreviator([(r[0], r[0]) for r in rows] + [(r[1], r[0]) for r in rows if r[1]])

    def session_prefix(self, session_id: str) -> str:
        """``session_abbrev().of(session_id)`` for one id, from its neighbours only (one
        statement of a few index lookups instead of reading every id: for `checkpoint`'s
        message and `search`'s hits)."""
        near = " UNION ALL ".join(
            f"SELECT * FROM (SELECT {col}, id FROM sessions WHERE {col} {op} ?1 AND id != ?1 "
            f"ORDER BY {col} {order} LIMIT 1)"
            for col in ("id", "native_id") for op, order in (("<", "DESC"), (">", "ASC")))
        keys = [(session_id, session_id)] + [(r[0], r[1]) for r in self.query(
            f"{near} UNION ALL SELECT native_id, id FROM sessions WHERE id = ?1", (session_id,)) if r[0]]
        return Abbreviator(keys).of(session_id)

    def checkpoint_abbrev(self) -> Abbreviator:
        return Abbreviator(((r[0], r[0]) for r in self.query("SELECT id FROM checkpoints")),
                           minimum=CHECKPOINT_MIN)

    def checkpoint_prefix(self, checkpoint_id: str) -> str:
        """``checkpoint_abbrev().of(checkpoint_id)`` for one id, from its neighbours only."""
        near = " UNION ALL ".join(
            f"SELECT * FROM (SELECT id FROM checkpoints WHERE id {op} ?1 ORDER BY id {order} LIMIT 1)"
            for op, order in (("<", "DESC"), (">", "ASC")))
        keys = [(checkpoint_id, checkpoint_id)] + [(r[0], r[0]) for r in self.query(near, (checkpoint_id,))]
        return Abbreviator(keys, minimum=CHECKPOINT_MIN).of(checkpoint_id)

    def message_seq(self, session_id: str, ref: str) -> int:
        """The seq of a message given by a unique id prefix, native id or its seq number."""
        if ref.isdigit() and len(ref) < 9:
            return int(ref)
        rows = self.query(
            "SELECT seq FROM messages WHERE session_id=? AND (id LIKE ? OR native_id LIKE ?)",
            (session_id, ref + "%", ref + "%"))
        if not rows and len(ref) == 20:
            # A whole message id names its seq in its last 8 digits (``model.message_id_for``);
            # its time prefix changes when the last message of a growing file gets its first
            # timestamp from a line read later, so a checkpoint's message is found by seq too.
            rows = self.query("SELECT seq FROM messages WHERE session_id=? AND substr(id, 13)=?",
                              (session_id, ref[12:]))
        if not rows:
            raise NotFound(f"message {ref} not found in session {session_id[:12]}",
                           hint=f"run `git oxide show {session_id[:12]}` to see its messages")
        if len(rows) > 1:
            raise Ambiguous(f"message id {ref} is ambiguous", hint="give more characters")
        return int(rows[0][0])

    def resolve_checkpoint(self, prefix: str) -> str:
        prefix = prefix.strip()
        rows = self.query("SELECT id FROM checkpoints WHERE id LIKE ?", (prefix + "%",)) if prefix else []
        if not rows:
            raise NotFound(f"checkpoint {prefix} not found",
                           hint="run `git oxide checkpoints` to see checkpoints")
        if len(rows) > 1:
            short = self.checkpoint_abbrev().of
            raise Ambiguous(f"checkpoint id {prefix} is ambiguous: it matches {len(rows)} checkpoints",
                            hint="give one of: " + ", ".join(short(r[0]) for r in rows[:5]))
        return str(rows[0][0])
