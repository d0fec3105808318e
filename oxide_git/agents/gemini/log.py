"""Gemini CLI's session file replayed as the CLI replays it, into sessions and messages.

The ``.jsonl`` file is a patch log (``loadConversationRecord`` in Gemini CLI 0.61):

- a header ``{sessionId, projectHash, startTime, lastUpdated, kind}`` (again after a resume that
  wrote into the same file), merged into the metadata;
- a record with an ``id`` is upserted: the last write of an id wins and keeps its first place;
- ``{"$set": {...}}`` merges metadata; ``$set.messages`` replaces the whole history;
- ``{"$rewindTo": id}`` drops that message and every later one (an unknown id drops them all).

A message becomes a Message once a later record begins (the CLI only ever updates its last
message: tokens, tool calls), so each message is emitted once, whole; the file's last message is
its open tail (emitted after the last ``Resumable``, again when the file grows). Every line of the
file belongs to one message (``lines``: the record's own line is ``None``, rebuilt from the parts;
others are kept as they were, a ``$set.messages`` element equal to the message itself as
``{"$oxide": "self"}``), so ``gemini_export`` writes the file back line for line.

``$set.messages`` only adds messages found after every message already known (a resume rewrites
the history with copies of tool results inserted in the middle: those stay in the line, they are
no message of their own). A ``$rewindTo`` is a fork: the session so far keeps every message, and
what follows goes to a new session ``<id>/rewind-<n>`` whose history is the kept messages (copies)
and the new ones, hanging on the message before the rewind.

A compression (``$set.messages`` with a summary the CLI answers with its ``ACK``) makes the
summary a compaction message (``gemini_records.as_compaction``) and the answer harness: the
messages it replaced stay, compacted.

A file becomes a session only once it holds something the CLI would resume (a prompt or an
answer): the startup file a resume leaves behind, with only the CLI's session context, is none.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from oxide_git.agents import (
    AgentEnv,
    Event,
    FoundMessage,
    FoundSession,
    Problem,
    Resumable,
    Unknown,
    jsonline,
)
from oxide_git.agents.gemini.parts import same
from oxide_git.agents.gemini.records import KEY, TYPES, as_compaction, is_summary, message, result_groups
from oxide_git.agents.gemini.store import cwd_of, parent_link
from oxide_git.agents.logstate import State as _State
from oxide_git.core.model import Message, Session, from_iso, message_id_for, session_id_for

name = "gemini"
STATE_VERSION = 1
SELF = {"$oxide": "self"}


class _Pending:
    __slots__ = ("lines", "next", "rec", "start")

    def __init__(self, rec: dict[str, Any], start: int, lines: list[Any]) -> None:
        self.rec, self.start, self.lines = rec, start, lines
        self.next: dict[str, Any] | None = None  # the record that followed (its tool results)


def known_record(rec: Mapping[str, Any]) -> bool:
    kind = rec.get("type")
    return isinstance(kind, str) and kind in TYPES


def resumable_at(rec: Mapping[str, Any]) -> bool:
    """Would the CLI list a file for this record (``isResumableMessageRecord``)?"""
    from oxide_git.agents.gemini.records import is_harness_text

    kind, content = rec.get("type"), rec.get("content")
    if isinstance(content, list):
        if kind == "user" and any(isinstance(p, dict) and "text" not in p for p in content):
            return True  # tool results, files
        text = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    else:
        text = content if isinstance(content, str) else ""
    text = text.strip()
    if kind == "user":
        return bool(text) and not text.startswith(("/", "?")) and not is_harness_text(text)
    if kind == "gemini":
        return bool(text or rec.get("toolCalls") or rec.get("thoughts"))
    return False


class Parser:
    def __init__(self, path: Path, state: Mapping[str, Any] | None, env: AgentEnv | None,
                 stop: int | None = None) -> None:
        self.path, self.env, self.stop = path, env, stop
        st = dict(state or {})
        self.line: int = int(st.get("line", 0))
        self.header: dict[str, Any] | None = st.get("header")
        self.meta: dict[str, Any] = dict(st.get("meta") or {})
        self.prefix: list[Any] = list(st.get("prefix") or [])
        self.view: list[str] = list(st.get("view") or [])
        self.ids: list[list[Any]] = [list(x) for x in st.get("ids") or []]  # [native id, created_at]
        self.known_list: list[str] = list(st.get("known") or [])  # record ids of its messages
        self.known: set[str] = set(self.known_list)
        self.sess: dict[str, Any] | None = dict(st["sess"]) if st.get("sess") else None
        self.rewinds: int = int(st.get("rewinds", 0))
        self.last_ts: int | None = st.get("last_ts")
        self.real: bool = bool(st.get("real"))  # holds something the CLI would resume
        self.held: list[tuple[Message, int]] = []  # messages before it does (session context)
        self.pending: _Pending | None = None
        self.version: str | None = None
        self.ack: str | None = None  # the id of the CLI's answer to the summary just emitted

    # ---- restart points -------------------------------------------------------------------
    def state(self) -> _State:
        small = {"v": STATE_VERSION, "line": self.line, "header": self.header, "meta": dict(self.meta),
                 "prefix": list(self.prefix),
                 "sess": {**self.sess, "prefix": list(self.sess.get("prefix") or [])} if self.sess else None,
                 "rewinds": self.rewinds, "last_ts": self.last_ts, "real": self.real}
        return _State(small, {"view": (self.view, len(self.view)), "ids": (self.ids, len(self.ids)),
                              "known": (self.known_list, len(self.known_list))})

    # ---- the session ----------------------------------------------------------------------
    def _new_session(self, native: str, created: int | None, **more: Any) -> dict[str, Any]:
        return {"id": session_id_for(name, native, created), "native": native, "created": created,
                "model": None, **more}

    def session(self) -> Session:
        assert self.sess is not None
        s = self.sess
        extra: dict[str, Any] = {KEY: {"header": self.header, "file": self.path.name,
                                       "prefix": s.get("prefix", self.prefix)}}
        if s.get("rewind") is not None:  # the lines after it follow the kept (copied) messages
            extra[KEY].update(rewind=s["rewind"], prefix_at=s.get("copies", 0))
        kind = self.meta.get("kind")
        if kind not in (None, "main"):
            extra["gemini_kind"] = kind
        if s.get("parent_native"):
            extra["parent_native_id"] = s["parent_native"]
        if s.get("parent_call"):
            extra["parent_call_id"] = s["parent_call"]
        summary = self.meta.get("summary")
        last = self.meta.get("lastUpdated")
        updated = from_iso(last) if isinstance(last, str) else None
        return Session(
            id=s["id"], agent=name, native_id=s["native"],
            title=summary if isinstance(summary, str) else None,
            created_at=s["created"], updated_at=max(filter(None, (updated, self.last_ts)), default=None),
            parent_id=s.get("parent"), fork_message_id=s.get("fork_message"),
            cwd=cwd_of(self.path, self.meta.get("projectHash"), self.env), model=s.get("model"),
            extra=extra)

    def _ensure_session(self) -> Iterator[Event]:
        if self.sess is not None:
            return
        native = str(self.meta.get("sessionId") or self.path.stem)
        start = self.header.get("startTime") if self.header else None
        created = from_iso(start) if isinstance(start, str) else self.last_ts
        more: dict[str, Any] = {"prefix": list(self.prefix)}
        if self.meta.get("kind") == "subagent" and self.path.parent.name != "chats":
            parent = self.path.parent.name
            pid, call = parent_link(self.path.parent.parent, parent, native)
            more.update(parent_native=parent, parent=pid, parent_call=call)
        self.sess = self._new_session(native, created, **more)
        yield FoundSession(self.session())

    # ---- emitting messages ----------------------------------------------------------------
    def _emit(self, msg: Message) -> Iterator[Event]:
        if not self.real:
            self.held.append((msg, 0))
            return
        yield from self._ensure_session()
        for held, _ in self.held:
            yield from self._emit_one(held)
        self.held.clear()
        yield from self._emit_one(msg)

    def _emit_one(self, msg: Message) -> Iterator[Event]:
        assert self.sess is not None
        if msg.model:
            self.sess["model"] = msg.model
        self.ids.append([msg.native_id, msg.created_at])
        self.known.add(record_id(msg))
        self.known_list.append(record_id(msg))
        yield FoundMessage(self.sess["id"], msg)

    def flush(self) -> Iterator[Event]:
        p, self.pending = self.pending, None
        if p is None:
            return
        nxt = p.next
        results = result_groups(nxt.get("content")) if nxt and nxt.get("type") == "user" else {}
        msg = message(p.rec, results)
        if is_summary(p.rec, nxt):
            msg, self.ack = as_compaction(msg), str((nxt or {}).get("id"))
        elif self.ack is not None and msg.native_id == self.ack:
            msg, self.ack = replace(msg, extra={**msg.extra, "harness": True}), None
        lines = [_self_refs(x, p.rec) for x in p.lines]
        native = msg.native_id
        if msg.is_harness() and not _is_uuid(native):
            # The CLI's <session_context> has the same id in every session: qualified with the
            # session's, it names one message (a shared first id would make them all copies).
            native = f"{str(self.meta.get('sessionId') or '').split('/')[0]}:{native}"
        msg = Message(role=msg.role, parts=msg.parts, created_at=msg.created_at, native_id=native,
                      model=msg.model, usage=msg.usage, extra={**msg.extra, KEY: {
                          **msg.extra[KEY], "lines": lines}})
        if msg.created_at is not None:
            self.last_ts = max(self.last_ts or 0, msg.created_at)
        yield from self._emit(msg)

    def _restart_point(self, start: int) -> Iterator[Event]:
        if self.real and not self.held:
            yield Resumable(start, self.state())

    def _add_line(self, obj: Any) -> None:
        if self.pending is not None:
            self.pending.lines.append(obj)
        elif self.sess is not None:
            self.sess.setdefault("prefix", []).append(obj)
        else:
            self.prefix.append(obj)

    def _begin(self, rec: dict[str, Any], start: int, lines: list[Any],
               restart: bool = True) -> Iterator[Event]:
        if self.pending is not None:
            self.pending.next = rec
        yield from self.flush()
        if known_record(rec) and resumable_at(rec) and not self.real:
            self.real = True
            yield from self._emit_held_now()
        if restart:
            yield from self._restart_point(start)
        self.pending = _Pending(rec, start, lines)

    def _emit_held_now(self) -> Iterator[Event]:
        yield from self._ensure_session()
        held, self.held = self.held, []
        for msg, _ in held:
            yield from self._emit_one(msg)

    # ---- the records ----------------------------------------------------------------------
    def record(self, obj: dict[str, Any], start: int) -> Iterator[Event]:
        nid = obj["id"]
        if self.pending is not None and self.pending.rec.get("id") == nid:
            p = self.pending
            own = [i for i, x in enumerate(p.lines) if x is None]
            if own:  # the version it replaces stays as written (from $set.messages: in that line)
                p.lines[own[-1]] = p.rec
            p.lines.append(None)
            p.rec = obj
            return
        if nid in self.known:  # an update of a message already emitted: kept as a line only
            if nid not in self.view:
                self.view.append(nid)
            self._add_line(obj)
            return
        if not known_record(obj):
            yield Unknown(f"message/{obj.get('type')}", self.version)
        if nid not in self.view:
            self.view.append(nid)
        yield from self._begin(obj, start, [None])

    def set(self, obj: dict[str, Any], start: int) -> Iterator[Event]:
        patch = obj["$set"]
        msgs = patch.get("messages")
        self.meta.update((k, v) for k, v in patch.items() if k != "messages")
        if not isinstance(msgs, list):
            self._add_line(obj)
            return
        recs = [m for m in msgs if isinstance(m, dict) and isinstance(m.get("id"), str)]
        mine = set(self.known)
        if self.pending is not None:
            mine.add(str(self.pending.rec.get("id")))
        last = max((i for i, m in enumerate(recs) if m["id"] in mine), default=-1)
        new = [m for m in recs[last + 1:] if m["id"] not in mine]
        self.view = [m["id"] for m in recs]
        if not new:
            self._add_line(obj)
            return
        # The first new message owns the line; the others are final at once, the last is pending.
        for i, rec in enumerate(new):  # one restart point: before the line
            yield from self._begin(rec, start, [obj] if i == 0 else [], restart=i == 0)

    def rewind(self, obj: dict[str, Any], start: int) -> Iterator[Event]:
        target = obj["$rewindTo"]
        yield from self.flush()
        yield from self._restart_point(start)
        kept = self.view[:self.view.index(target)] if target in self.view else []
        self.view = list(kept)
        if not self.real or self.sess is None:
            self._add_line(obj)
            return
        parent = self.sess
        keep = set(kept)
        copies = [m for m in _messages_of(self.path, self.env, parent["id"], start) if record_id(m) in keep]
        self.rewinds += 1
        base = str(self.meta.get("sessionId") or parent["native"]).split("/")[0]
        fork_at = None
        for seq, (nid, created) in enumerate(self.ids):
            if copies and nid == copies[-1].native_id:
                fork_at = message_id_for(parent["id"], seq, created)
        self.sess = self._new_session(f"{base}/rewind-{self.rewinds}", self.last_ts, parent=parent["id"],
                                      fork_message=fork_at, rewind=obj, prefix=[], copies=len(copies))
        self.ids, self.known, self.known_list = [], set(), []
        yield FoundSession(self.session())
        for m in copies:
            yield from self._emit_one(m)

    def header_line(self, obj: dict[str, Any]) -> None:
        self.meta.update(obj)
        if self.header is None:
            self.header = obj
        else:
            self._add_line(obj)

    # ---- the file -------------------------------------------------------------------------
    def run(self, offset: int) -> Iterator[Event]:
        lines = jsonline.Lines(self.path, offset, self.line, self.stop)
        for start, obj in lines:
            self.line = lines.line
            if isinstance(obj, Problem):
                yield obj
                continue
            if isinstance(obj.get("$rewindTo"), str):
                yield from self.rewind(obj, start)
            elif isinstance(obj.get("id"), str):
                yield from self.record(obj, start)
            elif isinstance(obj.get("$set"), dict):
                yield from self.set(obj, start)
            elif isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str):
                self.header_line(obj)
            else:
                yield Unknown("line/" + ",".join(sorted(obj))[:60], self.version)
                self._add_line(obj)
        self.line, pos = lines.line, lines.pos
        tail = self.pending is not None or bool(self.held)
        yield from self.flush()
        if self.sess is not None:
            yield FoundSession(self.session())
        if not tail and self.real:
            yield Resumable(pos, self.state())


def _is_uuid(text: str | None) -> bool:
    try:
        return str(uuid.UUID(str(text))) == text
    except ValueError:
        return False


def record_id(msg: Message) -> str:
    """The id of the record ``msg`` came from (its native id, unless that had to be qualified)."""
    g = msg.extra.get(KEY) or {}
    return str((g.get("raw") or g.get("rest") or {}).get("id", msg.native_id))


def _self_refs(line: Any, rec: Mapping[str, Any]) -> Any:
    """A ``$set.messages`` line with the elements equal to ``rec`` (its own message) as SELF."""
    if not isinstance(line, dict) or not isinstance(line.get("$set"), dict):
        return line
    msgs = line["$set"].get("messages")
    if not isinstance(msgs, list) or not any(same(m, rec) for m in msgs):
        return line
    return {**line, "$set": {**line["$set"], "messages": [SELF if same(m, rec) else m for m in msgs]}}


def _messages_of(path: Path, env: AgentEnv | None, sid: str, stop: int) -> list[Message]:
    """The messages of session ``sid`` in ``path`` up to byte ``stop``, parsed again from the start
    (a rewind forks the history it keeps; restarting after it, that history is not in memory)."""
    return [ev.message for ev in Parser(path, None, env, stop=stop).run(0)
            if isinstance(ev, FoundMessage) and ev.session_id == sid]


def starting_session(path: Path, env: AgentEnv | None = None) -> Session | None:
    """The session a file the CLI has just begun will be (its header says which), before it holds
    anything to import: an agent hook's first prompt is checkpointed on it."""
    try:
        with path.open("rb") as f:
            head = jsonline.loads(f.readline())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(head, dict) or not isinstance(head.get("sessionId"), str) or (
            head.get("kind") == "subagent"):
        return None
    parser = Parser(path, None, env)
    parser.header_line(head)
    list(parser._ensure_session())
    return parser.session()
