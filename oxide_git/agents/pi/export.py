"""Sessions as pi session files that ``pi --session <id>`` continues: the inverse of ``pi.parse``.

The file is ``<session dir>/<ts>_<id>.jsonl`` (``pi.session_dir``: the working directory's folder
under ``<agent dir>/sessions``, or pi's flat session folder when one is set), a header line and
one entry per message, each hanging on the one before, so that the branch pi continues (the one
ending at the last entry) is the whole session.

A pi session keeps its id, header and entries: each entry is written back from ``extra["pi"]``
with its content taken from the parts (``pi_entries.entry_of``), so the lines are pi's own. A
branch (a fork oxide made of pi's in-place branch, native id ``<pi id>/<entry>``) becomes a pi
session of its own, with a new id. Any other agent's session is rebuilt (``pi_foreign``): its
tool calls become pi's ``bash`` / ``write`` / ``edit`` / ``read`` where pi has the tool, its
harness context is left out, and ``lost`` names what changed.
"""

from __future__ import annotations

import hashlib
import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.agents.js_json import stringify
from oxide_git.agents.pi.entries import entry_of
from oxide_git.agents.pi.foreign import Rebuild
from oxide_git.agents.pi.store import name, session_dir
from oxide_git.core.model import Message, Session, to_iso

VERSION = 3


def pi_id(session: Session) -> str:
    """A pi-style session id (UUIDv7: its time, then bits of oxide's id) for a session pi did
    not make; the same session always gets the same one."""
    ms = (session.created_at or 0) & 0xFFFFFFFFFFFF
    rand = int.from_bytes(hashlib.sha1(f"oxide:{session.id}".encode()).digest()[:10], "big") >> 6
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64 | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuidlib.UUID(int=value))


def _own_id(session: Session) -> str | None:
    """The pi id a session of pi's goes back under (None for a branch, which pi never named)."""
    nid = session.native_id
    if session.agent != name or not isinstance(nid, str) or "/" in nid:
        return None
    header = session.extra.get("header")
    if isinstance(header, dict) and header.get("id") not in (None, nid):
        return None
    return nid


def file_name(header: dict[str, Any]) -> str:
    """``<timestamp with : and . as ->_<id>.jsonl``, as pi names a new session's file."""
    ts = str(header.get("timestamp") or "").replace(":", "-").replace(".", "-")
    return f"{ts}_{header['id']}.jsonl"


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as one pi session file; see the module docstring."""
    cwd = session.cwd or (str(env.worktrees[0]) if env.worktrees else str(env.home))
    own = _own_id(session)
    native_id = own or pi_id(session)
    held = session.extra.get("header") if session.agent == name else None
    header: dict[str, Any]
    if own and isinstance(held, dict):
        header = {**held, "cwd": cwd} if held.get("cwd") != cwd else dict(held)
    else:
        times = [m.created_at for m in messages if m.created_at is not None]
        created = session.created_at or (times[0] if times else 0)
        header = {"type": "session", "version": VERSION, "id": native_id, "timestamp": to_iso(created),
                  "cwd": cwd}
    rebuild = Rebuild(session, messages, cwd, native=session.agent == name)
    entries: list[dict[str, Any]] = []
    prev: str | None = None
    for m in rebuild.messages:
        entry = entry_of(m) if rebuild.native else None
        made = [entry] if entry is not None else rebuild.entries(m)
        for e in made:
            e = _chained(e, prev, rebuild)
            entries.append(e)
            prev = e.get("id") if isinstance(e.get("id"), str) else prev
    body = "".join(stringify(e) + "\n" for e in [header, *entries]).encode()
    path = session_dir(env, cwd) / file_name(header)
    return Export({path: body}, native_id, ["pi", "--session", native_id], cwd, rebuild.lost())


def _chained(entry: dict[str, Any], prev: str | None, rebuild: Rebuild) -> dict[str, Any]:
    """``entry`` hanging on the entry written before it (its own parent when that is the one)."""
    if "id" not in entry:  # version 1 entries: a chain in file order already
        return entry
    if not isinstance(entry.get("id"), str) or entry["id"] in rebuild.used:
        entry = {**entry, "id": rebuild.new_id()}
    rebuild.used.add(entry["id"])
    if entry.get("parentId") != prev:
        entry = {**entry, "parentId": prev}
    return entry
