"""The Copilot CLI ``events.jsonl`` reader behind ``copilot.parse``: see copilot.py for the grouping."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from oxide_git.agents import Event, FoundMessage, FoundSession, Problem, Resumable, Unknown, jsonline
from oxide_git.agents.copilot.lines import COMPLETE, START, parts_of, with_summary
from oxide_git.agents.copilot.store import sub_agent_id
from oxide_git.core.model import Message, Part, Session, from_iso, message_id_for, session_id_for

name = "copilot"
STATE_VERSION = 1

# The event types Copilot CLI 1.0.102 persists (its session-events.schema.json, every event not
# marked always-ephemeral); any other type in a file is kept whole and reported as format drift.
KNOWN = frozenset((
    "abort", "assistant.fusion_phase_completed", "assistant.fusion_phase_failed",
    "assistant.message", "assistant.reasoning", "assistant.turn_end", "assistant.turn_start",
    "external_tool.completed", "external_tool.requested", "hook.end", "hook.start",
    "human_response.recorded", "mcp.oauth_recovery_completed", "permission.assentDetected",
    "permission.carriedForward", "permission.completed", "permission.contextualAuthorization",
    "permission.messageAuthorization", "permission.messageAuthorizationDegraded",
    "permission.messageAuthorizationRead", "permission.requested", "session.auto_mode_resolved",
    "session.autopilot_objective_changed", "session.binary_asset", "session.canvas.recorded",
    "session.canvas.removed", "session.compaction_complete", "session.compaction_start",
    "session.completion_receipt", "session.context_changed", "session.context_cleared",
    "session.error", "session.fusion_change_checkpoint", "session.fusion_commit_started",
    "session.fusion_completed", "session.fusion_handoff", "session.fusion_resolved",
    "session.fusion_route_failed", "session.handoff", "session.info", "session.mode_changed",
    "session.mode_notice_delivered", "session.model_change", "session.model_deselected",
    "session.permission_recovery", "session.permissions_changed", "session.plan_changed",
    "session.remote_steerable_changed", "session.request_body_compression_disabled",
    "session.resume", "session.schedule_cancelled", "session.schedule_created",
    "session.schedule_rearmed", "session.session_limits_changed", "session.shutdown",
    "session.start", "session.task_complete", "session.truncation", "session.usage_checkpoint",
    "session.usage_record", "session.warning", "session.workspace_file_changed",
    "skill.context_delivered", "skill.context_delivered_ref", "skill.invoked", "skill.invoked_ref",
    "subagent.completed", "subagent.configured", "subagent.deselected", "subagent.failed",
    "subagent.selected", "subagent.started", "system.message", "system.notification",
    "tool.execution_complete", "tool.execution_start", "tool.user_requested",
    "tool_search.activated", "user.message",
))
_OPENS = {"user.message": "user", "system.message": "system", "assistant.turn_start": "assistant",
          "session.start": "system", "session.resume": "system"}
_JOINS = {"assistant.message": "assistant", "assistant.reasoning": "assistant",
          "tool.execution_start": "tool", "tool.execution_complete": "tool"}
_SUB_ENDS = ("subagent.completed", "subagent.failed")
# what a FoundSession shows, its updated time last
_SHOWN = ("sid", "native", "created", "title", "cwd", "branch", "model", "parent", "fork", "extra",
          "updated")


class _Open:
    __slots__ = ("cost", "created", "extra", "model", "native", "parts", "role", "usage")

    def __init__(self, role: str, obj: Mapping[str, Any], ts: int | None) -> None:
        self.role = role
        self.native = obj.get("id") if isinstance(obj.get("id"), str) else None
        self.created = ts
        self.parts: list[Part] = []
        self.model: str | None = None
        self.usage: dict[str, Any] | None = None
        self.cost: float | None = None
        self.extra: dict[str, Any] = {"harness": True} if role == "system" and obj.get("type") == \
            "system.message" else {}

    def message(self) -> Message:
        return Message(role=self.role, parts=tuple(self.parts), created_at=self.created,
                       native_id=self.native, model=self.model, usage=self.usage, cost=self.cost,
                       extra=self.extra)


def user_name(path: Path) -> str | None:
    """The name the user gave the session (``copilot --name``, ``/rename``): ``workspace.yaml``'s
    ``name`` when ``user_named: true`` (Copilot writes it nowhere in ``events.jsonl``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return None
    fields = dict(ln.split(": ", 1) for ln in text.splitlines() if ": " in ln and not ln.startswith(" "))
    if fields.get("user_named", "").strip() != "true":
        return None
    raw = fields.get("name", "").strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        raw = raw[1:-1].replace("''", "'")
    elif len(raw) >= 2 and raw[0] == raw[-1] == '"':
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return raw or None


def _messages_at(path: Path, end: int, sid: str) -> list[Message]:
    """The messages session ``sid`` has in the first ``end`` bytes of the file (read again)."""
    return [ev.message for ev in Parser(path, None).run(0, end)
            if isinstance(ev, FoundMessage) and ev.session_id == sid]


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _ts(obj: Mapping[str, Any]) -> int | None:
    t = obj.get("timestamp")
    return from_iso(t) if isinstance(t, str) else None


class Parser:
    def __init__(self, path: Path, state: Mapping[str, Any] | None) -> None:
        self.path = path
        st = dict(state or {})
        self.line = int(st.get("line", 0))
        # stream ("main" or a sub-agent's agentId) -> what its session shows
        self.streams: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (st.get("streams") or {}).items()}
        self.version: str | None = st.get("version")
        self.open: dict[str, _Open] = {}
        self.out: list[Event | None] = []
        # a compaction of the main agent under way: its start's message (the boundary Copilot
        # cuts its history at), its attempt id, and every event after it, held back until its
        # summary arrives (no restart point inside: the next parse reads it again from its start)
        self.boundary: _Open | None = None
        self.attempt: Any = None
        self.held: list[Event | None] | None = None

    def state(self) -> dict[str, Any]:
        return {"v": STATE_VERSION, "line": self.line, "version": self.version,
                "streams": {k: dict(v) for k, v in self.streams.items()}}

    # -- sessions -------------------------------------------------------------------------------
    def _main(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        acc = self.streams.get("main")
        if acc is not None:
            return acc
        data = _dict(obj.get("data"))
        start = obj.get("type") == "session.start"
        native = data.get("sessionId") if start else None
        native = native if isinstance(native, str) and native else self.path.parent.name
        created = (from_iso(data.get("startTime")) if start else None) or _ts(obj)
        ctx = _dict(data.get("context")) if start else {}
        extra = {k: data[k] for k in ("copilotVersion", "producer") if isinstance(data.get(k), str)}
        extra.update({k: ctx[k] for k in ("gitRoot", "headCommit") if isinstance(ctx.get(k), str)})
        if isinstance(data.get("copilotVersion"), str):
            self.version = data["copilotVersion"]
        acc = {"sid": session_id_for(name, native, created), "native": native, "created": created,
               "updated": created, "title": user_name(self.path.parent / "workspace.yaml"),
               "cwd": ctx.get("cwd") if isinstance(ctx.get("cwd"), str) else None,
               "branch": ctx.get("branch") if isinstance(ctx.get("branch"), str) else None,
               "model": data.get("selectedModel") if isinstance(data.get("selectedModel"), str) else None,
               "parent": None, "extra": extra}
        self.streams["main"] = acc
        return acc

    def _sub(self, agent_id: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        acc = self.streams.get(agent_id)
        if acc is not None:
            return acc
        main = self.streams["main"]
        data = _dict(obj.get("data"))
        native = sub_agent_id(main["native"], agent_id)
        created = _ts(obj)
        extra: dict[str, Any] = {"agent_id": agent_id, "parent_native_id": main["native"]}
        if obj.get("type") == "subagent.started":
            for k, key in (("toolCallId", "parent_call_id"), ("agentName", "agent_name"),
                           ("agentDisplayName", "agent_display_name")):
                if isinstance(data.get(k), str):
                    extra[key] = data[k]
        acc = {"sid": session_id_for(name, native, created), "native": native, "created": created,
               "updated": created, "title": None, "cwd": main["cwd"], "branch": main["branch"],
               "model": data.get("model") if isinstance(data.get("model"), str) else None,
               "parent": main["sid"], "extra": extra}
        self.streams[agent_id] = acc
        return acc

    def _found(self, acc: dict[str, Any], final: bool = False) -> None:
        acc.setdefault("fork", None)
        """The session anew when what it shows changed since it was last emitted (its updated
        time counts only ``final``, at the end of the file). Runs for every message: the common
        "unchanged" answer compares two lists."""
        shown = [acc[k] for k in _SHOWN]
        old = acc.get("emitted")
        if old is not None and old[:-1] == shown[:-1] and (not final or old[-1] == shown[-1]):
            return
        if old is not None and not final:
            shown[-1] = old[-1]
        acc["emitted"] = shown
        sid, native, created, title, cwd, branch, model, parent, fork, extra, updated = shown
        self.out.append(FoundSession(Session(
            id=sid, agent=name, native_id=native, title=title, created_at=created, updated_at=updated,
            parent_id=parent, fork_message_id=fork, cwd=cwd, branch=branch, model=model,
            extra=dict(extra))))

    # -- messages -------------------------------------------------------------------------------
    def _close(self, stream: str) -> None:
        c = self.open.pop(stream, None)
        if c is None:
            return
        acc = self.streams[stream]
        self._found(acc)
        acc["count"] = int(acc.get("count", 0)) + 1
        acc["last_created"] = c.created
        if c is self.boundary:
            self.out.append(None)  # the placeholder of the boundary's message (see _release)
            return
        self.out.append(FoundMessage(acc["sid"], c.message()))

    def _rewind(self, obj: Mapping[str, Any], start: int) -> None:
        """Copilot's ``/rewind`` rewrote the file: the events it kept, then this ``session.info``
        (``infoType: "rewind"``), then what came after. What came after is a fork,
        ``<id>/rewind-<the info's id>``: its history the kept messages (copies) and the new ones,
        hanging on the last kept message; the session it left keeps every message the store has
        of it, the ones the rewind dropped too."""
        self._close("main")
        parent = self.streams["main"]
        copies = _messages_at(self.path, start, parent["sid"])
        n = int(parent.get("count", 0))
        fork_at = message_id_for(parent["sid"], n - 1, parent.get("last_created")) if n else None
        tag = str(obj.get("id") or self.line)[:8]
        native = f"{str(parent['native']).split('/rewind-')[0]}/rewind-{tag}"
        created = _ts(obj)
        acc = {"sid": session_id_for(name, native, created), "native": native, "created": created,
               "updated": created, "title": parent["title"], "cwd": parent["cwd"],
               "branch": parent["branch"], "model": parent["model"], "parent": parent["sid"],
               "fork": fork_at, "extra": {**parent["extra"], "rewind_of": parent["native"]},
               "count": len(copies), "last_created": copies[-1].created_at if copies else None}
        self.streams[f"rewound-{self.line}"] = parent
        self.streams["main"] = acc
        self._found(acc)
        self.out += [FoundMessage(acc["sid"], m) for m in copies]

    def _release(self, summary: str | None, complete: Mapping[str, Any] | None) -> None:
        """The held events, the boundary's message first (with the summary, when there is one)."""
        c, held = self.boundary, self.held or []
        assert c is not None
        if summary is not None and complete is not None:
            extra = {k: complete[k] for k in ("messagesRemoved", "tokensRemoved", "checkpointNumber")
                     if isinstance(complete.get(k), int) and not isinstance(complete.get(k), bool)}
            with_summary(c.parts, summary, **extra)
        if self.open.get("main") is c:  # still open: the complete line came right after it
            self._close("main")
            held += self.out
            self.out = []
        sid = self.streams["main"]["sid"]
        self.boundary = self.attempt = self.held = None
        self.out[:0] = [FoundMessage(sid, c.message()) if ev is None else ev for ev in held]

    def feed(self, obj: dict[str, Any], raw: bytes, start: int) -> None:
        t = obj.get("type")
        t = t if isinstance(t, str) else "unknown"
        agent_id = obj.get("agentId")
        self._main(obj)
        stream = agent_id if isinstance(agent_id, str) and agent_id else "main"
        acc = self._sub(stream, obj) if stream != "main" else self.streams["main"]
        cur = self.open.get(stream)
        data = _dict(obj.get("data"))
        ts = _ts(obj)
        role = _OPENS.get(t)
        compacting = self.boundary is not None and stream == "main" and t == COMPLETE and (
            data.get("compactionAttemptId") == self.attempt)
        if t == COMPLETE and not compacting and isinstance(data.get("summaryContent"), str) \
                and data["summaryContent"]:
            role = "system"  # a summary without its start seen: a compaction message of its own
        elif t == START and stream == "main" and self.boundary is None:
            role = "system"
        elif t == "session.usage_record" and cur is not None and cur is self.boundary:
            role = "assistant"  # the turn the compaction started in goes on
        rewound = t == "session.info" and stream == "main" and data.get("infoType") == "rewind" \
            and self.held is None and not any(k != "main" for k in self.open)
        if rewound:
            role = "system"
            self._close(stream)
            self.out.append(Resumable(start, self.state()))  # before the fork: it is made again
            self._rewind(obj, start)
            acc = self.streams["main"]
        if role is None:
            want = _JOINS.get(t)
            if cur is None:
                role = want or "system"
            elif want is not None and cur.role != want:
                role = want
        if role is not None:
            self._close(stream)
            if not self.open and self.held is None and not rewound:
                self.out.append(Resumable(start, self.state()))
            cur = self.open[stream] = _Open(role, obj, ts)
            if t == START:
                self.boundary, self.attempt, self.held = cur, data.get("compactionAttemptId"), []
            if role == "user" and (data.get("isAutopilotContinuation") is True
                                   or str(data.get("source") or "").startswith("system")):
                cur.extra["harness"] = True  # the harness's own turn, not the user's
        assert cur is not None
        cur.parts.extend(parts_of(obj, raw, summary=not compacting))
        self._note(acc, cur, t, data, ts)
        if t not in KNOWN:
            self.out.append(Unknown(t, f"copilot {self.version}" if self.version else None))
        if compacting:
            text = data.get("summaryContent")
            ok = data.get("success") is True and isinstance(text, str) and bool(text)
            self._release(text if ok else None, data)
        if stream != "main" and t in _SUB_ENDS:
            self._close(stream)

    def _note(self, acc: dict[str, Any], cur: _Open, t: str, data: Mapping[str, Any],
              ts: int | None) -> None:
        if ts is not None and (acc["updated"] is None or ts > acc["updated"]):
            acc["updated"] = ts
        model = data.get("model") if t in ("assistant.message", "session.usage_record") else None
        if t == "session.usage_record" and isinstance(data.get("usage"), dict):
            u = data["usage"]
            model = u.get("model")
            cur.usage = {k: u[k] for k in ("inputTokens", "outputTokens", "cacheReadTokens",
                                           "cacheWriteTokens") if isinstance(u.get(k), int)}
            if isinstance(u.get("cost"), (int, float)) and not isinstance(u.get("cost"), bool):
                cur.cost = float(u["cost"])
        elif t == "session.model_change" and isinstance(data.get("newModel"), str):
            acc["model"] = data["newModel"]
        if isinstance(model, str) and model:
            acc["model"] = model
            if cur.role == "assistant":
                cur.model = model

    def run(self, offset: int, end: int | None = None) -> Iterator[Event]:
        pos = offset
        if "main" in self.streams:  # the user may have renamed it since
            self.streams["main"]["title"] = user_name(self.path.parent / "workspace.yaml")
        with self.path.open("rb", buffering=1 << 20) as f:
            f.seek(offset)
            for raw in f:
                if not raw.endswith(b"\n") or (end is not None and pos >= end):
                    break  # a line still being written: read it next time
                start, pos = pos, pos + len(raw)
                self.line += 1
                if raw.isspace():
                    continue
                try:
                    obj = jsonline.loads(raw)
                except (ValueError, RecursionError):
                    obj = None
                if not isinstance(obj, dict):
                    self.out.append(Problem(self.line, "not a JSON object, skipped"))
                else:
                    self.feed(obj, raw, start)
                if self.held is not None:
                    self.held += self.out
                    self.out.clear()
                elif self.out:
                    yield from self.out  # type: ignore[misc]  # no placeholder outside a hold
                    self.out.clear()
        tail = bool(self.open) or self.held is not None
        for stream in list(self.open):
            self._close(stream)
        if self.held is not None:  # a compaction still under way: what came after it, as it is
            self.held += self.out
            self.out.clear()
            self._release(None, None)
        for acc in self.streams.values():
            self._found(acc, final=True)
        if not tail:
            self.out.append(Resumable(pos, self.state()))
        yield from self.out  # type: ignore[misc]
        self.out.clear()
