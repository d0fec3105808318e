"""What to read of one file and what to keep after: its cursor in the index decides whether it is
unchanged, grown (read from the last restart point its parser gave, with the parser's state) or
new or changed (read whole); once read, the restart point reached becomes its new cursor, with
the commit left at each session's tip (``import_place``: a file whose session was replaced since
is read whole again, even unchanged).

Both halves run in the importing process, whichever process parses the file in between
(``import_worker``), so a file's cursor is only ever written where its sessions were stored.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oxide_git.imports.place import removed, replaced, tips_now
from oxide_git.imports.report import FileReport, count_unknown

if TYPE_CHECKING:
    from oxide_git.store.batch import FileBatch
    from oxide_git.store.context import Context

Resume = tuple[int, Any, dict[str, int]] | None
TAIL_BYTES = 256


@dataclass
class FilePlan:
    """One file to read: from ``offset``, with the parser's ``state`` and the sessions' ``seqs``."""

    agent: str
    path: Path
    key: str  # the resolved path: the cursor's name
    size: int  # the fingerprint its cursor keeps (``fingerprint``)
    mtime_ns: int
    file_size: int  # the file's own size (progress, and how much there is to read)
    cur: dict[str, Any] | None
    report: FileReport
    offset: int = 0
    state: Any = None
    seqs: dict[str, int] = field(default_factory=dict)
    tips: dict[str, str] = field(default_factory=dict)  # the commits its last import left (``import_place``)

    @property
    def new_bytes(self) -> int:
        return self.file_size - self.offset


def plan(ctx: Context, agent: str, path: Path) -> FilePlan | FileReport:
    """What to read of ``path``; a report instead when there is nothing to (unchanged, or gone)."""
    key = str(path.resolve())
    try:
        st = path.stat()
    except OSError as e:
        return FileReport(agent, str(path), "failed", problems=[f"{path}: {e.strerror}"])
    size, mtime_ns = fingerprint(path, st)
    cur = ctx.index.cursor(key)
    earlier = None
    if cur is not None and cur["agent"] != agent:
        earlier, cur = cur, None  # read as another agent's: nothing of it holds for this one
    tips = dict(cur["state"].get("tips") or {}) if cur is not None else {}
    if replaced(ctx, tips):  # a session it wrote was replaced (a pull): whatever the tip lacks comes back
        return FilePlan(agent, path, key, size, mtime_ns, st.st_size, cur,
                        FileReport(agent, str(path), "changed"))
    if cur is not None and cur["size"] == size and cur["mtime_ns"] == mtime_ns:
        return FileReport(agent, str(path), "unchanged")
    if earlier is not None:
        report = FileReport(agent, str(path), "new", earlier_agent=earlier["agent"],
                            earlier_sessions=_still_there(ctx, earlier))
        return FilePlan(agent, path, key, size, mtime_ns, st.st_size, None, report)
    if cur is None:
        kind = "new"
    elif st.st_size >= cur["size"] and cur["offset"] > 0 and same_tail(path, cur) and not removed(ctx, tips):
        return FilePlan(agent, path, key, size, mtime_ns, st.st_size, cur,
                        FileReport(agent, str(path), "grown"), cur["offset"], cur["state"].get("parser"),
                        cur["state"].get("seqs", {}), tips)
    else:
        kind = "changed"  # smaller, rewritten (Copilot's /rewind), or its session removed: read whole again
    return FilePlan(agent, path, key, size, mtime_ns, st.st_size, cur, FileReport(agent, str(path), kind))


def _still_there(ctx: Context, cur: dict[str, Any]) -> list[str]:
    """The sessions an import of the file as another agent's made, that the store still holds."""
    made = list(cur["state"].get("seqs", {}))
    return [r["id"] for r in ctx.index.session_rows(ids=made)] if made else []


def finish(ctx: Context, p: FilePlan, resume: Resume, *, dry_run: bool = False,
           batch: FileBatch | None = None, known_tail: tuple[int, str | None] | None = None) -> FileReport:
    """The file's report once read, and its new cursor (with ``batch``: once its sessions are
    stored). ``known_tail``: (offset, ``tail`` there), as the process that parsed it read it."""
    report = p.report
    grown = report.state == "grown"
    if report.held and not report.sessions:
        report.state = "unchanged"  # only what oxide wrote there itself
    if report.held:
        resume = (0, {}, {})  # read whole again next time: the continuation needs every message
    if not report.sessions and report.state not in ("failed", "unchanged"):
        report.problems.append(f"{p.path}: no {p.agent} session found in it")
        report.state = "failed"
    if not dry_run and report.state != "failed" and resume is not None:
        if known_tail is not None and known_tail[0] == resume[0]:
            digest = known_tail[1]  # read by the process that parsed it
        else:
            digest = tail(p.path, resume[0])
        state = {"parser": dict(resume[1]), "seqs": resume[2], "tail": digest,
                 **count_unknown(p.cur if grown else None, report)}

        def put_cursor(index: Any, offset: int = resume[0]) -> None:
            state["tips"] = tips_now(ctx, resume[2])  # once its writes landed
            with index.write() as conn:
                index.put_cursor(conn, p.key, p.agent, p.size, p.mtime_ns, offset, state)

        if batch is not None:
            batch.after_all(put_cursor)
        else:
            put_cursor(ctx.index)
    return report


def fingerprint(path: Path, st: os.stat_result) -> tuple[int, int]:
    """What says a file changed: its size and mtime, and for a SQLite database its write-ahead
    log's too (an agent that keeps its database open, OpenCode, commits its turns to ``-wal``; the
    database file itself changes only when the log is checkpointed)."""
    try:
        wal = os.stat(f"{path}-wal")
    except OSError:
        return st.st_size, st.st_mtime_ns
    return st.st_size + wal.st_size, max(st.st_mtime_ns, wal.st_mtime_ns)


def tail(path: Path, offset: int) -> str | None:
    """A digest of the bytes before ``offset`` (a restart point): a file that grew from there
    still has them; one an agent rewrote in place (Copilot's ``/rewind``) does not."""
    if offset <= 0:
        return None
    try:
        with open(path, "rb") as f:
            f.seek(max(0, offset - TAIL_BYTES))
            data = f.read(min(offset, TAIL_BYTES))
    except OSError:
        return None
    return hashlib.sha1(data).hexdigest()[:16] if len(data) == min(offset, TAIL_BYTES) else None


def same_tail(path: Path, cur: dict[str, Any]) -> bool:
    want = cur["state"].get("tail")
    return want is None or tail(path, cur["offset"]) == want
