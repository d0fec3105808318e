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
from pathlib import Path
from typing import Any

from oxide_git.agents import (
    AgentEnv,
    Event,
    Export,
    Problem,
    Resumable,
)
from oxide_git.agents.opencode.messages import session_events
from oxide_git.agents.opencode.store import ROW_KEY as ROW_KEY
from oxide_git.agents.opencode.store import as_dict, as_int, as_str, load_json
from oxide_git.agents.opencode.store import data_home as data_home
from oxide_git.agents.opencode.store import name as name
from oxide_git.core.model import Message, Session

_SQLITE_MAGIC = b"SQLite format 3\x00"


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
                info = load_json(f)
                if isinstance(info, dict) and env.belongs(as_str(info.get("directory"))):
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
    doc = load_json(path)
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
    yield from session_events(info, entries, None, {"format": "export", "path": str(path)})


def _parse_storage(path: Path, info: dict[str, Any]) -> Iterator[Event]:
    sid = path.stem
    root = path.parent.parent.parent
    info = {**info, "id": sid}
    entries: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for mf in sorted((root / "message" / sid).glob("*.json")):
        m = load_json(mf)
        if not isinstance(m, dict):
            yield Problem(None, f"{mf}: not JSON, skipped")
            continue
        parts: list[dict[str, Any]] = []
        for pf in sorted((root / "part" / mf.stem).glob("*.json")):
            p = load_json(pf)
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
            pinfo = load_json(cand) if cand.is_file() else None
            if isinstance(pinfo, dict):
                parent_created = as_int(as_dict(pinfo.get("time")).get("created"))
                break
    yield from session_events(
        info, entries, parent_created, {"format": "storage", "path": str(path)}
    )


# ---------------------------------------------------------------- mapping


# ---------------------------------------------------------------- helpers


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    from oxide_git.agents.opencode.export import export as _export

    return _export(session, messages, env)


def write_database(path: Path, rows: Any, *, rewound: bool = False) -> str:
    """Apply an export's ``databases`` entry (``opencode_write``): written, unchanged or kept."""
    from oxide_git.agents.opencode.write import write_database as _write

    return _write(path, rows, rewound=rewound)

