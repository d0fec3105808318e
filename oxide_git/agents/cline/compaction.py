"""Cline's compaction file (``<id>.compaction.json``, the manifest's ``compaction_path``) as one
compaction message of the session, and that message as the same file again.

Cline 3.0.65 compacts (``--compaction agentic``, its default, when a request reaches 90% of the
model's input budget) without touching the messages file: it writes the compacted history to a
file of its own, ``{version, updated_at, conversation_id, source_message_count,
source_prefix_hash, source_last_message_key, messages}``, whose ``messages`` are a summary message
(``role: user``, ``metadata.kind: "compaction_summary"``) and the recent messages it kept, copied
from the messages file. Its model is then sent those messages, then the messages file's from
``source_message_count`` on. So the compaction message sits at ``source_message_count`` of the
session (after the messages it summarised, before those that came after it); its ``compaction``
part holds the summary text the model sees, ``kept`` (the ids of the kept messages) and the file
itself, each kept message that is the messages file's own as a reference to it (``{"ref": id}``),
so that ``cline_export`` writes the file back byte for byte. Cline keeps one such file per session
(a later compaction replaces it), so only the latest compaction is in Cline's files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oxide_git.core.model import Message, Part, PartType, Role, from_iso

SUFFIX = ".compaction.json"
# Top-level keys of a compaction file (Cline 3.0.65); any other is kept and reported as drift.
KEYS = frozenset({"version", "updated_at", "conversation_id", "source_message_count",
                  "source_prefix_hash", "source_last_message_key", "messages"})
KIND = "cline_compaction"  # the compaction part's ``kind``: this module's


def path_of(manifest: Mapping[str, Any] | None, folder: Path, native_id: str) -> Path:
    """Where a session's compaction is: the manifest's ``compaction_path`` (absolute, where Cline
    reads it), else, or when that file is gone (a store moved or copied), the session folder's
    ``<id>.compaction.json`` (Cline's own place for it)."""
    raw = manifest.get("compaction_path") if manifest else None
    named = Path(raw.strip()) if isinstance(raw, str) and raw.strip() else None
    return named if named is not None and named.is_file() else folder / f"{native_id}{SUFFIX}"


def _summary_text(entry: Mapping[str, Any]) -> str:
    content = entry.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text")) for b in content or [] if isinstance(b, dict)
                     and b.get("type") == "text" and isinstance(b.get("text"), str))


def is_summary(entry: Any) -> bool:
    meta = entry.get("metadata") if isinstance(entry, dict) else None
    return isinstance(meta, dict) and meta.get("kind") == "compaction_summary"


def unknown_keys(doc: Mapping[str, Any]) -> list[str]:
    return sorted(f"compaction/{k}" for k in doc if k not in KEYS)


def place(doc: Mapping[str, Any], count: int) -> int:
    """Where the compaction message goes among ``count`` messages: ``source_message_count``."""
    n = doc.get("source_message_count")
    if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= count:
        return n
    return count


def message_of(doc: Mapping[str, Any], canonical: Sequence[Any]) -> Message:
    """The compaction message of a compaction file ``doc`` (its ``messages`` a list)."""
    by_id = {m["id"]: m for m in canonical if isinstance(m, dict) and isinstance(m.get("id"), str)}
    entries: list[Any] = []
    kept: list[str] = []
    summary: list[str] = []
    created: int | None = None
    for e in doc["messages"]:
        mid = e.get("id") if isinstance(e, dict) else None
        if isinstance(mid, str) and by_id.get(mid) == e:
            entries.append({"ref": mid})
            kept.append(mid)
            continue
        entries.append(e)
        if is_summary(e):
            summary.append(_summary_text(e))
            at = e["metadata"].get("generatedAt")
            if created is None and isinstance(at, int) and not isinstance(at, bool):
                created = at
        elif isinstance(mid, str):
            kept.append(mid)
    header = {k: (None if k == "messages" else v) for k, v in doc.items()}
    if created is None and isinstance(doc.get("updated_at"), str):
        created = from_iso(doc["updated_at"])
    part = Part.compaction("\n\n".join(summary), kind=KIND, kept=kept, file=header, entries=entries)
    return Message(role=Role.SYSTEM, parts=(part,), created_at=created)


def part_of(m: Message) -> Part | None:
    """The compaction part this module made, if ``m`` is such a message."""
    for p in m.parts:
        if p.type == PartType.COMPACTION and p.get("kind") == KIND and isinstance(p.get("file"), dict):
            return p
    return None


def document(p: Part, canonical: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The compaction file of part ``p`` (made by ``message_of``), each reference resolved
    against ``canonical`` (the messages file's messages as written)."""
    by_id = {m["id"]: m for m in canonical if isinstance(m.get("id"), str)}
    out: list[Any] = []
    for e in p.get("entries") or []:
        ref = e.get("ref") if isinstance(e, dict) and len(e) == 1 else None
        out.append(by_id.get(ref, {}) if isinstance(ref, str) else e)
    doc = dict(p.get("file"))
    doc["messages"] = out
    return doc
