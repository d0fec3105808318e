"""pi, driven for real: import, same-agent round trip (pi's own lines back), resume; an in-place
branch (``/tree``, made through pi's extension API) becomes a fork that pi continues on its own;
a compaction and a session name survive the round trip."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from . import checks
from .conftest import make_driver
from .drive_pi import EXTENSION
from .driver import PROMPT2, SHELL_TEXT
from .modelserver import Turn


def test_pi_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    d = make_driver("pi", compat_repo, model_server)
    first = d.run().check()
    sid = first.native_id
    assert sid
    assert (compat_repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (compat_repo / "notes.txt").read_text() == "second line\n"

    imported = checks.oxide(compat_repo, "import")
    assert "unknown" not in imported.stderr  # every entry type of this release is known
    shown = checks.show(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    assert [c["name"] for c in checks.tool_calls(shown)] == ["bash", "write", "edit"]

    original = d.session_file(sid)
    data = original.read_bytes()
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    assert rt.result["native_id"] == sid and rt.result["written"] == [str(original)]
    assert original.read_bytes() == data  # the same file, byte for byte
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell", "second line"])
    checks.record({"agent": "pi", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"

    # what pi appended after the resume is the same session, not a new one
    before = checks.oxide_json(compat_repo, "list", "--all")
    checks.oxide(compat_repo, "import")
    after = checks.oxide_json(compat_repo, "list", "--all")
    assert [r["id"] for r in after] == [r["id"] for r in before]
    assert any(PROMPT2 in u for u in checks.user_prompts(checks.show(compat_repo, sid)))


def _rpc(d, native_id: str, *commands: dict) -> list[dict]:
    """pi's RPC mode: each command, answered before the next is sent (a prompt: when the agent ends)."""
    p = subprocess.Popen([str(d.binary), "--offline", "--mode", "rpc", "--session", native_id],
                         cwd=d.repo, env=d.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdin is not None and p.stdout is not None
    out = []
    try:
        for i, c in enumerate(commands):
            p.stdin.write(json.dumps({**c, "id": f"r{i}"}) + "\n")
            p.stdin.flush()
            while True:
                line = p.stdout.readline()
                assert line, f"pi --mode rpc ended before answering {c}: {p.stderr.read() if p.stderr else ''}"
                ev = json.loads(line)
                if ev.get("type") == "response" and ev.get("id") == f"r{i}":
                    assert ev.get("success"), ev
                    out.append(ev)
                    if c["type"] != "prompt":
                        break
                if ev.get("type") == "agent_end":
                    break
    finally:
        p.stdin.close()
        p.wait(timeout=60)
    return out


def test_pi_in_place_branch_is_a_fork_pi_continues(compat_repo: Path, model_server, tmp_path: Path) -> None:
    """``/tree`` back to the end of the first turn and on from there: the branch is a fork of the
    session at that message; `resume --into pi` of it writes a pi session that continues the branch
    (its model sees the branch, not the prompt the branch left). A compaction (RPC ``compact``) and a
    session name on the branch come back line for line."""
    d = make_driver("pi", compat_repo, model_server)
    model_server.script["PROMPT-3"] = [Turn.shell(f"echo {SHELL_TEXT}-3"), Turn.say("Done with three.")]
    model_server.script["PROMPT-4"] = [Turn.say("Done with four.")]
    sid = d.run().check().native_id
    assert sid
    d.resume(sid, PROMPT2).check()
    path = d.session_file(sid)
    entries = [json.loads(x) for x in path.read_text().splitlines()]
    end_of_one = next(e["id"] for e in entries if e.get("message", {}).get("content") == [
        {"type": "text", "text": "Done with one."}])
    d.extensions = [EXTENSION]
    d._exec(d.prompts_argv(sid, f"/oxide-branch {end_of_one}", "PROMPT-3: a branch")).check()
    d.extensions = []
    _rpc(d, sid, {"type": "compact"}, {"type": "set_session_name", "name": "branched"})

    checks.oxide(compat_repo, "import")
    rows = checks.oxide_json(compat_repo, "list", "--all")
    [main] = [r for r in rows if r["native_id"] == sid]
    [branch] = [r for r in rows if r["parent_id"] == main["id"]]
    assert branch["native_id"].startswith(f"{sid}/") and branch["title"] == "PROMPT-3: a branch"
    shown = checks.show(compat_repo, branch["id"])
    fork_at = next(m for m in checks.show(compat_repo, main["id"])["messages"]
                   if m["id"] == branch["fork_message_id"])  # the last message they share
    assert fork_at["native_id"] == end_of_one
    assert any(p["type"] == "compaction" for m in shown["messages"] for p in m["parts"])
    assert not any(PROMPT2 in u for u in checks.user_prompts(shown))
    assert main["title"] == "branched"

    # the session itself goes back as pi wrote it (minus the branch: pi continues its last entry)
    lines = set(path.read_bytes().splitlines())
    rt = checks.round_trip(d, compat_repo, sid, tmp_path / "main", compare=[path])
    assert rt.lines_same == len([e for e in entries if e.get("type") != "session"]) + 1
    res = checks.into(compat_repo, branch["id"], "pi")
    ((written,),) = (res["written"],)
    assert res["native_id"] != sid and written.endswith(f"_{res['native_id']}.jsonl")
    body = Path(written).read_bytes().splitlines()
    assert all(x in lines for x in body[1:]), "a branch entry is not pi's own line"
    model_server._log.clear()
    d.resume(res["native_id"], "PROMPT-4: on the branch").check()
    text = checks.request_text(model_server)
    assert "PROMPT-3: a branch" in text and d.prompt1 in text and f"{SHELL_TEXT}-3" in text
    assert PROMPT2 not in text, "pi continued the session the branch left"
    checks.record({"agent": "pi", "version": d.pin.version, "check": "round_trip_branch",
                   "lines_same": sum(x in lines for x in body[1:]), "lines_total": len(body) - 1})

    # what pi added on the exported branch hangs on the branch, as its continuation
    checks.oxide(compat_repo, "import")
    after = checks.oxide_json(compat_repo, "list", "--all")
    new = [r for r in after if r["id"] not in {x["id"] for x in rows}]
    assert [(r["native_id"], r["parent_id"]) for r in new] == [(res["native_id"], branch["id"])]
