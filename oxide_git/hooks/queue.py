"""The hooks' job queue, ``<git-common-dir>/oxide/hooks.queue``: the shims append to it, one
drainer at a time reads it from where the last one stopped.

A shim appends its line (``printf >>``: one O_APPEND write) and then starts a drainer, which waits
for ``hooks.lock``. The queue is never renamed or truncated under the shims: one that had opened it
before a rename could write its line after the drainer had read the renamed file, and the line went
with it (in a soak, a commit that never got its note). The drainer keeps its place instead, in
``hooks.queue.pos`` (``{inode: offset}``), written once the jobs it read have run: a drainer killed
mid-way leaves them to the next one (at least once, as before). A fully read queue larger than
ROTATE_AT moves to ``hooks.queue.old``, whose tail every drainer still reads: a line written there
late, by a shim that opened the queue before the move, is run by the drainer that shim starts.
Stdlib only (hot path).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

QUEUE, OLD, POS, LEGACY = "hooks.queue", "hooks.queue.old", "hooks.queue.pos", "hooks.queue.work"
ROTATE_AT = 1 << 20  # about 7,000 jobs
Run = Callable[[list[str]], None]


def _cursor(oxide_dir: Path) -> dict[str, int]:
    try:
        data = json.loads((oxide_dir / POS).read_text())
        return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def _save(oxide_dir: Path, cursor: dict[str, int]) -> None:
    tmp = oxide_dir / f"{POS}.tmp"
    tmp.write_text(json.dumps(cursor))
    os.replace(tmp, oxide_dir / POS)


def _unread(path: Path, cursor: dict[str, int]) -> tuple[str, int, list[str]]:
    """(inode, offset after the last whole line, the whole lines past the cursor) of ``path``.
    A file smaller than its cursor is a new one (an inode used again): read from the start."""
    try:
        with open(path, "rb") as f:
            ino = str(os.fstat(f.fileno()).st_ino)
            size = os.fstat(f.fileno()).st_size
            pos = cursor.get(ino, 0)
            pos = 0 if pos > size else pos
            f.seek(pos)
            data = f.read()
    except FileNotFoundError:
        return "", 0, []
    whole = data[: data.rfind(b"\n") + 1]  # a line is one write ending in a newline
    return ino, pos + len(whole), whole.decode("utf-8", "replace").splitlines()


def pending(oxide_dir: Path) -> int:
    """How many queued jobs no drainer has run yet."""
    cursor = _cursor(oxide_dir)
    n = sum(len(_unread(oxide_dir / name, cursor)[2]) for name in (OLD, QUEUE))
    try:
        n += len((oxide_dir / LEGACY).read_text().splitlines())
    except OSError:
        pass
    return n


def drain(oxide_dir: Path, run: Run) -> None:
    """Run every queued job, in order, with ``run(lines)``; one drainer at a time (the others
    wait for the lock, then find less)."""
    with open(oxide_dir / "hooks.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        legacy = oxide_dir / LEGACY  # an older release's drainer left this batch unfinished
        if legacy.exists():
            run(legacy.read_text().splitlines())
            legacy.unlink()
        cursor = _cursor(oxide_dir)
        for name in (OLD, QUEUE, QUEUE):  # the queue twice: what came while its jobs ran
            ino, end, lines = _unread(oxide_dir / name, cursor)
            if lines:
                run(lines)
                cursor[ino] = end
                _save(oxide_dir, cursor)
        _rotate(oxide_dir, cursor)
        # later lines have drainers of their own, started after their writes, waiting for the lock


def _rotate(oxide_dir: Path, cursor: dict[str, int]) -> None:
    queue = oxide_dir / QUEUE
    try:
        st = queue.stat()
    except FileNotFoundError:
        return
    if st.st_size < ROTATE_AT or cursor.get(str(st.st_ino)) != st.st_size:
        return
    os.replace(queue, oxide_dir / OLD)
    _save(oxide_dir, {str(st.st_ino): st.st_size})  # the old queue's inode is the only one left


def wait_idle(common_dir: Path, timeout: float = 30.0) -> bool:
    """Wait until every queued job ran and no drainer runs (for tests, bench and `hooks status`)."""
    oxide_dir = common_dir / "oxide"
    if not oxide_dir.is_dir():
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pending(oxide_dir):
            with open(oxide_dir / "hooks.lock", "a") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    time.sleep(0.02)
                    continue
                if not pending(oxide_dir):
                    return True
        time.sleep(0.02)
    return False
