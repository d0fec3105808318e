"""The hooks' job queue: every line a shim appends is run once, whatever the drainers are doing
when it lands (a line written after a drainer had moved the queue away was lost, once in a soak)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oxide_git.hooks import queue as hook_queue


def _ran(into: list[str]) -> hook_queue.Run:
    return into.extend


def test_a_line_written_after_the_drainer_read_the_queue_is_run_by_the_next(tmp_path: Path) -> None:
    """A shim that opened the queue, then wrote its line after a drainer had read it all: the
    drainer that shim starts runs it (the queue was renamed and the line unlinked with it)."""
    ran: list[str] = []
    queue = tmp_path / hook_queue.QUEUE
    queue.write_text("one\n")
    with open(queue, "a") as shim:  # opened before the drain, written after it
        hook_queue.drain(tmp_path, _ran(ran))
        assert ran == ["one"] and hook_queue.pending(tmp_path) == 0
        shim.write("two\n")
    assert hook_queue.pending(tmp_path) == 1
    hook_queue.drain(tmp_path, _ran(ran))
    assert ran == ["one", "two"] and hook_queue.pending(tmp_path) == 0
    hook_queue.drain(tmp_path, _ran(ran))
    assert ran == ["one", "two"]  # nothing runs twice


def test_a_full_queue_moves_aside_and_a_late_line_there_still_runs(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook_queue, "ROTATE_AT", 10)
    ran: list[str] = []
    queue = tmp_path / hook_queue.QUEUE
    queue.write_text("first job\n")
    with open(queue, "a") as shim:
        hook_queue.drain(tmp_path, _ran(ran))
        assert (tmp_path / hook_queue.OLD).exists() and not queue.exists()  # read whole, moved aside
        shim.write("late\n")  # into the old queue: the shim's file was moved under it
    queue.write_text("next\n")  # a shim after the move makes a new queue
    assert hook_queue.pending(tmp_path) == 2
    hook_queue.drain(tmp_path, _ran(ran))
    assert ran == ["first job", "late", "next"] and hook_queue.pending(tmp_path) == 0


def test_jobs_of_a_drainer_that_died_run_again_and_half_a_line_waits(tmp_path: Path) -> None:
    queue = tmp_path / hook_queue.QUEUE
    queue.write_bytes(b"a\nb\nhalf a li")  # a line is one write: its end has not landed yet

    def dies(lines: list[str]) -> None:
        raise KeyboardInterrupt  # killed before its place was saved

    with pytest.raises(KeyboardInterrupt):
        hook_queue.drain(tmp_path, dies)
    ran: list[str] = []
    hook_queue.drain(tmp_path, _ran(ran))
    assert ran == ["a", "b"] and hook_queue.pending(tmp_path) == 0
    with open(queue, "ab") as f:
        f.write(b"ne\n")
    hook_queue.drain(tmp_path, _ran(ran))
    assert ran == ["a", "b", "half a line"]


def test_an_older_releases_unfinished_batch_runs_first_and_a_new_file_reads_from_its_start(tmp_path: Path) -> None:
    (tmp_path / hook_queue.LEGACY).write_text("left by an older drainer\n")
    (tmp_path / hook_queue.QUEUE).write_text("queued\n")
    assert hook_queue.pending(tmp_path) == 2
    ran: list[str] = []
    hook_queue.drain(tmp_path, _ran(ran))
    assert ran == ["left by an older drainer", "queued"] and not (tmp_path / hook_queue.LEGACY).exists()
    ino = str((tmp_path / hook_queue.QUEUE).stat().st_ino)
    (tmp_path / hook_queue.POS).write_text(f'{{"{ino}": 99999}}')  # a place past its end: not this file's
    (tmp_path / hook_queue.QUEUE).write_text("again\n")
    hook_queue.drain(tmp_path, _ran(ran))
    assert ran[-1] == "again"


WRITER = 'i=0; while [ $i -lt {n} ]; do printf "%s\\n" "{w} $i" >>"{q}"; i=$((i+1)); done'
DRAINER = """
import sys
from pathlib import Path
from oxide_git.hooks import queue as hook_queue
d = Path(sys.argv[1])
def run(lines):
    with open(d / "ran", "a") as f:
        f.write("".join(line + "\\n" for line in lines))
while not (d / "stop").exists():
    hook_queue.drain(d, run)
hook_queue.drain(d, run)
"""


def test_shims_and_drainers_at_once_lose_nothing_and_run_nothing_twice(tmp_path: Path) -> None:
    """Four shell writers as the shims write, two drainer processes as the hooks start them."""
    n = 1500
    q = tmp_path / hook_queue.QUEUE
    drainers = [subprocess.Popen([sys.executable, "-c", DRAINER, str(tmp_path)]) for _ in range(2)]
    writers = [subprocess.Popen(["sh", "-c", WRITER.format(n=n, w=f"w{w}", q=q)]) for w in range(4)]
    for p in writers:
        assert p.wait(timeout=120) == 0
    (tmp_path / "stop").touch()
    for p in drainers:
        assert p.wait(timeout=120) == 0
    ran = (tmp_path / "ran").read_text().splitlines()
    assert len(ran) == len(set(ran)) == 4 * n
    for w in range(4):
        mine = [int(line.split()[1]) for line in ran if line.startswith(f"w{w} ")]
        assert mine == list(range(n))  # each shim's lines in the order it wrote them
    assert hook_queue.pending(tmp_path) == 0
