"""Sessions as Claude Code transcripts that ``claude --resume`` accepts: the inverse of ``claude.parse``.

A Claude session keeps its native id and line uuids; other agents' sessions get deterministic ids
and their tool calls become readable text (Claude only replays its own tool and thinking blocks).
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.agents.claude import foreign as claude_foreign
from oxide_git.agents.claude import shape as claude_shape
from oxide_git.agents.claude.store import roots
from oxide_git.core.model import MERGED_FROM, Message, Part, PartType, Session, session_id_for, to_iso

DEFAULT_VERSION = "2.1.39"
# extra keys that are ours, not envelope fields to write back
_INTERNAL = frozenset({"uuids", "message", "boundary", "toolUseResult", "parentUuid", "sessionId",
                       "isSidechain", "agentId", "shape", "deltas", "held", "harness"})
# envelope fields written for every line, whether or not the agent's own line had them
_DEFAULTED = ("isSidechain", "userType", "cwd", "version", "gitBranch")
_BLOCK_KEYS: dict[str, tuple[str, ...]] = {
    PartType.TEXT: ("text",),
    PartType.REASONING: ("text", "signature", "encrypted", "redacted"),
    PartType.TOOL_CALL: ("call_id", "name", "input", "server"),
    PartType.TOOL_RESULT: ("call_id", "output", "is_error", "content", "structured"),
    PartType.IMAGE: ("mime", "data", "url", "source"),
    PartType.FILE: ("path", "mime", "source", "text", "url", "data"),
}


def encode_cwd(cwd: str) -> str:
    """Claude's project folder name: each non-ASCII-alphanumeric UTF-16 unit becomes ``-``."""
    name = "".join(
        c if (c.isascii() and c.isalnum()) else ("--" if ord(c) > 0xFFFF else "-") for c in cwd
    )
    if len(name) <= 200:
        return name
    h = 0
    units = cwd.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i:i + 2], "little")) & 0xFFFFFFFF
    h = abs(h - (1 << 32) if h & 0x80000000 else h)
    digits = ""
    while True:
        h, r = divmod(h, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        if not h:
            break
    return f"{name[:200]}-{digits}"


def part_block(p: Part, native: bool) -> dict[str, Any] | None:
    """A Part as a native content block; None when Claude cannot carry it as a block."""
    rest = {k: v for k, v in p.data.items() if k not in _BLOCK_KEYS.get(p.type, ())} if native else {}
    t = p.type
    if t == PartType.TEXT:
        return {"type": "text", "text": str(p.get("text", "")), **rest}
    if t == PartType.PATCH:
        return {"type": "text", "text": str(p.get("text", ""))}
    if t == PartType.REASONING and native:
        if p.get("redacted"):
            return {"type": "redacted_thinking", "data": p.get("encrypted"), **rest}
        if p.get("signature") is not None:
            return {"type": "thinking", "thinking": p.get("text", ""),
                    "signature": p.get("signature"), **rest}
        return None
    if t == PartType.TOOL_CALL and native:
        kind = "server_tool_use" if p.get("server") else "tool_use"
        return {"type": kind, "id": p.get("call_id"), "name": p.get("name"),
                "input": p.get("input"), **rest}
    if t == PartType.TOOL_RESULT and native:
        block = {"type": "tool_result", "tool_use_id": p.get("call_id"),
                 "content": p.get("content", p.get("output")), **rest}
        if p.get("is_error"):
            block["is_error"] = True
        return block
    src: dict[str, Any] | None
    if t == PartType.IMAGE:
        if p.get("data") is not None:
            src = {"type": "base64", "media_type": p.get("mime"), "data": p.get("data")}
        elif p.get("url") is not None:
            src = {"type": "url", "url": p.get("url")}
            if p.get("mime") is not None:
                src["media_type"] = p.get("mime")
        elif isinstance(p.get("source"), dict):
            src = dict(p.get("source"))
        else:
            return None
        return {"type": "image", "source": src, **rest}
    if t == PartType.FILE:
        src = p.get("source") if isinstance(p.get("source"), dict) else None
        if src is None and p.get("text") is not None:
            src = {"type": "text", "media_type": "text/plain", "data": p.get("text")}
        if src is None:
            return None
        block = {"type": "document", "source": src, **rest}
        if p.get("path"):
            block["title"] = p.get("path")
        return block
    if t == PartType.OTHER and native and isinstance(p.get("raw"), dict):
        return dict(p.get("raw"))
    return None


def _as_text(p: Part) -> str | None:
    """A readable rendering of a part another agent made that Claude has no block for."""
    if p.type == PartType.TOOL_CALL:
        args = json.dumps(p.get("input"), ensure_ascii=False, indent=1)
        return f"[tool call {p.get('name')} ({p.get('call_id')})]\n{args}"
    if p.type == PartType.TOOL_RESULT:
        out = p.get("output")
        out = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
        err = " (error)" if p.get("is_error") else ""
        return f"[tool result ({p.get('call_id')}){err}]\n{out}"
    if p.type == PartType.FILE and p.get("path"):
        return f"[file {p.get('path')}]"
    if p.type == PartType.IMAGE and p.get("path"):
        return f"[image {p.get('path')}]"
    return None


class _Writer:
    def __init__(self, session: Session, native_id: str, cwd: str, native: bool) -> None:
        self.session, self.native_id, self.cwd, self.native = session, native_id, cwd, native
        self.lines: list[dict[str, Any]] = []
        self.used: set[str] = set()
        self.prev: str | None = None
        self.ts: int | None = session.created_at
        self.lost: Counter[str] = Counter()
        self.count = 0
        self.known: set[str] = set()  # every native line uuid this export writes
        self.handover: dict[str, tuple[str, dict[str, Any]]] = {}  # another agent's calls Claude replays
        self.handed: Counter[str] = Counter()
        self.records: Counter[str] = Counter()  # another agent's own records, by kind: no place here
        self.other = session.agent  # the other agent(s) whose records these are
        self.merged = False  # the message being written is one a merge brought
        self.run: set[str] = set()  # the line uuids of the run of merged messages being written

    def uid(self, candidate: Any) -> str:
        self.count += 1
        if self.native and isinstance(candidate, str) and candidate and candidate not in self.used:
            u = candidate
        else:
            u = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"oxide:{self.session.id}:{self.count}"))
        self.used.add(u)
        if self.merged:
            self.run.add(u)
        return u

    def parent(self, original: Any) -> str | None:
        """A native line keeps its own parent while that line is written too (Claude's tree is
        not a chain: parallel tool calls, progress lines); else it hangs on the previous line.
        A line a merge brought keeps only a parent of the same merged run: its own parent in the
        fork is the fork point, which would make a branch past the merge's marker and past the
        turns this session had after the fork point (Claude reads the chain up from the last line)."""
        known = self.run if self.merged else self.known
        if self.native and ((original is None and not self.merged)
                            or (isinstance(original, str) and original in known)):
            return original
        return self.prev

    def envelope(self, m: Message, kind: str, uid: str, i: int = 0) -> dict[str, Any]:
        delta = self.delta(m, i)
        original = delta["parentUuid"] if "parentUuid" in delta else m.extra.get("parentUuid", self.prev)
        line: dict[str, Any] = {"parentUuid": self.parent(original), "isSidechain": False,
                                "userType": "external"}
        if self.native:
            line.update({k: v for k, v in m.extra.items() if k not in _INTERNAL})
        elif isinstance(m.extra.get(MERGED_FROM), Mapping):  # what a merge brought: known by it on import
            line[MERGED_FROM] = dict(m.extra[MERGED_FROM])
        line.setdefault("cwd", self.cwd)
        line.setdefault("version", DEFAULT_VERSION)
        line.setdefault("gitBranch", self.session.branch or "")
        line.update({"sessionId": self.native_id, "type": kind, "uuid": uid,
                     "timestamp": to_iso(self.ts or 0)})
        line.update((k, v) for k, v in delta.items() if k not in ("message", "-", "parentUuid", "uuid"))
        for k in delta.get("-", ()):
            line.pop(k, None)
        self.prev = uid
        return line

    def delta(self, m: Message, i: int) -> dict[str, Any]:
        deltas = m.extra.get("deltas") if self.native else None
        d = deltas[i] if isinstance(deltas, list) and i < len(deltas) else None
        return d if isinstance(d, dict) else {}

    def message_delta(self, msg: dict[str, Any], m: Message, i: int) -> dict[str, Any]:
        d = self.delta(m, i)
        msg.update(d.get("message") or {})
        for k in d.get("-", ()):
            if k.startswith("message."):
                msg.pop(k[8:], None)
        return msg

    def blocks(self, m: Message, skip: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        out = []
        for p in m.parts:
            if p.type in skip:
                continue
            b = part_block(p, self.native)
            if b is None and not self.native:
                b = claude_foreign.block(p, self.handover)
                if b is not None:
                    self.handed[f"{p.type.replace('_', ' ')}s of {self.other}"] += 1
            if b is None and not self.native:
                text = _as_text(p)
                if text is not None:
                    self.lost[f"{p.type.replace('_', ' ')} parts became plain text"] += 1
                    b = {"type": "text", "text": text}
            if b is None and p.type == PartType.OTHER:
                self.records[str(p.get("kind") or "other")] += 1
                continue
            if b is None:
                self.lost[f"{p.type} parts ({p.get('kind') or m.role}) were left out"] += 1
                continue
            out.append(b)
        return out

    def message(self, m: Message) -> None:
        if m.created_at is not None:
            self.ts = m.created_at
        if any(p.type == PartType.COMPACTION for p in m.parts):
            self.compaction(m)
            rest = [p for p in m.parts if p.type not in (PartType.COMPACTION,)]
            if not rest:
                return
            m = Message(m.role, tuple(rest), created_at=m.created_at)
        if m.role == "system" and all(p.type == PartType.OTHER for p in m.parts):
            if self.native:
                for p in m.parts:
                    self.raw(p.get("raw"))
            else:
                self.records.update(str(p.get("kind") or "other") for p in m.parts)
            return
        if m.role == "assistant":
            self.assistant(m)
            return
        blocks = self.blocks(m)
        if not blocks:
            return
        line = self.envelope(m, "user", self.uid(m.native_id))
        if m.role == "system":
            line["isMeta"] = True
        shapes = m.extra.get("shape") if self.native else None
        as_list = isinstance(shapes, list) and bool(shapes) and len(shapes[0]) > 2 and isinstance(
            shapes[0][2], list)
        simple = (len(blocks) == 1 and blocks[0].keys() == {"type", "text"} and m.role == "user"
                  and not as_list)
        line["message"] = {**(m.extra.get("message", {}) if self.native else {}), "role": "user",
                           "content": blocks[0]["text"] if simple else blocks}
        structured = next((p.get("structured") for p in m.parts if "structured" in p.data), None)
        if self.native and structured is not None:
            line["toolUseResult"] = structured
        elif self.native and "toolUseResult" in m.extra:
            line["toolUseResult"] = m.extra["toolUseResult"]
        self.lines.append(self.shaped(line, m, 0))

    def assistant(self, m: Message) -> None:
        blocks = self.blocks(m)
        if not blocks:
            return
        meta = dict(m.extra.get("message", {})) if self.native else {}
        seed = f"oxide:{self.session.id}:{m.native_id}:{self.count}"
        meta.setdefault("id", f"msg_oxide_{uuidlib.uuid5(uuidlib.NAMESPACE_URL, seed).hex}")
        meta.setdefault("type", "message")
        meta.setdefault("stop_reason", None)
        meta.setdefault("stop_sequence", None)
        usage = m.usage if m.usage is not None or self.native else {"input_tokens": 0,
                                                                    "output_tokens": 0}
        uuids = list(m.extra.get("uuids", [])) if self.native else []
        held = m.extra.get("held") if self.native else None
        if isinstance(held, list) and len(held) == len(uuids) and all(
                isinstance(i, int) and 0 <= i < len(blocks) for h in held for i in h):
            groups = [[blocks[i] for i in h] for h in held]
        else:
            groups = claude_shape.groups(blocks, uuids, m.extra.get("shape") if self.native else None)
        for i, group in enumerate(groups):
            line = self.envelope(m, "assistant", self.uid(uuids[i] if uuids else m.native_id), i)
            msg = {"model": m.model or "<synthetic>", **meta, "role": "assistant", "content": group}
            if usage is not None:
                msg["usage"] = usage
            line["message"] = self.message_delta(msg, m, i)
            if m.cost is not None:
                line["costUSD"] = m.cost
            self.lines.append(self.shaped(line, m, i))

    def shaped(self, line: dict[str, Any], m: Message, i: int) -> dict[str, Any]:
        shapes = m.extra.get("shape") if self.native else None
        if not (isinstance(shapes, list) and i < len(shapes) and isinstance(shapes[i], list)
                and shapes[i] and isinstance(shapes[i][0], str)):
            return line
        had = set(shapes[i][0].split(","))
        for k in _DEFAULTED:  # what the envelope fills in for lines that lack it, this one had not
            if k not in had:
                line.pop(k, None)
        return claude_shape.reorder(line, shapes[i])

    def compaction(self, m: Message) -> None:
        part = next(p for p in m.parts if p.type == PartType.COMPACTION)
        uuids = list(m.extra.get("uuids", [])) if self.native else []
        boundary = m.extra.get("boundary") if self.native else None
        summary = str(part.get("summary") or "")
        if boundary is not None or not self.native:
            raw = dict(boundary) if isinstance(boundary, Mapping) else {
                "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "isMeta": False, "level": "info", "compactMetadata": {"trigger": "manual"}}
            uid = self.uid(uuids[0] if uuids else m.native_id)
            # Claude names here a line it may never have written: a native one keeps it as it is.
            logical = raw["logicalParentUuid"] if self.native and "logicalParentUuid" in raw else self.prev
            raw.update({"parentUuid": None, "logicalParentUuid": logical, "isSidechain": False,
                        "sessionId": self.native_id, "uuid": uid,
                        "timestamp": raw.get("timestamp") or to_iso(self.ts or 0)})
            raw.setdefault("cwd", self.cwd)
            self.lines.append(raw)
            self.prev = uid
            if not summary:
                return
        i = len(uuids) - 1 if uuids else 0
        line = self.envelope(m, "user", self.uid(uuids[-1] if uuids else m.native_id), i)
        line.update({"isCompactSummary": True, "isVisibleInTranscriptOnly": True,
                     "message": {"role": "user", "content": summary}})
        self.lines.append(self.shaped(line, m, i))

    def raw(self, raw: Any) -> None:
        if not isinstance(raw, dict):
            return
        line = dict(raw)
        if isinstance(line.get("uuid"), str):
            line["uuid"] = self.uid(line["uuid"])
            line["parentUuid"] = self.parent(line.get("parentUuid"))
            self.prev = line["uuid"]
        if "sessionId" in line:
            line["sessionId"] = self.native_id
        self.lines.append(line)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as ``<root>/projects/<encoded cwd>/<native id>.jsonl``; see the module docstring."""
    native = session.agent == "claude"
    own = (native and session.native_id is not None
           and session.id == session_id_for("claude", session.native_id, session.created_at))
    try:
        native_id = str(uuidlib.UUID(str(session.native_id))) if own else ""
    except ValueError:
        native_id = ""
    native_id = native_id or str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"oxide:{session.id}"))
    cwd = session.cwd or (str(env.worktrees[0]) if env.worktrees else str(env.home))
    w = _Writer(session, native_id, cwd, native)
    # Claude's own records are written as they were; another agent's (the whole session, or what
    # `git oxide merge` brought from a fork of another agent) as foreign ones: its harness context
    # left out, its tool calls handed over or shown as text, its own records and fields dropped.
    mine = [native and m.made_by(session.agent) == "claude" for m in messages]
    w.known = claude_shape.native_uuids([m for m, o in zip(messages, mine, strict=True) if o])
    harness = sum(1 for m, o in zip(messages, mine, strict=True) if not o and m.is_harness())
    kept = [(m, o) for m, o in zip(messages, mine, strict=True) if o or not m.is_harness()]
    w.handover = claude_foreign.plan([m for m, o in kept if not o], cwd)
    w.other = ", ".join(sorted({m.made_by(session.agent) for m, o in zip(messages, mine, strict=True)
                                if not o})) or session.agent
    other = w.other
    for m, o in kept:
        w.native = o
        merged = MERGED_FROM in m.extra
        if not merged:
            w.run = set()
        w.merged = merged
        w.message(m)
    body = b"".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        for line in w.lines
    )
    path = roots(env)[0] / "projects" / encode_cwd(cwd) / f"{native_id}.jsonl"
    lost = [f"{n} {what}" for what, n in sorted(w.lost.items())]
    if w.records:
        kinds = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(w.records.items()))
        n = sum(w.records.values())
        one = n == 1
        lost.append(f"{n} record{'' if one else 's'} of {other} ({kinds}) "
                    f"{'has' if one else 'have'} no place in a Claude transcript and "
                    f"{'was' if one else 'were'} left out")
    if harness:
        lost.append(f"{harness} message(s) of context {other}'s harness injected (environment, "
                    "permissions, instructions) were left out")
    if any("tool call parts became plain text" in x for x in lost):
        lost.append(f"tool calls of {other} that Claude has no tool for are shown as text")
    lost += [f"{n} {what} were handed over as Claude's own tool calls"
             for what, n in sorted(w.handed.items())]
    return Export({path: body}, native_id, ["claude", "--resume", native_id], cwd, lost)
