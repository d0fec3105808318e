"""Cline (the ``cline`` CLI, 3.x): ``<sessions>/<id>/<id>.json`` and ``<id>.messages.json``.

The sessions folder is ``$CLINE_SESSION_DATA_DIR``, else ``$CLINE_DATA_DIR/sessions``, else
``$CLINE_DIR/data/sessions``, else ``~/.cline/data/sessions``. Each session is a folder holding its
manifest (``<id>.json``: cwd, status, provider, model, title), its messages
(``<id>.messages.json``: a header and ``messages``, Anthropic-style content blocks) and a
``agent_<id>.messages.json`` per sub-agent (``spawn_agent``) of its own. Cline rewrites these
files whole (JSON documents, not JSON lines), so there are no byte offsets to resume from: a
changed file is read whole again and every message lands at its same sequence number (the store
sees what is unchanged as unchanged). One ``Resumable``, right after the session, carries the
file's digest: parsing from it again yields nothing when the bytes are the same (the importer's
own size+mtime check comes first), and the whole session again when they are not. Messages
become Parts in ``cline_blocks``; export lives in ``cline_export``. A compacted session's
``<id>.compaction.json`` (the manifest's ``compaction_path``) is one compaction message placed at
its ``source_message_count`` (``cline_compaction``); its bytes count in the digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.agents import (
    AgentEnv,
    Event,
    Export,
    FoundMessage,
    FoundSession,
    Problem,
    Resumable,
    Unknown,
    jsonline,
)
from oxide_git.agents.cline import compaction as cline_compaction
from oxide_git.agents.cline.blocks import BLOCK_TYPES, message
from oxide_git.agents.cline.store import (
    MESSAGES_SUFFIX as MESSAGES_SUFFIX,
)
from oxide_git.agents.cline.store import (
    created_of as created_of,
)
from oxide_git.agents.cline.store import (
    sessions_dir as sessions_dir,
)
from oxide_git.core.model import Message, Session, from_iso, session_id_for

name = "cline"

FILE_PATTERNS = ("*.messages.json",)
STATE_VERSION = 1
# Top-level keys of a messages file (Cline 3.0.65); any other is kept and reported as drift.
FILE_KEYS = frozenset({"version", "updated_at", "agent", "sessionId", "origin", "taskType",
                       "messages", "system_prompt"})


def watch_roots(env: AgentEnv) -> list[Path]:
    return [sessions_dir(env)]


def _load(path: Path) -> Any:
    try:
        return jsonline.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None


def manifest_of(folder: Path) -> dict[str, Any] | None:
    """A session folder's manifest (``<folder>/<folder name>.json``), if it reads as one."""
    doc = _load(folder / f"{folder.name}.json")
    return doc if isinstance(doc, dict) and isinstance(doc.get("session_id"), str) else None


def discover(env: AgentEnv) -> list[Path]:
    """The messages files of the sessions whose manifest's cwd lies in a worktree, each session's
    own first, then its sub-agents'."""
    root = sessions_dir(env)
    out: list[Path] = []
    if not root.is_dir():
        return out
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        manifest = manifest_of(folder)
        if manifest is None or not env.belongs(_cwd(manifest)):
            continue
        own = folder / f"{folder.name}{MESSAGES_SUFFIX}"
        if own.is_file():
            out.append(own)
        out += sorted(p for p in folder.glob(f"*{MESSAGES_SUFFIX}") if p != own and p.is_file())
    return out


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _cwd(manifest: Mapping[str, Any]) -> str | None:
    for key in ("cwd", "workspace_root"):
        if isinstance(manifest.get(key), str) and manifest[key]:
            return str(manifest[key])
    return None


def parse(path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None) -> Iterator[Event]:
    """Events for the session in a messages file (see the module docstring); a manifest given
    alone yields its session without messages (they are in the messages file)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        yield Problem(None, f"{path}: cannot read ({e.strerror or e})")
        return
    sha = hashlib.sha1(raw)
    try:
        doc = jsonline.loads(raw)
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        yield Problem(None, "not a JSON object, skipped" if raw.strip() else "empty, skipped")
        return
    if not path.name.endswith(MESSAGES_SUFFIX) and isinstance(doc.get("session_id"), str):
        yield FoundSession(_session_of_manifest(doc))
        yield Resumable(len(raw), {"v": STATE_VERSION, "sha": sha.hexdigest(), "unknown": []})
        return
    if not isinstance(doc.get("messages"), list):
        yield Problem(None, "no messages list: not a Cline messages file, skipped")
        return
    session = _session(path, doc)
    yield FoundSession(session)
    compaction, craw = _compaction(path, session)
    if craw is not None:
        sha.update(b"\0compaction\0" + craw)  # a new compaction alone is a change too
    digest = sha.hexdigest()
    unknown = _unknown(doc, compaction)
    same = (state is not None and state.get("v") == STATE_VERSION and state.get("sha") == digest
            and offset == len(raw))
    yield Resumable(len(raw), {"v": STATE_VERSION, "sha": digest, "unknown": unknown})
    for kind, version, n in unknown:  # counted again on every read: the cursor keeps the total
        for _ in range(n):
            yield Unknown(kind, version)
    if same:
        return
    at = cline_compaction.place(compaction, len(doc["messages"])) if compaction is not None else -1
    for i, obj in enumerate(doc["messages"]):
        if i == at and compaction is not None:
            yield FoundMessage(session.id, cline_compaction.message_of(compaction, doc["messages"]))
        if not isinstance(obj, dict):
            yield Problem(None, f"messages[{i}] is not an object, skipped")
            continue
        yield FoundMessage(session.id, message(obj))
    if compaction is not None and at == len(doc["messages"]):
        yield FoundMessage(session.id, cline_compaction.message_of(compaction, doc["messages"]))


def _compaction(path: Path, session: Session) -> tuple[dict[str, Any] | None, bytes | None]:
    """The session's compaction file (a root session's only) and its bytes, when there is one
    that reads as one (``cline_compaction``)."""
    manifest = session.extra.get("manifest")
    if not isinstance(manifest, dict) or not session.native_id:
        return None, None
    cpath = cline_compaction.path_of(manifest, path.parent, session.native_id)
    try:
        craw = cpath.read_bytes()
    except OSError:
        return None, None
    try:
        doc = jsonline.loads(craw)
    except (ValueError, RecursionError):
        return None, craw
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list) or doc.get(
            "conversation_id", session.native_id) != session.native_id:
        return None, craw
    return doc, craw


def _version(doc: Mapping[str, Any]) -> str | None:
    origin = doc.get("origin")
    v = origin.get("version") if isinstance(origin, dict) else None
    return f"cline {v}" if isinstance(v, str) else None


def _unknown(doc: Mapping[str, Any], compaction: Mapping[str, Any] | None = None) -> list[list[Any]]:
    """[kind, version, count] of what Cline 3.0.65 does not write: top-level keys, block types."""
    counts: dict[str, int] = {}
    for k in doc:
        if k not in FILE_KEYS:
            counts[f"file/{k}"] = counts.get(f"file/{k}", 0) + 1
    for k in cline_compaction.unknown_keys(compaction or {}):
        counts[k] = counts.get(k, 0) + 1
    for m in doc["messages"]:
        role = m.get("role") if isinstance(m, dict) else None
        if isinstance(m, dict) and (not isinstance(role, str) or role not in ("user", "assistant")):
            counts[f"role/{role}"] = counts.get(f"role/{role}", 0) + 1
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            kind = b.get("type") if isinstance(b, dict) else None
            if not isinstance(kind, str) or kind not in BLOCK_TYPES:
                counts[f"block/{kind}"] = counts.get(f"block/{kind}", 0) + 1
    version = _version(doc)
    return [[k, version, n] for k, n in sorted(counts.items())]


def _session(path: Path, doc: Mapping[str, Any]) -> Session:
    native = doc.get("sessionId") if isinstance(doc.get("sessionId"), str) else None
    native = native or path.name[: -len(MESSAGES_SUFFIX)]
    msgs = [m for m in doc["messages"] if isinstance(m, dict)]
    stamps = [m["ts"] for m in msgs if isinstance(m.get("ts"), int) and not isinstance(m["ts"], bool)]
    folder = path.parent
    manifest = manifest_of(folder)
    own = manifest is not None and manifest.get("session_id") == native
    created = created_of(native)
    if created is None and own and manifest is not None:
        created = from_iso(manifest.get("started_at"))
    if created is None and stamps:
        created = min(stamps)
    header = {k: (None if k == "messages" else v) for k, v in doc.items()}
    extra: dict[str, Any] = {"file": header}
    if own:
        extra["manifest"] = manifest
    parent_id = None
    origin = _dict(doc.get("origin"))
    parent_native = origin.get("parentThreadId") if isinstance(origin.get("parentThreadId"), str) else None
    if not own and parent_native:
        parent_id = session_id_for(name, parent_native, created_of(parent_native))
        extra["parent_native_id"] = parent_native
        call = _spawn_call(folder / f"{parent_native}{MESSAGES_SUFFIX}", msgs)
        if call:
            extra["parent_call_id"] = call
    meta = _dict(manifest.get("metadata")) if manifest else {}
    git = _dict(meta.get("git"))
    models = [m["modelInfo"]["id"] for m in msgs if m.get("role") == "assistant"
              and isinstance(m.get("modelInfo"), dict) and isinstance(m["modelInfo"].get("id"), str)]
    model = models[-1] if models else (manifest.get("model") if manifest else None)
    updated = from_iso(doc.get("updated_at")) if isinstance(doc.get("updated_at"), str) else None
    return Session(
        id=session_id_for(name, native, created), agent=name, native_id=native,
        title=meta.get("title") if own and isinstance(meta.get("title"), str) else None,
        created_at=created, updated_at=updated or (max(stamps) if stamps else None),
        parent_id=parent_id, cwd=_cwd(manifest) if manifest else None,
        branch=git.get("branch") if isinstance(git.get("branch"), str) else None,
        model=model if isinstance(model, str) else None, extra=extra)


def _session_of_manifest(manifest: Mapping[str, Any]) -> Session:
    native = str(manifest["session_id"])
    created = created_of(native) or from_iso(manifest.get("started_at"))
    meta = _dict(manifest.get("metadata"))
    return Session(id=session_id_for(name, native, created), agent=name, native_id=native,
                   title=meta.get("title") if isinstance(meta.get("title"), str) else None,
                   created_at=created, cwd=_cwd(manifest),
                   model=manifest.get("model") if isinstance(manifest.get("model"), str) else None,
                   extra={"manifest": dict(manifest)})


def _spawn_call(parent_file: Path, msgs: Sequence[Mapping[str, Any]]) -> str | None:
    """The parent's ``spawn_agent`` call that started this sub-agent: the one whose task is the
    sub-agent's first prompt."""
    first = next((m for m in msgs if m.get("role") == "user"), None)
    content = first.get("content") if first else None
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"] if (
        isinstance(content, list)) else [content]
    doc = _load(parent_file) if texts else None
    found = doc.get("messages") if isinstance(doc, dict) else None
    for m in found if isinstance(found, list) else []:
        blocks = m.get("content") if isinstance(m, dict) else None
        for b in blocks if isinstance(blocks, list) else []:
            if (isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "spawn_agent"
                    and isinstance(b.get("input"), dict) and b["input"].get("task") in texts):
                return str(b.get("id"))
    return None


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as a Cline session folder that ``cline --acp`` (``session/load``) resumes."""
    from oxide_git.agents.cline.export import export as _export

    return _export(session, messages, env)
