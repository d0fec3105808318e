"""A Qwen Code session file replayed as the CLI replays it, into sessions and messages.

``<QWEN_HOME or ~/.qwen>/projects/<cwd, each non-alphanumeric as ->/chats/<session id>.jsonl``:
one record a line, each with a ``uuid`` and the ``parentUuid`` of the record before it. The CLI
rebuilds the conversation from the last conversation record up the ``parentUuid`` chain; records
with the same ``uuid`` are fragments of one (their parts joined). ``user``, ``assistant`` and
``tool_result`` records are messages; ``system`` records (``ui_telemetry``,
``attribution_snapshot``, ``session_model``, ``custom_title``, ``rewind``, …) belong to the
message before them: each message keeps its lines (its own is rebuilt from the parts, the others
are kept as written) so ``qwen_export`` writes the file back line for line.

A ``chat_compression`` system record (``/compress``, or the automatic compression) is a message of
its own, a compaction (``qwen_records.compaction``): the CLI resumes from its
``compressedHistory``, so what came before it is compacted (kept, marked so when read).

A record whose ``parentUuid`` is not the record before it (a ``/rewind`` re-roots the chain
there) starts a fork: the session so far keeps every message, and what follows goes to a new
session ``<id>/branch-<n>`` whose history is the messages up to that parent (copies) and the new
ones, hanging on the last of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
from oxide_git.agents.logstate import State
from oxide_git.agents.qwen.records import KEY, MESSAGE_TYPES, compressed_history, message
from oxide_git.core.model import Message, Session, from_iso, message_id_for, session_id_for

name = "qwen"
STATE_VERSION = 1
# System record subtypes of Qwen Code 0.24.4 (its KNOWN_RECORD_SUBTYPES); any other is reported.
SUBTYPES = frozenset({
    "chat_compression", "slash_command", "ui_telemetry", "at_command", "attribution_snapshot",
    "notification", "background_task_completed", "cron", "mid_turn_user_message", "realtime_message",
    "custom_title", "parent_session", "rewind", "agent_bootstrap", "agent_launch_prompt", "agent_retry",
    "agent_session_ready", "file_history_snapshot", "session_source", "session_model", "omni_recall",
    "session_sources_snapshot", "branch_checkpoint", "goal_state", "goal_runtime", "goal_turn_end",
    "turn_result", "session_artifact_event", "session_artifact_snapshot", "managed_session_header_v1",
    "managed_session_event_v1", "managed_session_commit_v1",
})


class _Pending:
    __slots__ = ("lines", "recs")

    def __init__(self, rec: dict[str, Any]) -> None:
        self.recs = [rec]  # fragments of one record (the same uuid)
        self.lines: list[Any] = [None]


class Parser:
    def __init__(self, path: Path, state: Mapping[str, Any] | None, env: AgentEnv | None,
                 stop: int | None = None) -> None:
        self.path, self.env, self.stop = path, env, stop
        st = dict(state or {})
        self.line: int = int(st.get("line", 0))
        self.head: dict[str, Any] | None = st.get("head")  # sessionId, cwd, version of record 1
        self.last: str | None = st.get("last")  # the uuid of the record before
        self.sess: dict[str, Any] | None = dict(st["sess"]) if st.get("sess") else None
        self.branches: int = int(st.get("branches", 0))
        self.ids: list[list[Any]] = [list(x) for x in st.get("ids") or []]  # [uuid, created_at]
        self.owners: list[list[Any]] = [list(x) for x in st.get("owners") or []]  # [record uuid, msg]
        self.owner: dict[str, int] = {u: i for u, i in self.owners}
        self.last_ts: int | None = st.get("last_ts")
        self.pending: _Pending | None = None

    def state(self) -> State:
        sess = {**self.sess, "prefix": list(self.sess.get("prefix") or [])} if self.sess else None
        small = {"v": STATE_VERSION, "line": self.line, "head": self.head, "last": self.last, "sess": sess,
                 "branches": self.branches, "last_ts": self.last_ts}
        return State(small, {"ids": (self.ids, len(self.ids)), "owners": (self.owners, len(self.owners))})

    # ---- sessions -------------------------------------------------------------------------
    def _new(self, native: str, created: int | None, **more: Any) -> dict[str, Any]:
        return {"id": session_id_for(name, native, created), "native": native, "created": created,
                "title": None, "model": None, "prefix": [], **more}

    def session(self) -> Session:
        assert self.sess is not None
        s, head = self.sess, self.head or {}
        extra: dict[str, Any] = {KEY: {"file": self.path.name, "prefix": s.get("prefix") or [],
                                       "prefix_at": s.get("copies", 0)}}
        if s.get("parent_native"):
            extra["parent_native_id"] = s["parent_native"]
        if s.get("parent_call"):
            extra["parent_call_id"] = s["parent_call"]
        if s.get("agent"):
            extra["agent_id"] = s["agent"]
        return Session(
            id=s["id"], agent=name, native_id=s["native"], title=s.get("title"), created_at=s["created"],
            updated_at=self.last_ts, parent_id=s.get("parent"), fork_message_id=s.get("fork_message"),
            cwd=head.get("cwd") if isinstance(head.get("cwd"), str) else None,
            branch=head.get("gitBranch") if isinstance(head.get("gitBranch"), str) else None,
            model=s.get("model"), extra=extra)

    def _ensure(self, obj: Mapping[str, Any]) -> Iterator[Event]:
        if self.sess is not None:
            return
        self.head = {k: obj.get(k) for k in ("sessionId", "cwd", "version", "gitBranch")}
        native = str(obj.get("sessionId") or self.path.stem)
        ts = obj.get("timestamp")
        more: dict[str, Any] = {}
        if obj.get("isSidechain") is True and isinstance(obj.get("agentId"), str):
            # a sub-agent's file (subagents/<parent id>/agent-<agent id>.jsonl) names its parent's
            # session: its own is the parent's and the agent's, hanging on the parent's call
            more.update(parent=_parent_of(self.path, native), parent_native=native,
                        parent_call=_call_of(self.path), agent=obj["agentId"])
            native = f"{native}/agent-{obj['agentId']}"
        self.sess = self._new(native, from_iso(ts) if isinstance(ts, str) else None, **more)
        yield FoundSession(self.session())

    def _emit(self, msg: Message, lines: list[Any]) -> Iterator[Event]:
        assert self.sess is not None
        if msg.model:
            self.sess["model"] = msg.model
        i = len(self.ids)
        self.ids.append([msg.native_id, msg.created_at])
        for x in lines:  # every record uuid this message's lines hold
            uid = msg.native_id if x is None else x.get("uuid") if isinstance(x, dict) else None
            if isinstance(uid, str) and uid not in self.owner:
                self.owner[uid] = i
                self.owners.append([uid, i])
        yield FoundMessage(self.sess["id"], msg)

    def flush(self) -> Iterator[Event]:
        p, self.pending = self.pending, None
        if p is None:
            return
        if len(p.recs) == 1:
            msg = message(p.recs[0])
            lines = p.lines
        else:  # fragments: the parts joined, every line kept as written
            first = p.recs[0]
            body = first["message"] if isinstance(first.get("message"), dict) else {}
            parts = [x for r in p.recs if isinstance(r.get("message"), dict)
                     for x in (r["message"].get("parts") or [])]
            msg = message({**first, "message": {"role": body.get("role"), "parts": parts}})
            lines = _fill(p)
        extra = {**msg.extra, KEY: {**msg.extra[KEY], "lines": lines}}
        msg = Message(role=msg.role, parts=msg.parts, created_at=msg.created_at, native_id=msg.native_id,
                      model=msg.model, usage=msg.usage, extra=extra)
        if msg.created_at is not None:
            self.last_ts = max(self.last_ts or 0, msg.created_at)
        yield from self._emit(msg, lines)

    def _add(self, obj: Any) -> None:
        if self.pending is not None:
            self.pending.lines.append(obj)
        elif self.sess is not None:
            self.sess.setdefault("prefix", []).append(obj)

    # ---- records --------------------------------------------------------------------------
    def fork(self, obj: dict[str, Any], start: int) -> Iterator[Event]:
        """``obj`` hangs on an earlier record: what follows is a branch (a fork)."""
        yield from self.flush()
        yield Resumable(start, self.state())
        assert self.sess is not None
        parent, at = self.sess, self.owner[str(obj.get("parentUuid"))]
        copies = _messages_of(self.path, self.env, parent["id"], start)[:at + 1]
        fork_at = message_id_for(parent["id"], at, self.ids[at][1]) if 0 <= at < len(self.ids) else None
        self.branches += 1
        base = str(parent["native"]).split("/")[0]
        self.sess = self._new(f"{base}/branch-{self.branches}", self.last_ts, parent=parent["id"],
                              fork_message=fork_at, copies=len(copies), title=parent.get("title"))
        self.ids, self.owners, self.owner = [], [], {}
        yield FoundSession(self.session())
        for m in copies:
            yield from self._emit(m, list((m.extra.get(KEY) or {}).get("lines") or [None]))

    def record(self, obj: dict[str, Any], start: int) -> Iterator[Event]:
        uid, parent, kind = (v if isinstance(v, str) else None for v in (
            obj.get("uuid"), obj.get("parentUuid"), obj.get("type")))
        sub = obj.get("subtype") if isinstance(obj.get("subtype"), str) else None
        if self.pending is not None and uid == self.pending.recs[0].get("uuid") and kind in MESSAGE_TYPES:
            self.pending.recs.append(obj)  # a fragment of the pending record
            self.pending.lines.append(None)
            return
        yield from self._ensure(obj)
        if (isinstance(parent, str) and self.last is not None and parent != self.last
                and (parent in self.owner or (self.pending is not None and parent in _uuids(self.pending)))):
            if self.pending is not None:
                yield from self.flush()
            yield from self.fork(obj, start)
        if kind in MESSAGE_TYPES or compressed_history(obj) is not None:
            yield from self.flush()
            yield Resumable(start, self.state())
            self.pending = _Pending(obj)
            return
        if kind != "system" or sub not in SUBTYPES:
            v = obj.get("version")
            yield Unknown(f"{kind}/{sub}" if kind == "system" else str(kind),
                          f"qwen-code {v}" if isinstance(v, str) else None)
        assert self.sess is not None
        payload = obj.get("systemPayload")
        if sub == "custom_title" and isinstance(payload, dict) and isinstance(
                payload.get("customTitle"), str):
            self.sess["title"] = payload["customTitle"]
        if sub == "parent_session" and isinstance(payload, dict) and isinstance(
                payload.get("parentSessionId"), str):
            self.sess["parent_native"] = payload["parentSessionId"]
        self._add(obj)

    def run(self, offset: int) -> Iterator[Event]:
        lines = jsonline.Lines(self.path, offset, self.line, self.stop)
        for start, obj in lines:
            self.line = lines.line
            if isinstance(obj, Problem):
                yield obj
                continue
            yield from self.record(obj, start)
            if isinstance(obj.get("uuid"), str):
                self.last = obj["uuid"]
        self.line, pos = lines.line, lines.pos
        tail = self.pending is not None
        yield from self.flush()
        if self.sess is not None:
            yield FoundSession(self.session())
            if not tail:
                yield Resumable(pos, self.state())


def _fill(p: _Pending) -> list[Any]:
    """The record each line of a pending message stands for (its fragments, in order)."""
    recs = iter(p.recs)
    return [next(recs) if x is None else x for x in p.lines]


def _uuids(p: _Pending) -> set[str]:
    return {str(x.get("uuid")) for x in [*p.recs, *p.lines] if isinstance(x, dict)}


def _messages_of(path: Path, env: AgentEnv | None, sid: str, stop: int) -> list[Message]:
    """The messages of session ``sid`` in ``path`` up to byte ``stop``, parsed again from the start
    (a branch forks the history before it; restarting after it, that is not in memory)."""
    return [ev.message for ev in Parser(path, None, env, stop=stop).run(0)
            if isinstance(ev, FoundMessage) and ev.session_id == sid]


def _parent_of(path: Path, parent: str) -> str | None:
    """The oxide id of a sub-agent's parent session, from the parent's own file's first record."""
    own = path.parent.parent.parent / "chats" / f"{parent}.jsonl"
    try:
        with own.open("rb") as f:
            first = jsonline.loads(f.readline())
    except (OSError, ValueError, RecursionError):
        return None
    ts = first.get("timestamp") if isinstance(first, dict) else None
    return session_id_for(name, parent, from_iso(ts) if isinstance(ts, str) else None)


def _call_of(path: Path) -> str | None:
    """The parent's ``agent`` call that ran a sub-agent (``toolUseId`` of its ``.meta.json``)."""
    try:
        meta = jsonline.loads(path.with_name(path.name[:-len(".jsonl")] + ".meta.json").read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    call = meta.get("toolUseId") if isinstance(meta, dict) else None
    return call if isinstance(call, str) else None
