"""An importer's parser run as the importer runs it, for the agents' parser tests: the events of
``parse`` in order, the last restart point (``Resumable``, its state as the importer keeps it:
JSON) with how many messages came before it, sessions as last found, problems, unknown records."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from oxide_git.agents import FoundMessage, FoundSession, Problem, Resumable, Unknown
from oxide_git.core.model import Message, Part, Session


class Replay(NamedTuple):
    msgs: list[tuple[str, Message]]
    last: tuple[int, Any, int]  # (offset, state, messages before it)
    sessions: dict[str, Session]
    problems: list[Problem]
    unknown: list[Unknown]


def replay(events: Iterable[Any], offset: int = 0, state: Any = None,
           msgs: list[tuple[str, Message]] | None = None) -> Replay:
    """``msgs``: the messages of an earlier run to go on from (restarting at ``offset``)."""
    msgs = [] if msgs is None else msgs
    last = (offset, state, len(msgs))
    sessions: dict[str, Session] = {}
    problems: list[Problem] = []
    unknown: list[Unknown] = []
    for ev in events:
        if isinstance(ev, Resumable):
            kept = dict(ev.state) if isinstance(ev.state, Mapping) else ev.state
            last = (ev.offset, json.loads(json.dumps(kept)), len(msgs))  # the importer keeps JSON
        elif isinstance(ev, FoundMessage):
            assert state is not None or ev.session_id in sessions, "FoundSession comes before its messages"
            msgs.append((ev.session_id, ev.message))
        elif isinstance(ev, FoundSession):
            sessions[ev.session.id] = ev.session
        elif isinstance(ev, Unknown):
            unknown.append(ev)
        else:
            assert isinstance(ev, Problem), ev
            problems.append(ev)
    return Replay(msgs, last, sessions, problems, unknown)


def damage(data: bytes, at: int, mode: str, junk: bytes) -> bytes:
    """``data`` truncated at ``at``, or ``junk`` written over it or inserted there."""
    if mode == "truncate":
        return data[:at]
    if mode == "overwrite":
        return data[:at] + junk + data[at + len(junk):]
    assert mode == "insert", mode
    return data[:at] + junk + data[at:]


def poke(o: Any, key: str, value: Any) -> None:
    """Set every ``key`` of the JSON value ``o``, at any depth, to ``value`` (in place)."""
    if isinstance(o, dict):
        for k in list(o):
            if k == key:
                o[k] = value
            else:
                poke(o[k], key, value)
    elif isinstance(o, list):
        for x in o:
            poke(x, key, value)


def compacted_session() -> tuple[Session, list[Message]]:
    """Another agent's (Claude's) session with one compaction: an old turn (compacted), its
    summary, a new turn."""
    s = Session(id="01a2000000001234567890abcdef0124", agent="claude", native_id="c2", cwd="/w",
                created_at=1796162920303)
    return s, [Message("user", (Part.text("OLD prompt"),), created_at=1796162920400, compacted=True),
               Message("assistant", (Part.text("OLD answer"),), created_at=1796162920500, compacted=True),
               Message("system", (Part.compaction("SUMMARY of the old turn"),), created_at=1796162920600),
               Message("user", (Part.text("NEW prompt"),), created_at=1796162920700),
               Message("assistant", (Part.text("NEW answer"),), created_at=1796162920800)]
