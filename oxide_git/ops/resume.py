"""`git oxide resume`: a session's model context, or the session handed to an agent to continue.

The context is streamed from the last compaction boundary (its summary first, then the earlier
messages the agent kept in it: Cline's copies, pi's from firstKeptEntryId), tool results
included; ``full`` ignores compaction since the originals are kept. Handing a session to an agent
writes it in that agent's own format into that agent's own store and says how to continue it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from oxide_git.core.errors import NotFound
from oxide_git.core.model import Message, Session
from oxide_git.store import sessionlog
from oxide_git.store.context import Context

T = TypeVar("T")


@dataclass
class IntoResult:
    agent: str
    native_id: str
    command: list[str]
    cwd: str
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # native files newer than ours, left alone
    set_aside: list[str] = field(default_factory=list)  # the agent's older files, backed up
    lost: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def last_session(ctx: Context) -> str:
    """The most recently updated session of this worktree, else of the whole project."""
    for worktree in (ctx.repo.worktree_id, None):
        rows = ctx.index.session_rows(worktree=worktree)
        if rows:
            return str(rows[0]["id"])
    raise NotFound("there is no session to resume", hint="run `git oxide import` first")


def context(ctx: Context, ref: str, *, full: bool = False) -> tuple[Session, Iterator[tuple[int, Message]]]:
    """The model context: messages from the last compaction (summary first, then the earlier
    messages it kept), or all (``full``)."""
    log, start, kept = _context_start(ctx, ref, full)
    repo, tree = ctx.repo, log.commit.tree

    def at(seq: int) -> Iterator[tuple[int, Message]]:
        m = sessionlog.message_at(repo, tree, seq)
        return iter([(seq, m)] if m is not None else [])
    return log.session, _with_kept(sessionlog.iter_messages(repo, tree, start), kept, at)


def context_json(ctx: Context, ref: str, *, full: bool = False) -> tuple[Session, Iterator[dict[str, Any]]]:
    """The same context as JSON-ready dicts, streamed without building model objects."""
    from oxide_git.ops.browse import json_messages

    log, start, kept = _context_start(ctx, ref, full)
    objects, tree = ctx.repo.objects, log.commit.tree_id.raw
    return log.session, _with_kept(json_messages(objects, tree, start), kept,
                                   lambda seq: json_messages(objects, tree, seq, stop=seq + 1))


def _with_kept(messages: Iterator[T], kept: list[int], at: Callable[[int], Iterator[T]]) -> Iterator[T]:
    """``messages`` (from the compaction on) with the ``kept`` ones read by ``at`` after the first."""
    first = next(messages, None)
    if first is None:
        return
    yield first
    for seq in kept:
        yield from at(seq)
    yield from messages


def _context_start(ctx: Context, ref: str, full: bool) -> tuple[sessionlog.Log, int, list[int]]:
    """The log, the seq of its last compaction (0: none, or ``full``), and the seqs of the
    earlier messages that compaction kept in the model's context."""
    sid = ctx.index.resolve_session(ref)
    log = sessionlog.load_required(ctx.repo, sid, ref)
    start = 0
    kept: list[int] = []
    if not full:
        rows = ctx.index.query(
            "SELECT max(seq) FROM messages WHERE session_id=? AND is_compaction=1", (sid,))
        start = rows[0][0] or 0
        if start:
            kept = _kept(ctx, sid, sessionlog.message_at(ctx.repo, log.commit.tree, start), start)
    return log, start, kept


def _kept(ctx: Context, sid: str, compaction: Message | None, at: int) -> list[int]:
    """The messages before ``at`` that the compaction there kept, by their native ids: a list
    (``kept``: Cline copies the recent messages into its compaction file) or the first of a run
    that goes on up to the compaction (``kept_from``: pi's firstKeptEntryId)."""
    part = next((p for p in (compaction.parts if compaction else ()) if p.type == "compaction"), None)
    if part is None:
        return []
    rows = ctx.index.query("SELECT seq, native_id FROM messages WHERE session_id=? AND seq<? "
                           "AND native_id IS NOT NULL ORDER BY seq", (sid, at))
    by_native = {str(native): int(seq) for seq, native in rows}
    names = part.get("kept")
    if isinstance(names, list):
        return sorted({by_native[n] for n in names if isinstance(n, str) and n in by_native})
    first = part.get("kept_from")
    if isinstance(first, str) and first in by_native:
        return list(range(by_native[first], at))
    return []


def _own_messages(agent: str, path: Path, native_id: str, env: Any = None) -> Iterator[Message]:
    """The messages of native session ``native_id`` in the agent's file at ``path``."""
    import inspect

    from oxide_git.agents import FoundMessage, FoundSession
    from oxide_git.agents import agent as agent_module

    parse = agent_module(agent).parse
    kwargs = {"env": env} if env is not None and "env" in inspect.signature(parse).parameters else {}
    own: set[str] = set()
    for ev in parse(path, **kwargs):
        if isinstance(ev, FoundSession) and _same_file(ev.session.native_id, native_id):
            own.add(ev.session.id)
        elif isinstance(ev, FoundMessage) and ev.session_id in own:
            yield ev.message


def _same_file(found: str | None, native_id: str) -> bool:
    """``found`` is that native session, or one the agent keeps in its file (a pi branch
    ``<id>/<entry>``, a Claude sidechain ``<id>/sidechain-…``)."""
    return found == native_id or (found or "").startswith(native_id + "/")


def _related_known(ctx: Context, agent: str, native_id: str) -> set[str]:
    """The native message ids the store holds of the sessions kept in the same file as
    ``native_id`` (``_same_file``): what the agent wrote there that is not new."""
    prefix = native_id + "/"
    rows = ctx.index.query(
        "SELECT m.native_id FROM messages m JOIN sessions s ON s.id = m.session_id "
        "WHERE s.agent = ? AND substr(s.native_id, 1, ?) = ? AND m.native_id IS NOT NULL",
        (agent, len(prefix), prefix))
    return {str(r[0]) for r in rows}


def _agent_went_on(agent: str, path: Path, native_id: str, known: set[str], env: Any) -> bool:
    """Does the agent's own file at ``path`` hold messages of that session the store lacks?"""
    try:
        return any(m.native_id and m.native_id not in known
                   for m in _own_messages(agent, path, native_id, env))
    except (OSError, ValueError):
        return True  # unreadable to us: never overwrite it


def _write(path: Path, data: bytes, append: bool, res: IntoResult,
           went_on: Callable[[Path], bool] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if append:
        existing = path.read_bytes() if path.exists() else b""
        if data in existing:
            res.kept.append(str(path))
            return
        with open(path, "ab") as f:
            f.write(data)
        res.written.append(str(path))
        return
    if path.exists():
        existing = path.read_bytes()
        if existing == data:
            res.kept.append(str(path))
            return
        if went_on is not None and went_on(path):
            # The agent's own file has more than we know of (even before a rewind): it is newer;
            # never overwrite it.
            res.kept.append(str(path))
            return
        # Ours wins (the user rewound the conversation, or the agent's file is older): theirs is
        # kept beside it, where the agent does not look, and the store has every message anyway.
        backup = path.with_name(path.name + ".oxide-bak")
        n = 1
        while backup.exists() and backup.read_bytes() != existing:  # an earlier one stays too
            backup = path.with_name(f"{path.name}.oxide-bak.{n}")
            n += 1
        backup.write_bytes(existing)
        res.set_aside.append(str(backup))
    tmp = path.with_name(f".{path.name}.oxide-tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    res.written.append(str(path))


EXPORT_SUMMARY = "exported to "


def rewound(log: sessionlog.Log) -> Any:
    """The log commit from before the rewind, when the conversation's last change was a rewind
    the user asked for (only records of exports written since); else None. Then the agent resumes
    the rewound conversation, not its longer file."""
    c = log.commit
    for _ in range(64):
        summary = c.message.splitlines()[0] if c.message else ""
        if summary.startswith("rewind to"):
            return c.parents[0] if c.parents else None
        if not summary.startswith(EXPORT_SUMMARY) or not c.parents:
            return None
        c = c.parents[0]
    return None


def _record_export(ctx: Context, log: sessionlog.Log, agent: str, exp: Any, env: Any) -> None:
    """Note in the session which native session the agent now has of it, and how many messages
    an import of what was written holds: the next import maps that native session back to this
    one (a continuation), instead of making a new session of our own writing."""
    from oxide_git.store import writes as store

    count = 0
    for path in [*exp.files, *exp.databases]:  # what was written: files, and rows in databases
        try:
            count += sum(1 for _ in _own_messages(agent, Path(path), exp.native_id, env))
        except (OSError, ValueError):
            continue
    exports = dict(log.session.source.get("exports") or {})
    entry = {"native_id": exp.native_id, "messages": count}
    if exports.get(agent) == entry:
        return
    exports[agent] = entry
    session = replace(log.session, source={**log.session.source, "exports": exports})
    store.save(ctx, session, {}, summary=f"{EXPORT_SUMMARY}{agent} as {exp.native_id}")


MERGE_AWARE = frozenset({"claude", "codex"})
"""The exporters that write each message as its own agent's (``Message.made_by``): a session of
theirs holding another agent's turns (`git oxide merge`) keeps its own records as they were."""


def _exported_as(session: Session, messages: list[Message], agent: str) -> Session:
    """``session`` as the other exporters are to write it: one of ``agent``'s own that holds
    another agent's merged turns is written as that agent's session (the way every agent's session
    goes to ``agent``: its harness context left out, its tool calls handed over or shown as text),
    never as ``agent``'s own records, which its model would be sent as they are."""
    if agent != session.agent or agent in MERGE_AWARE:
        return session
    other = next((m.made_by(agent) for m in messages if m.made_by(agent) != agent), None)
    return session if other is None else replace(session, agent=other)


def into(ctx: Context, ref: str, agent: str) -> IntoResult:
    """Write the session into ``agent``'s store; return the command that continues it there."""
    # Imported here: the writing side (store, importers) is not needed to print a context.
    from oxide_git.agents import agent as agent_module
    from oxide_git.agents import appends_export
    from oxide_git.imports.importing import agent_env
    from oxide_git.store import writes as store

    sid = ctx.index.resolve_session(ref)
    log = sessionlog.load_required(ctx.repo, sid, ref)
    messages = [m for _, m in sessionlog.iter_messages(ctx.repo, log.commit.tree)]
    session = log.session
    env = agent_env(ctx)
    if not env.belongs(session.cwd):
        # Continue where the code is: a session recorded elsewhere (another clone, a moved
        # folder) is resumed in this worktree, never in a folder outside the repository.
        session = replace(session, cwd=str(ctx.repo.workdir))
    exp = agent_module(agent).export(_exported_as(session, messages, agent), messages, env)
    res = IntoResult(agent, exp.native_id, list(exp.command), exp.cwd, lost=list(exp.lost))
    before = rewound(log)
    back = before is not None
    known = {m.native_id for m in messages if m.native_id} | _related_known(ctx, agent, exp.native_id)
    if back:  # what the rewind dropped is known too: only turns the agent added since count
        known |= {m.native_id for _, m in sessionlog.iter_messages(ctx.repo, before.tree) if m.native_id}

    def went_on(path: Path) -> bool:
        return _agent_went_on(agent, path, exp.native_id, known, env)

    appends = appends_export(agent)
    for path, data in exp.files.items():
        if back and path in exp.rewritten:  # the file holds the session as it was before the rewind
            _write(Path(path), exp.rewritten[path], append=False, res=res, went_on=went_on)
            continue
        _write(Path(path), data, append=appends, res=res, went_on=went_on)
    db_writer: Any = agent_module(agent)  # an agent whose export has databases defines it
    for path, rows in exp.databases.items():  # rows in the agent's own database (OpenCode 1.18)
        outcome = db_writer.write_database(Path(path), rows, rewound=back)
        (res.written if outcome == "written" else res.kept).append(str(path))
    if (exp.files or exp.databases) and (session.agent, session.native_id) != (agent, exp.native_id):
        _record_export(ctx, log, agent, exp, env)
    store.set_current_session(ctx, sid, why=f"it was resumed with `git oxide resume --into {agent}`")
    return res
