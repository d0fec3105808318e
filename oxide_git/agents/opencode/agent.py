"""OpenCode (sst/opencode, anomalyco/opencode): the JSON storage tree, opencode.db and export files.

Three shapes parse (formats.md section 3):

- the legacy storage tree ``$XDG_DATA_HOME/opencode/storage/``: ``parse`` takes a session info file
  ``session/<projectID>/<sid>.json`` and reads ``message/<sid>/*.json`` and ``part/<mid>/*.json``;
- the SQLite ``opencode.db`` (read-only ``mode=ro``): every session in it, or, with the optional
  keyword ``env``, only the sessions of that project. ``discover`` returns the db path once when it
  holds at least one session of the project; **the importer must pass ``env=`` when it parses a db
  path**, otherwise sessions of other projects would be imported too;
- an ``opencode export`` file ``{info, messages: [{info, parts}]}``.

OpenCode rewrites its files in place, so there are no byte offsets: ``offset`` is ignored and a
single ``Resumable(0, ...)`` ends the stream. Output is deterministic, so re-parsing gives the same
events and the store sees nothing changed.

Mapping: native fields are kept in ``Part.data`` next to the normalized ones (``id`` is the native
part id; ``sessionID``/``messageID`` are dropped, they are implied), so ``opencode_export`` can
write the same objects back. A ``tool`` part becomes a ``tool_call`` (``state`` without
input/output/error) followed by its ``tool_result``. ``compaction`` gets the text of its summary
message (the assistant message with ``summary: true`` answering it) and ``summary_message_id``.
step-start, step-finish, snapshot, agent, subtask, retry and unknown types are ``other`` parts
whose ``raw`` is the native part.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

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
from oxide_git.core.model import Message, Part, PartType, Session, session_id_for

name = "opencode"

_SQLITE_MAGIC = b"SQLite format 3\x00"
_MSG_COLUMNS = ("modelID", "tokens", "cost")  # message info keys that have a column of their own
ROW_KEY = "oxide_row"  # db row times and JSON key order of a message or part (opencode_db._row_meta)
_PART_TYPES = frozenset({"text", "reasoning", "tool", "file", "patch", "compaction", "step-start",
                         "step-finish", "snapshot", "agent", "subtask", "retry"})  # OpenCode 1.18


def data_home(env: AgentEnv) -> Path:
    """``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``)."""
    xdg = env.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else env.home / ".local" / "share") / "opencode"


FILE_PATTERNS = ("*.json", "opencode*.db")


def watch_roots(env: AgentEnv) -> list[Path]:
    return [data_home(env)]


def expand_dir(path: Path) -> list[Path] | None:
    """A data folder, its ``storage``, or a ``storage`` folder: the session files under it."""
    if (path / "storage" / "session").is_dir():
        path = path / "storage"
    if (path / "session").is_dir():
        return sorted((path / "session").glob("*/*.json"))
    return None


# ---------------------------------------------------------------- discover


def discover(env: AgentEnv) -> list[Path]:
    root = data_home(env)
    found: list[Path] = []
    sessions = root / "storage" / "session"
    if sessions.is_dir():
        for project in sorted(p for p in sessions.iterdir() if p.is_dir()):
            for f in sorted(project.glob("*.json")):
                if env.project_id is not None and project.name == env.project_id:
                    found.append(f)
                    continue
                info = _load(f)
                if isinstance(info, dict) and env.belongs(_str(info.get("directory"))):
                    found.append(f)
    dbs = sorted(root.glob("opencode*.db")) if root.is_dir() else []
    if dbs:
        from oxide_git.agents.opencode.db import has_project

        found += [db for db in dbs if has_project(db, env)]
    return found


# ---------------------------------------------------------------- parse


def parse(
    path: Path,
    *,
    offset: int = 0,
    state: Mapping[str, Any] | None = None,
    env: AgentEnv | None = None,
) -> Iterator[Event]:
    """Events for the sessions in ``path`` (storage session file, opencode.db or export file)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError as e:
        yield Problem(None, f"{path}: cannot read ({e.strerror or e})")
        yield Resumable(0, {"format": "missing"})
        return
    if head == _SQLITE_MAGIC:
        from oxide_git.agents.opencode.db import parse_db

        yield from parse_db(path, env)
        yield Resumable(0, {"format": "db"})
        return
    doc = _load(path)
    if doc is None:
        yield Problem(None, f"{path}: not JSON, skipped")
        fmt = "invalid"
    elif isinstance(doc, dict) and "messages" in doc:
        fmt = "export"
        yield from _parse_export(path, doc)
    elif isinstance(doc, dict) and (
        path.parent.parent.name == "session" or str(doc.get("id", "")).startswith("ses_")
    ):
        fmt = "storage"
        yield from _parse_storage(path, doc)
    else:
        yield Problem(None, f"{path}: not an OpenCode session, skipped")
        fmt = "invalid"
    yield Resumable(0, {"format": fmt})


def _parse_export(path: Path, doc: dict[str, Any]) -> Iterator[Event]:
    info = doc.get("info")
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        yield Problem(None, f"{path}: export without session info, skipped")
        return
    raw = doc.get("messages")
    entries: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for i, m in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(m, dict) or not isinstance(m.get("info"), dict):
            yield Problem(None, f"{path}: messages[{i}] is not a message, skipped")
            continue
        parts = m.get("parts")
        good = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        if not isinstance(parts, list) or len(good) != len(parts):
            yield Problem(None, f"{path}: messages[{i}] has malformed parts, skipped them")
        entries.append((m["info"], good))
    yield from _session_events(info, entries, None, {"format": "export", "path": str(path)})


def _parse_storage(path: Path, info: dict[str, Any]) -> Iterator[Event]:
    sid = path.stem
    root = path.parent.parent.parent
    info = {**info, "id": sid}
    entries: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for mf in sorted((root / "message" / sid).glob("*.json")):
        m = _load(mf)
        if not isinstance(m, dict):
            yield Problem(None, f"{mf}: not JSON, skipped")
            continue
        parts: list[dict[str, Any]] = []
        for pf in sorted((root / "part" / mf.stem).glob("*.json")):
            p = _load(pf)
            if not isinstance(p, dict):
                yield Problem(None, f"{pf}: not JSON, skipped")
                continue
            parts.append({**p, "id": pf.stem})
        entries.append(({**m, "id": mf.stem}, parts))
    parent_created = None
    parent = info.get("parentID")
    if isinstance(parent, str) and parent:
        cands = [path.parent / f"{parent}.json", *sorted(root.glob(f"session/*/{parent}.json"))]
        for cand in cands:
            pinfo = _load(cand) if cand.is_file() else None
            if isinstance(pinfo, dict):
                parent_created = _int(_dict(pinfo.get("time")).get("created"))
                break
    yield from _session_events(
        info, entries, parent_created, {"format": "storage", "path": str(path)}
    )


# ---------------------------------------------------------------- mapping


def _session_events(
    info: dict[str, Any],
    entries: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    parent_created: int | None,
    source: dict[str, Any],
) -> Iterator[Event]:
    native = str(info["id"])
    t = _dict(info.get("time"))
    created = _int(t.get("created"))
    sid = session_id_for(name, native, created)
    entries = sorted(entries, key=lambda e: (_int(_dict(e[0].get("time")).get("created")) or 0,
                                             str(e[0].get("id"))))
    messages: list[Message] = []
    for i, (minfo, parts) in enumerate(entries):
        try:
            messages.append(_message(minfo, parts, entries, i))
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as e:
            yield Problem(None, f"{source['path']}: message {minfo.get('id')!r} skipped ({e})")
    messages = _mark_compacted(messages)
    extra = {k: v for k, v in info.items() if k not in ("id", "title", "directory", "parentID")}
    parent = info.get("parentID")
    if isinstance(parent, str) and parent:
        extra["parent_native_id"] = parent
    models = [m.model for m in messages if m.model and m.role == "assistant"]
    session = Session(
        id=sid,
        agent=name,
        native_id=native,
        title=_str(info.get("title")),
        created_at=created,
        updated_at=_int(t.get("updated")),
        parent_id=(
            session_id_for(name, parent, parent_created)
            if isinstance(parent, str) and parent and parent_created is not None
            else None
        ),
        cwd=_str(info.get("directory")),
        model=models[-1] if models else None,
        source=source,
        extra=extra,
    )
    yield FoundSession(session)
    version = _str(info.get("version"))
    for m in messages:
        yield from _unknowns(m, version)
        yield FoundMessage(sid, m)


def _unknowns(m: Message, version: str | None) -> Iterator[Unknown]:
    """Format drift: a role or part type OpenCode 1.18 does not write (the record is kept whole)."""
    if m.role not in ("user", "assistant"):
        yield Unknown(f"message/{m.role}", version)
    for p in m.parts:
        if p.type == PartType.OTHER and p.get("kind") not in _PART_TYPES:
            yield Unknown(f"part/{p.get('kind')}", version)


def _message(
    info: dict[str, Any],
    parts: list[dict[str, Any]],
    entries: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]],
    index: int,
) -> Message:
    role = info["role"] if isinstance(info.get("role"), str) else "assistant"
    model = _str(info.get("modelID")) or _str(_dict(info.get("model")).get("modelID"))
    tokens = info.get("tokens") if isinstance(info.get("tokens"), dict) else None
    cost = info.get("cost")
    cost = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    kept = {"modelID": isinstance(info.get("modelID"), str), "tokens": tokens is not None,
            "cost": cost is not None}
    extra = {k: v for k, v in info.items()
             if k not in ("id", "sessionID", "role") and not (k in _MSG_COLUMNS and kept[k])}
    mid = info.get("id")
    out: list[Part] = []
    for p in sorted(parts, key=lambda p: str(p.get("id"))):
        out.extend(_parts(p, entries, index, mid))
    return Message(
        role=role,
        parts=tuple(out),
        created_at=_int(_dict(info.get("time")).get("created")),
        native_id=mid if isinstance(mid, str) else None,
        model=model,
        usage=tokens,
        cost=cost,
        extra=extra,
    )


def _parts(
    p: dict[str, Any],
    entries: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]],
    index: int,
    mid: Any,
) -> list[Part]:
    kind = p.get("type")
    rest = {k: v for k, v in p.items() if k not in ("type", "sessionID", "messageID")}
    if kind in ("text", "reasoning") and isinstance(p.get("text"), str):
        return [Part(PartType.TEXT if kind == "text" else PartType.REASONING, rest)]
    if kind == "tool" and isinstance(p.get("state"), dict):
        state = dict(p["state"])
        call_id, tool = rest.pop("callID", None), rest.pop("tool", None)
        rest.pop("state")
        inp = state.pop("input", None)
        result: Any = None
        has_result = "output" in state or "error" in state
        if has_result:
            result = state.pop("error") if "error" in state else state.pop("output")
        call = Part(PartType.TOOL_CALL, {**rest, "call_id": call_id, "name": tool, "input": inp,
                                          "state": state})
        if not has_result:
            return [call]
        res: dict[str, Any] = {"call_id": call_id, "output": result,
                               "is_error": state.get("status") == "error"}
        if _dict(state.get("time")).get("compacted") is not None:
            res["compacted"] = True
        return [call, Part(PartType.TOOL_RESULT, res)]
    if kind == "file" and isinstance(p.get("url", ""), str):
        return [Part(PartType.FILE, {**rest, "path": _file_path(p)})]
    if kind == "patch" and isinstance(p.get("hash", ""), str):
        return [Part(PartType.PATCH, {**rest, "text": p.get("hash", "")})]
    if kind == "compaction":
        summary, summary_id = _summary_for(mid, entries, index)
        return [Part(PartType.COMPACTION, {**rest, "summary": summary, "replaces": None,
                                            "summary_message_id": summary_id})]
    return [Part.other(str(kind), rest)]


def _summary_for(
    mid: Any, entries: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]], index: int
) -> tuple[str, str | None]:
    """The text and id of the summary message that answers the compaction request ``mid``."""
    for info, parts in entries[index + 1:]:
        if info.get("role") == "assistant" and info.get("summary") is True and info.get("parentID") == mid:
            texts = sorted((p for p in parts if p.get("type") == "text"), key=lambda p: str(p.get("id")))
            text = "\n".join(str(p.get("text")) for p in texts if not p.get("synthetic"))
            return text, _str(info.get("id"))
    return "", None


def _mark_compacted(messages: list[Message]) -> list[Message]:
    """OpenCode's filterCompacted: a compaction request answered by a finished summary hides
    everything before it (or before its ``tail_start_id``)."""
    done = {m.extra.get("parentID") for m in messages if m.role == "assistant"
            and m.extra.get("summary") is True and m.extra.get("finish") and not m.extra.get("error")}
    boundary = 0
    for i, m in enumerate(messages):
        comp = [p for p in m.parts if p.type == PartType.COMPACTION]
        if m.role == "user" and comp and m.native_id in done:
            tail = comp[0].get("tail_start_id")
            boundary = next((j for j, x in enumerate(messages) if tail and x.native_id == tail), i)
    return [replace(m, compacted=True) if i < boundary else m for i, m in enumerate(messages)]


# ---------------------------------------------------------------- helpers


def _file_path(p: Mapping[str, Any]) -> str:
    src = _dict(p.get("source"))
    if isinstance(src.get("path"), str):
        return src["path"]
    url = p.get("url")
    if isinstance(url, str) and url.startswith("file://"):
        return unquote(urlparse(url).path)
    return _str(p.get("filename")) or (url if isinstance(url, str) and len(url) < 512 else "")


def _load(path: Path) -> Any:
    try:
        return _loads(path.read_bytes())
    except OSError:
        return None


def _loads(raw: Any) -> Any:
    if not isinstance(raw, bytes | str):
        return None
    try:
        return jsonline.loads(raw)
    except (ValueError, RecursionError):
        return None


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _str(x: Any) -> str | None:
    return x if isinstance(x, str) else None


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x == x and abs(x) < 2**62:
        return int(x)
    return None


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    from oxide_git.agents.opencode.export import export as _export

    return _export(session, messages, env)


def write_database(path: Path, rows: Any, *, rewound: bool = False) -> str:
    """Apply an export's ``databases`` entry (``opencode_write``): written, unchanged or kept."""
    from oxide_git.agents.opencode.write import write_database as _write

    return _write(path, rows, rewound=rewound)

