"""A session as a Codex rollout that ``codex exec resume <id>`` accepts (the reader: ``agent.py``).

A Codex session keeps its native id and goes back under the file name it had (Codex names it in
local time, and its thread store points at that path); its lines are written back from the parts
that hold them, each with its own envelope (timestamp, metadata, key order: ``codex_items``), so an
unchanged session comes back byte for byte and a paginated one is numbered 0..n-1 again.
Another agent's session gets ``sessions/YYYY/MM/DD/rollout-<UTC>-<uuid7>.jsonl`` with a uuid7-shaped
id made from ``created_at`` and a hash of ``session.id``, in the legacy form (no ordinals, which
Codex 0.171 resumes and continues in that form), under the provider the user's ``config.toml``
names (none when it names none: Codex then resumes it under the provider it starts with); its
harness messages are left out, its shell/write/edit calls become Codex's own (``codex_foreign``),
and what Codex cannot replay becomes text. ``lost`` says each of these.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.agents.codex import foreign as foreign
from oxide_git.agents.codex.items import dumps_line, line_with
from oxide_git.agents.codex.open import said_again
from oxide_git.agents.codex.store import named_provider
from oxide_git.core.model import Message, Part, Session, to_iso

_NOT_LINES = ("content", "bare", "*")  # ``line`` values of other parts that are not envelope lines


def _uuid_for(session: Session) -> str:
    ms = (session.created_at or 0) & 0xFFFFFFFFFFFF
    h = int.from_bytes(hashlib.sha1(f"oxide:{session.id}".encode()).digest()[:10], "big")
    value = (ms << 80) | (0x7 << 76) | ((h >> 68) & 0xFFF) << 64 | (0b10 << 62) | (h & (2**62 - 1))
    return str(uuid.UUID(int=value))


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class _Writer:
    def __init__(self, native: bool, numbered: bool) -> None:
        self.native = native
        self.numbered = numbered  # lines carry their ``ordinal`` (paginated rollouts, 0.155+)
        self.lines: list[str] = []
        self.lost: dict[str, int] = {}
        self.ts: str | None = None
        self.env: dict[str, Any] | None = None  # the envelope of the part being written
        self.last_env = False
        self.planned: dict[str, tuple[str, str, str]] = {}  # another agent's calls Codex can replay
        self.base: int | None = None  # the time of the message being written (lines keep a delta)
        self.parts: Sequence[Part] = ()  # its parts (an event part may name one whose text it says)

    def line(self, kind: str, payload: Any) -> None:
        env, self.env = self.env, None  # a part's envelope is its first line's
        self.numbered = self.numbered or (env is not None and env.get("ordinal") is not None)
        ordinal = len(self.lines) if self.numbered else None
        self.lines.append(line_with(env, self.ts, ordinal, kind, payload, self.base))
        self.last_env = env is not None

    def raw_line(self, raw: dict[str, Any]) -> None:
        """A line that had no envelope (kept whole, less its timestamp)."""
        if self.env is not None:
            self.line(str(raw.get("type")), raw.get("payload"))
            return
        self.lines.append(dumps_line({"timestamp": self.ts, **raw}))
        self.last_env = False

    def item(self, payload: dict[str, Any]) -> None:
        self.line("response_item", payload)

    def event(self, payload: dict[str, Any]) -> None:
        self.line("event_msg", payload)

    def lose(self, what: str) -> None:
        self.lost[what] = self.lost.get(what, 0) + 1


def _content(parts: Sequence[Part], text_type: str) -> list[Any]:
    out: list[Any] = []
    for p in parts:
        if p.type == "text":
            out.append({"type": text_type, "text": str(p.get("text", ""))})
        elif p.type == "image" and p.get("url"):
            out.append({"type": "input_image", "image_url": p.get("url")})
        elif p.type == "other" and p.get("line") == "content":
            out.append(p.get("raw"))
    return out


def _is_content(p: Part) -> bool:
    return p.type in ("text", "image") or (p.type == "other" and p.get("line") == "content")


def _prompt(w: _Writer, m: Message, role: str) -> None:
    """A user or system message: its content parts make one message item (then user_message)."""
    codex_role = m.extra.get("codex_role") or ("user" if role == "user" else "developer")
    parts = [p for p in m.parts if _is_content(p)]
    env = m.extra.get("env") if w.native else None
    if m.extra.get("item") is not False:
        content = m.extra["content"] if "content" in m.extra else _content(parts, "input_text")
        w.env = env
        w.item({"type": "message", "role": codex_role, "content": content,
                **(m.extra.get("native") or {})})
    elif role == "user":
        w.env = env  # a user_message event alone: its envelope is the message's
    if role == "user" and not (env and m.extra.get("item") is not False):
        # with an envelope, the event is a part of its own (0.171 writes none)
        text = "\n".join(str(p.get("text", "")) for p in parts if p.type == "text")
        event = m.extra.get("event") or {"images": [], "local_images": [], "text_elements": []}
        w.event({"type": "user_message", "message": text, **event})


def _assistant_part(w: _Writer, p: Part) -> None:
    d = p.data
    if p.type == "text":
        text = str(d.get("text", ""))
        extra = d.get("event_extra") or {}
        if d.get("source"):
            w.event({"type": d["source"], "message": text,
                     **{k: v for k, v in d.items() if k not in ("text", "source", "env")}})
            return
        for e in d.get("events", [] if "env" in d else [text]):  # kept events are parts
            w.event({"type": "agent_message", "message": e, **extra})
        native = {k: v for k, v in d.items()
                  if k not in ("text", "content", "events", "event_extra", "env") and w.native}
        w.item({"type": "message", "role": "assistant",
                "content": d.get("content", [{"type": "output_text", "text": text}]),
                **native})
    elif p.type == "reasoning":
        text = str(d.get("text", ""))
        if d.get("source") or not w.native:
            kind = d.get("source") or "agent_reasoning"
            w.event({"type": kind, "text": text,
                     **{k: v for k, v in d.items() if k not in ("text", "source", "env") and w.native}})
            if not w.native:
                w.lose("reasoning is shown in the history but not sent back to the model")
            return
        summary = d.get("summary", [text])
        for e in d.get("events", [] if "env" in d else summary):
            w.event({"type": "agent_reasoning", "text": e, **(d.get("event_extra") or {})})
        item: dict[str, Any] = {"type": "reasoning", "summary": d["summary_raw"] if "summary_raw" in d
                                else [{"type": "summary_text", "text": t} for t in summary]}
        item.update((k, v) for k, v in d.items() if k not in (
            "text", "summary", "summary_raw", "encrypted", "events", "event_extra", "env"))
        if "encrypted" in d:
            item["encrypted_content"] = d["encrypted"]
        w.item(item)
    elif p.type == "tool_call" and w.native and d.get("codex_type"):
        t = d["codex_type"]
        if t == "function_call":
            args = d["arguments"] if "arguments" in d else _dumps(d.get("input"))
            item = {"type": t, "name": d.get("name"), "arguments": args, "call_id": d.get("call_id")}
        elif t == "custom_tool_call":
            item = {"type": t, "call_id": d.get("call_id"), "name": d.get("name"),
                    "input": d.get("input")}
        else:
            item = {"type": t, "call_id": d.get("call_id"), "action": d.get("input")}
        if "status" in d:
            item["status"] = d["status"]
        item.update(d.get("native") or {})
        w.item(item)
    elif p.type == "tool_call" and str(d.get("call_id")) in w.planned:
        planned = w.planned[str(d.get("call_id"))]
        w.lose(f"{d.get('name')} tool calls were handed over as Codex {planned[1]} calls")
        w.item(foreign.call_item(str(d.get("call_id")), planned))
    elif p.type == "tool_call":
        w.lose(f"tool calls were turned into text (Codex cannot replay {d.get('name')!s}-style calls)")
        w.item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text":
                f"[tool call {d.get('name')} {d.get('call_id')}]\n{_dumps(d.get('input'))}"}]})
    else:
        _common_part(w, p)


def _common_part(w: _Writer, p: Part) -> None:
    d = p.data
    if p.type == "tool_result" and w.native and d.get("codex_type"):
        w.item({"type": d["codex_type"], "call_id": d.get("call_id"), "output": d.get("output"),
                **(d.get("native") or {})})
    elif p.type == "tool_result" and str(d.get("call_id")) in w.planned:
        w.item(foreign.result_item(str(d.get("call_id")), w.planned[str(d.get("call_id"))],
                                   d.get("output"), bool(d.get("is_error"))))
    elif p.type == "tool_result":
        out = d.get("output")
        text = out if isinstance(out, str) else _dumps(out)
        err = " (error)" if d.get("is_error") else ""
        w.lose("tool results were turned into text")
        w.item({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"[tool result {d.get('call_id')}{err}]\n{text}"}]})
    elif p.type == "compaction":
        payload = {"message": d.get("summary", "")}
        payload.update((k, v) for k, v in d.items() if k not in ("summary", "replaces", "env"))
        w.line("compacted", payload)
    elif p.type == "other" and isinstance(d.get("line"), str) and d["line"] not in _NOT_LINES \
            and w.native:
        w.line(d["line"], said_again(dict(d), w.parts) if "text_of" in d else d.get("raw"))
    elif p.type == "other" and d.get("line") == "*" and w.native and isinstance(d.get("raw"), dict):
        w.raw_line(d["raw"])
    elif p.type in ("text", "reasoning", "tool_call"):
        _assistant_part(w, p)
    elif p.type == "patch":
        w.lose("patches were turned into text")
        w.item({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": str(d.get("text", ""))}]})
    else:
        w.lose(f"{p.type} parts ({d.get('kind') or d.get('path') or ''}) were left out".strip())


def _usage(w: _Writer, m: Message) -> None:
    usage = m.usage
    if not isinstance(usage, dict) or not w.native or any("env" in p.data for p in m.parts):
        return  # a paginated message keeps its token_count lines as parts
    skip = ("total", "rate_limits", "model_context_window")
    info = {"total_token_usage": usage.get("total"),
            "last_token_usage": {k: v for k, v in usage.items()
                                 if k not in skip and isinstance(v, int | float)}}
    info.update((k, v) for k, v in usage.items()
                if (k not in skip and not isinstance(v, int | float)) or k == "model_context_window")
    w.event({"type": "token_count", "info": info, "rate_limits": usage.get("rate_limits")})


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    native = session.agent == "codex" and bool(session.native_id)
    native_id = session.native_id if native and session.native_id else _uuid_for(session)
    created = session.created_at or next((m.created_at for m in messages if m.created_at), 0) or 0
    cwd = session.cwd or (str(env.worktrees[0]) if env.worktrees else str(env.home))
    meta_env = session.extra.get("meta_env") if native else None
    w = _Writer(native, numbered=isinstance(meta_env, dict) and meta_env.get("ordinal") is not None)
    w.ts = to_iso(created)
    meta: dict[str, Any] = {"id": native_id, "timestamp": w.ts, "cwd": cwd}
    if native:
        meta.update(session.extra.get("meta") or {})
        if session.extra.get("git"):
            meta["git"] = session.extra["git"]
    else:
        meta.update(originator="git_oxide", cli_version="0.0.0", source="cli")
        provider = named_provider(env)
        if provider:
            meta["model_provider"] = provider
        else:  # Codex 0.171 refuses a thread named under another provider than the one it runs
            # with ("Cannot change this thread's model provider"); one that names none resumes
            # under the provider configured when it starts (issue 37: the user's first run)
            w.lose("Codex names no model_provider in its config.toml yet: the rollout names none, "
                   "so Codex resumes it under the provider it is configured with when it starts")
        if session.branch:
            meta["git"] = {"branch": session.branch}
    # Codex's own records are written as they were; another agent's (the whole session, or what
    # `git oxide merge` brought from a fork of another agent) as foreign ones
    mine = [native and m.made_by(session.agent) == "codex" for m in messages]
    w.planned = foreign.plan([m for m, o in zip(messages, mine, strict=True) if not o], cwd)
    w.env = meta_env if isinstance(meta_env, dict) else None
    w.line("session_meta", meta)
    start = 1
    for m, own in zip(messages, mine, strict=True):
        w.native = own
        if not own and m.is_harness():
            w.lose(f"{m.made_by(session.agent)} harness messages (context its harness injected, no "
                   "user's turn) were left out")
            continue
        start = len(w.lines)
        w.ts = to_iso(m.created_at or created)
        w.base, w.parts = m.created_at, m.parts
        role = m.role
        prompt = role == "user" or (role == "system" and not m.is_compaction() and (
            "codex_role" in m.extra or any(_is_content(p) for p in m.parts)))
        if prompt:
            started = False
            for p in m.parts:
                if not _is_content(p):
                    w.env = p.get("env") if own else None
                    _common_part(w, p)
                elif not started:
                    _prompt(w, m, role)
                    started = True
            if not started:
                _prompt(w, m, role)
        else:
            for p in m.parts:
                w.env = p.get("env") if own else None
                (_assistant_part if role == "assistant" else _common_part)(w, p)
            if role == "assistant":
                _usage(w, m)
    # so that parse gives updated_at back (a paginated line keeps its own timestamp)
    if session.updated_at and len(w.lines) > start + 1 and not w.last_env:
        last = json.loads(w.lines[-1])
        last["timestamp"] = to_iso(session.updated_at)
        w.lines[-1] = _dumps(last)
    when = datetime.fromtimestamp(created / 1000, UTC).strftime("%Y-%m-%dT%H-%M-%S")
    fname = f"rollout-{when}-{native_id}.jsonl"
    known = session.extra.get("file") if native else None
    if isinstance(known, str) and known.endswith(f"-{native_id}.jsonl") and "/" not in known \
            and known[8:18].count("-") == 2:
        fname, when = known, known[8:27]  # Codex's own name (its local time)
    root = Path(env.environ.get("CODEX_HOME") or env.home / ".codex")
    path = root / "sessions" / when[:4] / when[5:7] / when[8:10] / fname
    lost = [f"{n} {what}" if n > 1 else what for what, n in w.lost.items()]
    return Export(files={path: ("\n".join(w.lines) + "\n").encode()}, native_id=native_id,
                  command=["codex", "resume", native_id], cwd=cwd, lost=lost)
