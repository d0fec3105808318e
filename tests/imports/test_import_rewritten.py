"""A file an agent rewrote in place (Copilot's ``/rewind``) is read whole again, also when it is
bigger than before: the bytes before the restart point are checked, not only the size."""

from __future__ import annotations

import shutil
from pathlib import Path

from oxide_git.imports import plan as import_plan
from oxide_git.imports.importing import import_sessions
from oxide_git.store import sessionlog
from tests.conftest import FIXTURES, make_ctx

PLAIN = FIXTURES / "copilot" / "01fbf44d-0f39-4b67-aab1-efc7e7ef9294" / "events.jsonl"


def _prompts(ctx, sid: str) -> list[str]:  # type: ignore[no-untyped-def]
    log = sessionlog.load(ctx.repo, sid)
    assert log is not None
    return [m.text() for _q, m in sessionlog.iter_messages(ctx.repo, log.commit.tree) if m.role == "user"]


def test_a_rewritten_file_that_grew_is_read_whole_again(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "session-state" / "01fbf44d-0f39-4b67-aab1-efc7e7ef9294" / "events.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copy(PLAIN, path)
    ctx = make_ctx(repo)
    [sid] = [s for f in import_sessions(ctx, [("copilot", path)]).files for s in f.sessions]
    first = _prompts(ctx, sid)
    data = path.read_bytes()
    old = first[0].encode()
    assert data.count(b'"content":"' + old + b'"') == 1
    # rewritten: the first prompt longer (every later byte moves), and bigger than before
    path.write_bytes(data.replace(b'"content":"' + old + b'"', b'"content":"' + old + b' (edited)"'))
    assert path.stat().st_size > len(data)
    report = import_sessions(ctx, [("copilot", path)])
    assert [f.state for f in report.files] == ["changed"]
    assert _prompts(ctx, sid) == [first[0] + " (edited)", *first[1:]]
    # a file that only grew goes on from where it was
    with open(path, "ab") as f:
        f.write(b"\n")
    assert [f.state for f in import_sessions(ctx, [("copilot", path)]).files] == ["grown"]


def test_the_tail_digest_needs_the_bytes_before_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * 2)
    assert import_plan.tail(path, 0) is None and import_plan.tail(path, 600) is None
    assert import_plan.tail(path, 300) == import_plan.tail(path, 300) != import_plan.tail(path, 299)
