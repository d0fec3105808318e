"""What the sessions cost: tokens and USD per session, agent, model or day (`git oxide usage`).

Each session's responses (``usage_read.spent``) are summed per day and model once, when its log
is first asked about, and kept in the index (``usage_spent``, with the log commit they are of in
``usage_seen``): a session whose log moved since is read again from git, the others are not, so
a store of thousands of sessions answers from a few thousand small rows. Like the rest of the
index it is a cache: deleting it loses nothing, the sums are made again from git.

Costs are worked out at each query, not kept: the price table can change (``prices``). A
response whose agent recorded its cost in USD counts that figure; the others are priced from
the table, and a row with tokens of a model the table does not know has no cost (None).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from oxide_git.core.errors import OxideError
from oxide_git.ops import prices
from oxide_git.ops.usage_read import spent

if TYPE_CHECKING:
    import sqlite3

    from oxide_git.core.model import Session
    from oxide_git.store.context import Context

BY = ("session", "agent", "model", "day")
TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_MERGED = "merged_from"  # a message `merge` copied from a fork names where it came from
_BATCH = 500  # sessions read from git between two writes of their sums
# another shape of the tables below, or another reading of the records: another version (2: Copilot
# CLI's, Cline's and Aider's cache shares, Qwen Code's thoughts)
_VERSION_KEY, _VERSION = "usage_tables", "2"
_AIDER_VERSION = "aider_version"  # the session's extra: the release its history names
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS usage_seen (session_id TEXT PRIMARY KEY, log_commit TEXT, "
    "parent_commit TEXT)",
    # per session, day and model: all tokens; the cost the agent recorded; the tokens of the
    # responses it recorded none for (priced at each query); the number of responses
    "CREATE TABLE IF NOT EXISTS usage_spent (session_id TEXT, day TEXT, model TEXT, input INTEGER, "
    "output INTEGER, cache_read INTEGER, cache_write INTEGER, own_cost REAL, p_input INTEGER, "
    "p_output INTEGER, p_cache_read INTEGER, p_cache_write INTEGER, responses INTEGER, "
    "PRIMARY KEY (session_id, day, model))",
)


def _day(ms: int | None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime((ms or 0) // 1000))


def session_rows(agent: str, messages: Iterable[tuple[int, Mapping[str, Any]]], *, model: str | None = None,
                 created_at: int | None = None,
                 copied: Callable[[int, Mapping[str, Any]], bool] | None = None,
                 version: str | None = None) -> list[tuple[Any, ...]]:
    """A session's ``usage_spent`` rows (without its id) from its messages as plain dicts
    (``version``: the agent's, as the session records it: ``usage_read.counts``);
    ``copied``: whether a message is a copy of its parent's (a fork's), which the parent spent
    (all are read, then those left out: Codex's running totals need the copies); the messages a
    merge brought in from a fork are not read at all."""
    # what `merge` brought in from a fork (``merge_marks.FROM_KEY``) was spent in the fork
    msgs = [(q, m) for q, m in messages
            if not (isinstance(m.get("extra"), Mapping) and m["extra"].get(_MERGED))]
    skip = {q for q, m in msgs if copied(q, m)} if copied is not None else set()
    sums: dict[tuple[str, str], list[Any]] = {}
    for s in spent(agent, msgs, model, version):
        if s.seq in skip:
            continue
        row = sums.setdefault((_day(s.at if s.at is not None else created_at), s.model or ""),
                              [0, 0, 0, 0, None, 0, 0, 0, 0, 0])
        tokens = (s.input, s.output, s.cache_read, s.cache_write)
        for i, n in enumerate(tokens):
            row[i] += n
        if s.cost is not None:
            row[4] = (row[4] or 0.0) + s.cost
        else:
            for i, n in enumerate(tokens):
                row[5 + i] += n
        row[9] += 1
    return [(day, model_, *row) for (day, model_), row in sums.items()]


# a fork's rows depend on its parent's messages (what it copied): read again when either moves
_STALE = ("SELECT s.id, s.log_commit, p.log_commit, s.message_count FROM sessions s "
          "LEFT JOIN sessions p ON p.id=s.parent_id LEFT JOIN usage_seen u ON u.session_id=s.id "
          "WHERE (u.log_commit IS NOT s.log_commit OR u.parent_commit IS NOT p.log_commit)")


def _tables(ctx: Context) -> None:
    db = ctx.index
    if db.meta(_VERSION_KEY) != _VERSION:  # made by another build (or none yet): made again
        with db.write() as conn:
            conn.execute("DROP TABLE IF EXISTS usage_seen")
            conn.execute("DROP TABLE IF EXISTS usage_spent")
            for sql in _SCHEMA:
                conn.execute(sql)
            db.put_meta(conn, _VERSION_KEY, _VERSION)


def to_read(ctx: Context, session_id: str) -> int:
    """How many messages ``session_total`` would first read from git (0: its sums are kept)."""
    _tables(ctx)
    rows = ctx.index.query(_STALE + " AND s.id=?", (session_id,))
    return int(rows[0][3] or 0) if rows else 0


def _ensure(ctx: Context, ids: Iterable[str] | None = None) -> None:
    """Bring ``usage_spent`` up to the sessions' logs (those of ``ids``, or all)."""
    db = ctx.index
    _tables(ctx)
    stale = [(r[0], r[1], r[2]) for r in db.query(_STALE)]
    if ids is not None:
        wanted = set(ids)
        stale = [r for r in stale if r[0] in wanted]
    if not stale:
        if db.query("SELECT 1 FROM usage_seen u LEFT JOIN sessions s ON s.id=u.session_id "
                    "WHERE s.id IS NULL LIMIT 1"):
            with db.write() as conn:
                _forget_removed(conn)
        return
    import pygit2  # only now: a command that finds nothing to read does not load it

    from oxide_git.core import codec
    from oxide_git.store import sessionlog

    fresh: list[tuple[str, str | None, str | None, list[tuple[Any, ...]]]] = []
    for sid, tip, parent_tip in stale:
        rows: list[tuple[Any, ...]] = []
        if tip:
            try:
                log = sessionlog.load_commit(ctx.repo, pygit2.Oid(hex=tip))
                s = log.session
                dicts = ((q, codec.decode_message_dict(b))
                         for q, b in sessionlog.iter_blobs(ctx.repo, log.commit.tree))
                version = s.extra.get(_AIDER_VERSION)
                rows = session_rows(s.agent, dicts, model=s.model, created_at=s.created_at,
                                    copied=_copied(ctx, s) if s.parent_id else None,
                                    version=version if isinstance(version, str) else None)
            except (OxideError, ValueError):
                continue  # a log git no longer has whole: left out (`doctor` names it)
        fresh.append((sid, tip, parent_tip, rows))
        if len(fresh) >= _BATCH:  # kept as it goes: ^C keeps what was read
            _write(ctx, fresh)
            fresh = []
    _write(ctx, fresh)


def _write(ctx: Context, fresh: list[tuple[str, str | None, str | None, list[tuple[Any, ...]]]]) -> None:
    with ctx.index.write() as conn:
        for row in fresh:
            _put(conn, *row)
        _forget_removed(conn)


def _forget_removed(conn: sqlite3.Connection) -> None:
    for table in ("usage_spent", "usage_seen"):  # the rows of sessions removed since
        conn.execute(f"DELETE FROM {table} WHERE session_id NOT IN (SELECT id FROM sessions)")


def _copied(ctx: Context, s: Session) -> Callable[[int, Mapping[str, Any]], bool]:
    """Which messages of the fork ``s`` are its parent's: before the point `fork` copied up to,
    and the first ones that are its parent's, message for message (an agent's resume-by-copy,
    fork or branch repeats them: what ``importing`` links as a fork), up to the first that is not."""
    fork = s.extra.get("fork_seq")
    if isinstance(fork, int):  # `fork`'s (or `pull`'s): it says how many it copied
        return lambda q, m: q < fork
    theirs = [r[0] for r in ctx.index.query(
        "SELECT native_id FROM messages WHERE session_id=? ORDER BY seq", (s.parent_id,))]
    diverged = [not s.fork_message_id]  # an agent's copy is linked with the last message it shares

    def copied(q: int, m: Mapping[str, Any]) -> bool:
        if not diverged[0] and (q >= len(theirs) or m.get("native_id") != theirs[q]):
            diverged[0] = True
        return not diverged[0]

    return copied


def _put(conn: sqlite3.Connection, sid: str, tip: str | None, parent_tip: str | None,
         rows: list[tuple[Any, ...]]) -> None:
    conn.execute("DELETE FROM usage_spent WHERE session_id=?", (sid,))
    conn.executemany(f"INSERT INTO usage_spent VALUES (?{',?' * 12})", [(sid, *r) for r in rows])
    conn.execute("INSERT OR REPLACE INTO usage_seen VALUES (?, ?, ?)", (sid, tip, parent_tip))


# A row's cost: the agent's own figure, plus its other tokens at the model's price (per million);
# a row with such tokens and no price for its model makes its group's cost unknown.
_COST = ("sum(coalesce(u.own_cost, 0) + coalesce((u.p_input * p.input + u.p_output * p.output + "
         "u.p_cache_read * p.cache_read + u.p_cache_write * p.cache_write) / 1e6, 0))")
_UNPRICED = "p.model IS NULL AND u.p_input + u.p_output + u.p_cache_read + u.p_cache_write > 0"


def _prices_table(ctx: Context) -> None:
    """The price of each model the rows name, in a temporary table the query joins."""
    table = prices.for_context(ctx)
    db = ctx.index.db
    db.execute("CREATE TEMP TABLE IF NOT EXISTS usage_price (model TEXT PRIMARY KEY, input REAL, "
               "output REAL, cache_read REAL, cache_write REAL)")
    db.execute("DELETE FROM temp.usage_price")
    models = [r[0] for r in ctx.index.query("SELECT DISTINCT model FROM usage_spent")]
    db.executemany("INSERT INTO temp.usage_price VALUES (?, ?, ?, ?, ?)",
                   [(m, *p) for m in models if (p := prices.find(table, m)) is not None])


def _joined(values: str | None) -> str | None:
    """SQLite's ``group_concat`` of names, sorted (None when there is none)."""
    vals = sorted({v for v in (values or "").split(",") if v})
    return ",".join(vals) if vals else None


def report(ctx: Context, by: str = "session", since: str | None = None,
           ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One row per ``by`` key, in its order (day: oldest first; session: as `list`, the most
    recently updated first; agent and model: most tokens first), with ``session``, ``agent``,
    ``model``, the four token counts, ``cost_usd``, ``responses``, ``sessions`` and the key;
    ``since``: from that day (YYYY-MM-DD, UTC) on."""
    if by not in BY:
        raise OxideError(f"cannot count usage by {by!r}", hint=f"--by takes one of {', '.join(BY)}")
    id_list = list(ids) if ids is not None else None
    _ensure(ctx, id_list)
    key = {"session": "u.session_id", "agent": "s.agent", "model": "u.model", "day": "u.day"}[by]
    where = ("FROM usage_spent u JOIN sessions s ON s.id=u.session_id JOIN usage_seen v ON "
             "v.session_id=u.session_id AND v.log_commit IS s.log_commit LEFT JOIN temp.usage_price p "
             "ON p.model=u.model WHERE 1=1")
    args: list[Any] = []
    if since:
        where += " AND u.day>=?"
        args.append(since)
    if id_list is not None:
        where += f" AND u.session_id IN ({','.join('?' * len(id_list))})"
        args += id_list
    _prices_table(ctx)
    out = []
    for k, *n, cost, unknown, agents, models, sessions, updated in ctx.index.query(
            f"SELECT {key}, sum(u.input), sum(u.output), sum(u.cache_read), sum(u.cache_write), "
            f"sum(u.responses), {_COST}, max({_UNPRICED}), group_concat(DISTINCT s.agent), "
            f"group_concat(DISTINCT u.model), count(DISTINCT u.session_id), max(s.updated_at) {where} "
            "GROUP BY 1", args):
        row = {"session": k if by == "session" else None, "agent": _joined(agents),
               "model": _joined(models), **dict(zip(TOKENS, n[:4], strict=True)),
               "cost_usd": None if unknown else round(cost or 0.0, 6), "responses": n[4],
               "sessions": sessions}
        if by != "session":
            row[by] = k or None
        out.append((updated or 0, row))
    if by == "day":
        out.sort(key=lambda x: x[1]["day"] or "")
    elif by == "session":
        out.sort(key=lambda x: -x[0])
    else:
        out.sort(key=lambda x: -sum(x[1][t] for t in TOKENS))
    return [row for _, row in out]


def total(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The sum of some rows (``cost_usd`` None when any of theirs is)."""
    rows = list(rows)
    out: dict[str, Any] = {k: sum(r[k] for r in rows) for k in (*TOKENS, "responses", "sessions")}
    costs = [r["cost_usd"] for r in rows]
    out["cost_usd"] = None if any(c is None for c in costs) else round(sum(costs), 6)
    return out


def session_total(ctx: Context, session_id: str) -> dict[str, Any] | None:
    """A session's totals (``report``'s fields), or None when its agent recorded no usage."""
    rows = report(ctx, "session", ids=[session_id])
    return rows[0] if rows else None


READ_LIMIT = 5000  # messages read from git for a header's line (~0.2 s); past it, not then


def header_line(ctx: Context, session_id: str) -> str | None:
    """A session's totals on a line for a header (`show`, the picker): None when its agent
    recorded none or the index cannot keep them (a header line is not worth failing a command
    for); a session of more than ``READ_LIMIT`` messages not counted yet is not read then."""
    try:
        if to_read(ctx, session_id) > READ_LIMIT:  # the first line would wait for it
            return "not counted yet in this long session; `git oxide usage` counts it"
        t = session_total(ctx, session_id)
    except OxideError:
        return None
    return line(t) if t else None


def since_day(text: str, now_ms: int) -> str:
    """``--since``'s day: YYYY-MM-DD, an ISO time (its UTC day), or N days ago (``7d``)."""
    from oxide_git.core.model import from_iso

    t = text.strip()
    if t[:-1].isdigit() and t[-1:] in ("d", "w"):
        return _day(now_ms - int(t[:-1]) * (7 if t[-1] == "w" else 1) * 86_400_000)
    ms = from_iso(t)
    if ms is None:
        raise OxideError(f"cannot read the date {text!r}", hint="give a day (2026-12-01), an ISO time, "
                                                               "or a number of days or weeks ago (7d, 2w)")
    return _day(ms)


def cost_text(c: float | None) -> str:
    """USD as people read it: cents, or four decimals under a dollar; ``-`` for no price."""
    if c is None:
        return "-"
    return f"${c:,.2f}" if c >= 1 or c == 0 else f"${c:.4f}"


def line(t: Mapping[str, Any]) -> str:
    """A session's totals on one line (`show`'s header, the HTML export, the picker's preview)."""
    return (f"{t['input_tokens']:,} in, {t['output_tokens']:,} out, {t['cache_read_tokens']:,} cache read, "
            f"{t['cache_write_tokens']:,} cache write tokens; cost {cost_text(t['cost_usd'])}"
            + ("" if t["cost_usd"] is not None else " (a model without a price)"))
