"""Claude Code, driven for real: import, same-agent round trip, what it sends its model."""

from __future__ import annotations

from pathlib import Path

from . import checks
from .conftest import make_driver
from .driver import PROMPT2, SHELL_TEXT


def test_claude_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("claude", compat_repo, model_server)
    first = d.run().check()
    sid = first.native_id
    assert sid
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"

    shown = checks.import_session(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])

    original = d.session_file(sid)
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    assert rt.result["native_id"] == sid
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell", "second line"])
    checks.record({"agent": "claude", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"
