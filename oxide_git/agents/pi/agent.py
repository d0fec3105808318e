"""pi sessions (``<agent dir>/sessions/--<cwd>--/<ts>_<uuid>.jsonl``): discover and parse.

A pi session file is a tree: each entry names its parent (``id`` / ``parentId``), and pi continues
the branch that ends at the file's last entry. Branching in place (``/tree``: going back to an
earlier entry and going on from there) appends entries whose parent is not the last one. Read in
file order, the first chain is the session itself (pi's id); each entry that hangs on anything but
the tip of a chain read so far starts a branch, which is a fork of the chain it left: a session of
its own (native id ``<pi id>/<first entry id>``) holding the path from the root (the same entries,
read again from the file) and what follows on it. ``extra["forked_from"]`` names the chain it
left, so the import links it there at the last entry they share. A file made by ``pi --fork`` or
``/fork`` (its header names a ``parentSession``) is linked to that session the same way.

Streaming and incremental: one entry per line, a ``Resumable`` before each; the state is the
chains' tips and what their sessions show, so it stays small however long the file. Entries
become messages in ``pi_entries``; export lives in ``pi_export``.
"""

from __future__ import annotations

import os
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
    emit,
    jsonline,
)
from oxide_git.agents.pi.entries import KNOWN, ROLES, message_of
from oxide_git.agents.pi.store import (
    agent_dir as agent_dir,
)
from oxide_git.agents.pi.store import (
    encode_cwd as encode_cwd,
)
from oxide_git.agents.pi.store import (
    flat_dirs as flat_dirs,
)
from oxide_git.agents.pi.store import (
    name as name,
)
from oxide_git.agents.pi.store import (
    session_dir as session_dir,
)
from oxide_git.core.model import Message, Session, from_iso, session_id_for

STATE_VERSION = 1
FILE_PATTERNS = ("*.jsonl",)
_SHOWN = ("id", "native", "title", "cwd", "model", "extra", "created", "updated")
_shown_but_time = emit.getter(_SHOWN)


# ---------------------------------------------------------------- where pi keeps sessions


def watch_roots(env: AgentEnv) -> list[Path]:
    return [agent_dir(env) / "sessions", *flat_dirs(env)]


def header_of(path: Path) -> dict[str, Any] | None:
    """A session file's first line, when it is pi's session header."""
    try:
        with path.open("rb") as f:
            first = f.readline(1 << 16)
        obj = jsonline.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str):
        return obj
    return None


def discover(env: AgentEnv) -> list[Path]:
    """The session files whose header's ``cwd`` lies in a worktree."""
    prefixes = [encode_cwd(str(w))[:-2] for w in env.worktrees]
    out: list[Path] = []
    root = agent_dir(env) / "sessions"
    if root.is_dir():
        for d in sorted(root.iterdir()):
            if d.is_dir() and any(d.name == p + "--" or d.name.startswith(p + "-") for p in prefixes):
                out += sorted(d.glob("*.jsonl"))
    for flat in flat_dirs(env):
        if flat.is_dir():
            out += sorted(flat.glob("*.jsonl"))
    seen: set[Path] = set()
    mine = []
    for p in out:
        if p in seen or not p.is_file():
            continue
        seen.add(p)
        h = header_of(p)
        if h is not None and env.belongs(h.get("cwd") if isinstance(h.get("cwd"), str) else None):
            mine.append(p)
    return mine


# ---------------------------------------------------------------- parsing

def _forked_from(header: Mapping[str, Any]) -> str | None:
    """The pi id of the session a ``--fork`` / ``/fork`` file was made from (its file's name)."""
    parent = header.get("parentSession")
    if not isinstance(parent, str) or not parent:
        return None
    stem = os.path.basename(parent)
    stem = stem[:-6] if stem.endswith(".jsonl") else stem
    return stem.rpartition("_")[2] or None


class _Chains:
    """Which chain each entry continues: the one whose tip is its parent, else a new one (a
    branch, keyed by its first entry's id). Run once over the whole file by ``parse`` and again,
    from the start, when a branch needs the entries before it (``_Parser.scan``)."""

    def __init__(self, tip_of: Mapping[str, str | None] | None = None, last: str | None = None) -> None:
        self.tip_of: dict[str, str | None] = dict(tip_of or {})
        self.tips = {t: k for k, t in self.tip_of.items() if t}
        self.last = last

    def assign(self, eid: str | None, parent: Any, line: int) -> tuple[str, bool]:
        """(the entry's chain, whether it starts that chain)."""
        if not self.tip_of:
            key, new = "main", True
        elif eid is None:  # entries without ids (version 1): one chain in file order
            key, new = self.last or "main", False
        elif isinstance(parent, str) and parent in self.tips:
            key, new = self.tips[parent], False
        else:
            key, new = (eid if eid not in self.tip_of else f"{eid}@{line}"), True
        old = self.tip_of.get(key)
        if old:
            self.tips.pop(old, None)
        self.tip_of[key] = eid
        if eid is not None:
            self.tips[eid] = key
        self.last = key
        return key, new


class _Parser:
    def __init__(self, path: Path, state: Mapping[str, Any] | None) -> None:
        st = dict(state or {})
        self.path = path
        self.line: int = int(st.get("line", 0))
        self.header: dict[str, Any] | None = st.get("header")
        self.streams: dict[str, dict[str, Any]] = {k: dict(v) for k, v in st.get("streams", {}).items()}
        self.chains = _Chains({k: v.get("tip") for k, v in self.streams.items()}, st.get("last"))
        self.index: dict[str, tuple[int, Any, str]] | None = None  # built when a branch needs it

    def state(self) -> dict[str, Any]:
        return {"v": STATE_VERSION, "line": self.line, "header": self.header, "last": self.chains.last,
                "streams": {k: {**v, "tip": self.chains.tip_of.get(k)} for k, v in self.streams.items()}}

    def run(self, offset: int) -> Iterator[Event]:
        lines = jsonline.Lines(self.path, offset, self.line)
        for start, obj in lines:
            self.line = lines.line
            if isinstance(obj, Problem):
                yield obj
                continue
            if self.header is None:
                if obj.get("type") == "session" and isinstance(obj.get("id"), str):
                    self.header = obj
                    continue
                yield Problem(self.line, "no pi session header (pi ignores such a file)")
                return
            yield Resumable(start, self.state())
            yield from self.entry(obj, start)
        self.line, pos = lines.line, lines.pos
        for key in self.streams:
            found = self.session_event(key, with_time=True)
            if found is not None:
                yield found
        yield Resumable(pos, self.state())

    # one entry ------------------------------------------------------------------------------
    def entry(self, obj: dict[str, Any], start: int) -> Iterator[Event]:
        kind = obj.get("type")
        inner = obj.get("message")
        if not isinstance(kind, str) or kind not in KNOWN or (
                kind == "message" and (not isinstance(inner, dict) or not isinstance(inner.get("role"), str)
                                      or inner["role"] not in ROLES)):
            v = self.header.get("version") if self.header else None
            yield Unknown(str(kind), f"pi session v{v}" if v is not None else None)
        eid = obj.get("id") if isinstance(obj.get("id"), str) else None
        parent = obj.get("parentId")
        msg = message_of(obj)
        copies: list[Message] = []
        if self.streams and eid is not None and not (isinstance(parent, str) and parent in self.chains.tips):
            copies = self.branch_path(parent, start)  # read before the chains move on
        key, new = self.chains.assign(eid, parent, self.line)
        if new:
            self.streams[key] = self._stream(key, parent, msg.created_at)
        if self.index is not None and eid is not None:
            self.index[eid] = (start, parent, key)
        acc = self.streams[key]
        for m in copies:
            self.note(acc, m, None)
        self.note(acc, msg, obj)
        found = self.session_event(key, with_time=False)
        if found is not None:
            yield found
        for m in copies:
            yield FoundMessage(acc["id"], m)
        yield FoundMessage(acc["id"], msg)

    def branch_path(self, parent: Any, start: int) -> list[Message]:
        """The entries from the root to ``parent``, read again: a branch repeats them."""
        index = self.scan(start)
        path: list[str] = []
        cur, seen = parent, set()
        while isinstance(cur, str) and cur in index and cur not in seen:
            seen.add(cur)
            path.append(cur)
            cur = index[cur][1]
        with self.path.open("rb") as f:
            out = []
            for i in reversed(path):
                f.seek(index[i][0])
                out.append(message_of(jsonline.loads(f.readline())))
        return out

    def _stream(self, key: str, parent: Any, created: int | None) -> dict[str, Any]:
        h = self.header or {}
        hid = str(h.get("id") or "")
        extra: dict[str, Any] = {"header": h}
        if key == "main":
            native = hid
            created = from_iso(h.get("timestamp")) if isinstance(h.get("timestamp"), str) else created
            if _forked_from(h):
                extra["forked_from"] = _forked_from(h)
        else:
            native = f"{hid}/{key}"
            index = self.index or {}
            owner = index[parent][2] if isinstance(parent, str) and parent in index else "main"
            extra.update({"forked_from": self.streams[owner]["native"],
                          "branch_of": parent if isinstance(parent, str) else None})
        return {"id": session_id_for(name, native, created), "native": native, "title": None,
                "model": None, "extra": extra, "cwd": h.get("cwd") if isinstance(h.get("cwd"), str) else None,
                "created": created, "updated": None, "emitted": None}

    def scan(self, end: int) -> dict[str, tuple[int, Any, str]]:
        """id -> (offset, parent, chain) of every entry before ``end`` (chains assigned again from
        the file's start, as ``parse`` assigned them)."""
        if self.index is not None:
            return self.index
        index: dict[str, tuple[int, Any, str]] = {}
        chains = _Chains()
        pos, line, seen_header = 0, 0, False
        with self.path.open("rb", buffering=1 << 20) as f:
            for raw in f:
                if pos >= end:
                    break
                start, pos = pos, pos + len(raw)
                line += 1
                try:
                    obj = jsonline.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(obj, dict):
                    continue
                if not seen_header:
                    seen_header = True
                    continue
                eid = obj.get("id") if isinstance(obj.get("id"), str) else None
                key, _new = chains.assign(eid, obj.get("parentId"), line)
                if eid is not None:
                    index[eid] = (start, obj.get("parentId"), key)
        self.index = index
        return index

    # what a chain's session shows -------------------------------------------------------------
    def note(self, acc: dict[str, Any], m: Message, obj: Mapping[str, Any] | None) -> None:
        ts = m.created_at
        if ts is not None:
            if acc["created"] is None:
                acc["created"] = ts
            if acc["updated"] is None or ts > acc["updated"]:
                acc["updated"] = ts
        if m.model:
            acc["model"] = m.model
        if obj is None:
            return
        if acc["title"] is None and "/" in acc["native"] and m.role == "user" and (
                not m.is_harness()) and obj.get("type") == "message":
            acc["title"] = m.text().strip().split("\n")[0][:200] or None  # a branch: its own first prompt
        if obj.get("type") == "model_change" and isinstance(obj.get("modelId"), str):
            acc["model"] = obj["modelId"]
        elif obj.get("type") == "session_info" and "main" in self.streams:
            title = obj.get("name")
            self.streams["main"]["title"] = title.strip() or None if isinstance(title, str) else None

    def session_event(self, key: str, with_time: bool) -> FoundSession | None:
        acc = self.streams[key]
        snap = emit.changed(acc, _SHOWN, _shown_but_time, with_time)
        if snap is None:
            return None
        return FoundSession(Session(
            id=snap["id"], agent=name, native_id=snap["native"], title=snap["title"],
            created_at=snap["created"], updated_at=snap["updated"], cwd=snap["cwd"],
            model=snap["model"], extra=dict(snap["extra"])))


def parse(path: Path, *, offset: int = 0, state: Mapping[str, Any] | None = None) -> Iterator[Event]:
    """Events for the sessions in one pi file: its first chain and each branch (see above)."""
    yield from _Parser(Path(path), state if offset else None).run(offset)


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    """``session`` as a pi session file that ``pi --session <id>`` continues."""
    from oxide_git.agents.pi.export import export as _export

    return _export(session, messages, env)
