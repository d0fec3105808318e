"""Sessions as Cline session folders that ``cline --acp`` (``session/load``) and ``cline --id``
resume: the inverse of ``cline.parse``.

A Cline session goes back as Cline wrote it: its manifest and its messages file, byte for byte
(``js_json`` writes JSON as ``JSON.stringify(value, null, 2)`` does). Another agent's session gets
a new Cline id (the session's time and a hash of its oxide id), a manifest naming the provider and
model Cline is configured with, and its messages as Cline's: prompts wrapped as Cline wraps them,
tool calls as Cline's own tools where it has one (``cline_foreign``), the rest as text.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import AgentEnv, Export, js_json, jsonline
from oxide_git.agents.cline import compaction as cline_compaction
from oxide_git.agents.cline import foreign as cline_foreign
from oxide_git.agents.cline.blocks import native_message
from oxide_git.agents.cline.store import MESSAGES_SUFFIX, created_of, sessions_dir
from oxide_git.core.model import Message, Part, PartType, Role, Session, session_id_for, to_iso

VERSION = "3.0.65"  # the Cline release whose files these are (docs/agents/cline.md)
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def data_dir(env: AgentEnv) -> Path:
    e = env.environ
    if e.get("CLINE_DATA_DIR", "").strip():
        return Path(e["CLINE_DATA_DIR"].strip())
    base = Path(e["CLINE_DIR"].strip()) if e.get("CLINE_DIR", "").strip() else env.home / ".cline"
    return base / "data"


def configured_model(env: AgentEnv) -> tuple[str, str]:
    """(provider, model) Cline was last set up with (``cline auth`` writes providers.json);
    ``("cline", "")`` before any (Cline's default provider, no model)."""
    path = env.environ.get("CLINE_PROVIDER_SETTINGS_PATH", "").strip() or str(
        data_dir(env) / "settings" / "providers.json")
    try:
        doc = jsonline.loads(Path(path).read_bytes())
    except (OSError, ValueError, RecursionError):
        doc = None
    provider = doc.get("lastUsedProvider") if isinstance(doc, dict) else None
    if not isinstance(provider, str):
        return "cline", ""
    entry = (doc.get("providers") or {}).get(provider) if isinstance(doc.get("providers"), dict) else None
    settings = entry.get("settings") if isinstance(entry, dict) else None
    model = settings.get("model") if isinstance(settings, dict) else None
    return provider, model if isinstance(model, str) else ""


# Cline's manifest schema wants a non-empty ``provider`` and ``model``: a manifest without them
# is no session to Cline (``session/load`` answers "Resource not found"). Cline does not resume
# with them (it uses the provider it is configured with when it starts): they only record one.
_NO_MODEL = ("Cline has no model configured yet: the manifest records model {model}; Cline resumes "
             "with the provider and model it is configured with when it starts")


def _manifest_model(session: Session, messages: Sequence[Message], env: AgentEnv) -> tuple[str, str]:
    """The manifest's (provider, model): Cline's configured ones, else Cline's default provider
    and the session's own model (never empty: see ``_NO_MODEL``)."""
    provider, model = configured_model(env)
    if model:
        return provider, model
    own = next((m.model for m in reversed(messages) if m.model), None) or session.model
    return provider or "cline", own or "unknown"


def new_id(session: Session, messages: Sequence[Message]) -> str:
    """A Cline id for a session Cline did not make: ``<ms>_<5 letters>``, as Cline's own are."""
    ms = session.created_at or next((m.created_at for m in messages if m.created_at), None) or 0
    n = int(hashlib.sha1(f"oxide:{session.id}".encode()).hexdigest(), 16)
    tail = ""
    for _ in range(5):
        n, r = divmod(n, 36)
        tail += _BASE36[r]
    return f"{ms:013d}_{tail}"


def _dumps(doc: Any) -> bytes:
    return (js_json.dumps(doc) + "\n").encode()


def _text(p: Part) -> str | None:
    """A readable rendering of a part of another agent that Cline has no block for."""
    if p.type == PartType.TOOL_CALL:
        args = json.dumps(p.get("input"), ensure_ascii=False, indent=1)
        return f"[tool call {p.get('name')} ({p.get('call_id')})]\n{args}"
    if p.type == PartType.TOOL_RESULT:
        out = p.get("output")
        out = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
        return f"[tool result ({p.get('call_id')}){' (error)' if p.get('is_error') else ''}]\n{out}"
    if p.type == PartType.PATCH:
        return str(p.get("text") or "")
    if p.type == PartType.COMPACTION:
        return f"[summary of the conversation before this point]\n{p.get('summary') or ''}"
    if p.type in (PartType.FILE, PartType.IMAGE) and p.get("path"):
        return f"[{p.type} {p.get('path')}]"
    return None


class _Foreign:
    """Another agent's messages as Cline's, consecutive ones of a role merged into one."""

    def __init__(self, session: Session, messages: Sequence[Message], cwd: str) -> None:
        self.session = session
        self.handover = cline_foreign.plan(messages, cwd)
        self.out: list[dict[str, Any]] = []
        self.lost: Counter[str] = Counter()
        self.handed: Counter[str] = Counter()
        self.ts = session.created_at or 0

    def blocks(self, m: Message) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for p in m.parts:
            b = cline_foreign.block(p, self.handover)
            if b is not None:
                self.handed[f"{p.type.replace('_', ' ')}s of {self.session.agent}"] += 1
            elif p.type == PartType.TEXT and p.get("text"):
                said = str(p.get("text"))
                b = {"type": "text", "text": f'<user_input mode="act">{said}</user_input>'
                     if m.role == Role.USER else said}
            elif (shown := _text(p)) is not None:
                if p.type in (PartType.TOOL_CALL, PartType.TOOL_RESULT):
                    self.lost[f"{p.type.replace('_', ' ')} parts became plain text"] += 1
                b = {"type": "text", "text": shown}
            elif p.type != PartType.TEXT:
                self.lost[f"{p.type} parts ({p.get('kind') or m.role}) were left out"] += 1
            if b is not None:
                out.append(b)
        return out

    def add(self, m: Message) -> None:
        self.ts = m.created_at or self.ts
        blocks = self.blocks(m)
        if not blocks:
            return
        role = "assistant" if m.role == Role.ASSISTANT else "user"
        if self.out and self.out[-1]["role"] == role:
            self.out[-1]["content"] += blocks
            return
        seed = hashlib.sha1(f"oxide:{self.session.id}:{len(self.out)}".encode()).hexdigest()
        msg: dict[str, Any] = {"id": f"msg_{seed[:8]}", "role": role, "content": blocks, "ts": self.ts}
        if role == "assistant" and m.model:
            msg["modelInfo"] = {"id": m.model, "provider": self.session.agent}
        self.out.append(msg)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as ``<sessions>/<id>/<id>.json`` and ``<id>.messages.json`` (and its
    ``<id>.compaction.json`` when Cline compacted it)."""
    native = session.agent == "cline"
    own = (native and session.native_id is not None
           and session.id == session_id_for("cline", session.native_id, session.created_at))
    native_id = str(session.native_id) if own else new_id(session, messages)
    cwd = session.cwd or (str(env.worktrees[0]) if env.worktrees else str(env.home))
    folder = sessions_dir(env) / native_id
    messages_path = folder / f"{native_id}{MESSAGES_SUFFIX}"
    lost: list[str] = []
    file = session.extra.get("file") if native else None
    compaction: Part | None = None
    if not own and not configured_model(env)[1]:
        lost.append(_NO_MODEL.format(model=_manifest_model(session, messages, env)[1]))
    if native:
        body = []
        for m in messages:
            if (c := cline_compaction.part_of(m)) is not None:
                compaction = c  # the file holds Cline's latest compaction (one per session)
            else:
                body.append(native_message(m))
    else:
        harness = sum(1 for m in messages if m.is_harness())
        f = _Foreign(session, [m for m in messages if not m.is_harness()], cwd)
        for m in messages:
            if not m.is_harness():
                f.add(m)
        body = f.out
        lost += [f"{n} {what}" for what, n in sorted(f.lost.items())]
        if harness:
            lost.append(f"{harness} message(s) of context {session.agent}'s harness injected "
                        "(environment, permissions, instructions) were left out")
        lost += [f"{n} {what} were handed over as Cline's own tool calls"
                 for what, n in sorted(f.handed.items())]
    last = next((m.created_at for m in reversed(messages) if m.created_at), session.created_at)
    if isinstance(file, dict) and own:
        header = dict(file)
    else:
        header = {"version": 1, "updated_at": to_iso(last or 0), "agent": "lead", "sessionId": native_id,
                  "origin": {"source": "cli", "mode": "user", "sessionId": native_id, "version": VERSION},
                  "messages": None}
    header["messages"] = body
    manifest = session.extra.get("manifest") if own else None
    if isinstance(manifest, dict):
        manifest = {**manifest, "messages_path": str(messages_path)}
    else:
        manifest = _manifest(session, native_id, cwd, messages, last, env)
        manifest["messages_path"] = str(messages_path)
    files = {messages_path: _dumps(header)}
    if compaction is not None:
        path = folder / f"{native_id}{cline_compaction.SUFFIX}"
        if "compaction_path" in manifest or not own:  # Cline drops it on an ACP resume; the
            # file is where Cline looks without it
            manifest["compaction_path"] = str(path)
        files[path] = _dumps(cline_compaction.document(compaction, body))
    files = {folder / f"{native_id}.json": _dumps(manifest), **files}
    return Export(files, native_id, ["cline", "--id", native_id], cwd, lost)


def _manifest(session: Session, native_id: str, cwd: str, messages: Sequence[Message],
              last: int | None, env: AgentEnv) -> dict[str, Any]:
    provider, model = _manifest_model(session, messages, env)
    prompt = next((m.text() for m in messages if m.role == Role.USER and not m.is_harness()
                   and m.text()), None)
    started = created_of(native_id) or session.created_at or 0
    out: dict[str, Any] = {
        "version": 1, "session_id": native_id, "source": "cli", "pid": 0,
        "started_at": to_iso(started), "ended_at": to_iso(last or started), "exit_code": 0,
        "status": "completed", "interactive": False, "provider": provider, "model": model,
        "cwd": cwd, "workspace_root": cwd, "enable_tools": True, "enable_spawn": True,
        "enable_teams": True,
    }
    if prompt:
        out["prompt"] = prompt
    meta: dict[str, Any] = {"sessionHistoryOrigin": {"mode": "user", "version": VERSION}}
    if session.branch:
        meta["git"] = {"branch": session.branch}
    if session.title or prompt:
        meta["title"] = session.title or prompt
    out["metadata"] = meta
    return out
