"""Codex 0.171, driven for real: import (prompts, title, harness context, tools), the same-agent
round trip line for line through ``codex exec resume``, compressed and archived rollouts, a
cross-agent write under the user's own provider, and re-import of what oxide wrote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import zstandard

from . import checks
from .conftest import make_driver
from .drive_codex import THOUGHT, CodexDriver
from .driver import PROMPT2, SHELL_TEXT


def _ref(repo: Path, sid: str) -> str:
    return subprocess.run(["git", "for-each-ref", "--format=%(objectname)",
                           f"refs/oxide/sessions/{sid}"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def _first_run(d: CodexDriver, repo: Path) -> str:
    first = d.run().check()
    assert first.native_id
    assert (repo / "shell.txt").read_text().strip() == SHELL_TEXT
    assert (repo / "notes.txt").read_text() == "second line\n"
    return first.native_id


AGENTS_MD = "Answer briefly. AGENTS-MD-MARKER\n"


def test_codex_import_and_round_trip(compat_repo: Path, model_server, tmp_path: Path) -> None:
    (compat_repo / "AGENTS.md").write_text(AGENTS_MD)  # injected by Codex as context
    d = make_driver("codex", compat_repo, model_server)
    assert isinstance(d, CodexDriver)
    sid = _first_run(d, compat_repo)

    shown = checks.import_session(compat_repo, sid)
    checks.assert_conversation(shown, [d.prompt1])
    users = checks.user_prompts(shown)
    assert users == [d.prompt1], users  # the injected context is never a user prompt
    title = shown["session"]["title"]
    assert title and d.prompt1.startswith(title.rstrip("…")), title
    harness = [m for m in shown["messages"] if (m.get("extra") or {}).get("harness")]
    assert harness and all(m["role"] != "user" for m in harness)
    harness_text = "\n".join(t for m in harness for t in checks.texts(m, "text"))
    assert "<environment_context>" in harness_text and "AGENTS-MD-MARKER" in harness_text
    assert "<permissions instructions>" in harness_text
    calls = {c["name"] for c in checks.tool_calls(shown)}
    assert calls == {"exec_command", "apply_patch"}, calls
    thoughts = [p for m in shown["messages"] for p in m["parts"] if p["type"] == "reasoning"]
    assert [p["text"] for p in thoughts] == [THOUGHT, "All three done."], thoughts

    original = d.session_file(sid)
    before = original.read_bytes()
    rt = checks.round_trip(d, compat_repo, sid, tmp_path, compare=[original])
    assert rt.result["native_id"] == sid
    assert str(original) in rt.written, f"written elsewhere: {list(rt.written)}"
    checks.record({"agent": "codex", "version": d.pin.version, "check": "round_trip",
                   "lines_same": rt.lines_same, "lines_total": rt.lines_total})
    assert rt.lines_same == rt.lines_total, f"{rt.lines_same}/{rt.lines_total} lines identical"
    assert original.read_bytes() == before
    assert rt.result.get("lost") == []

    # re-importing the file oxide wrote changes nothing
    ref = _ref(compat_repo, shown["session"]["id"])
    checks.oxide(compat_repo, "import")
    assert _ref(compat_repo, shown["session"]["id"]) == ref
    assert checks.show(compat_repo, sid)["messages"] == shown["messages"]

    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, "echo from-shell | tee shell.txt",
                                               "+second line", "Add File: notes.txt", PROMPT2])
    sent = [i for i in model_server.last_request()["body"]["input"] if i.get("type") == "reasoning"]
    assert [i["summary"][0]["text"] for i in sent] == [THOUGHT, "All three done."]
    assert all(i.get("encrypted_content", "").startswith("gAAAA") for i in sent)
    after = checks.import_session(compat_repo, sid)
    assert checks.user_prompts(after) == [d.prompt1, PROMPT2]


def test_codex_compressed_and_archived_rollouts_are_found(compat_repo: Path, model_server) -> None:
    d = make_driver("codex", compat_repo, model_server)
    assert isinstance(d, CodexDriver)
    zipped = _first_run(d, compat_repo)
    plain = d.session_file(zipped)
    data = plain.read_bytes()
    packed = plain.with_name(plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(data))  # what Codex does after 7 idle days
    plain.unlink()

    archived = d.run(f"{d.marker}: once more").check().native_id
    assert archived
    r = d._exec([str(d.binary), "archive", archived])
    assert r.returncode == 0, r.stderr
    assert list((d.codex_home() / "archived_sessions").glob(f"*{archived}.jsonl"))

    for sid in (zipped, archived):
        shown = checks.import_session(compat_repo, sid)
        assert checks.user_prompts(shown), sid
    shown = checks.show(compat_repo, zipped)
    checks.assert_conversation(shown, [d.prompt1])
    listed = {s["native_id"] for s in checks.oxide_json(compat_repo, "list", "--all")}
    assert {zipped, archived} <= listed

    # Codex resumes a compressed rollout by decompressing it back (the .zst goes): importing the
    # plain file then continues the same session, nothing twice
    before = checks.show(compat_repo, zipped)["messages"]
    d.resume(zipped, PROMPT2).check()
    assert plain.exists() and not packed.exists()
    shown = checks.import_session(compat_repo, zipped)
    assert checks.user_prompts(shown) == [d.prompt1, PROMPT2]
    n = len(before) - 1  # the last message grows: the resumed turn's first lines join it
    assert shown["messages"][:n] == before[:n]
    assert shown["messages"][n]["parts"][:len(before[n]["parts"])] == before[n]["parts"]
    assert len({s["id"] for s in checks.oxide_json(compat_repo, "list", "--all")}) == len(listed)


def test_claude_into_codex_under_a_custom_provider(compat_repo: Path, model_server,
                                                    tmp_path: Path) -> None:
    claude = make_driver("claude", compat_repo, model_server)
    run = claude.run().check()
    assert run.native_id
    shown = checks.import_session(compat_repo, run.native_id)

    codex = make_driver("codex", compat_repo, model_server)
    assert isinstance(codex, CodexDriver)
    codex.write_config()  # the user's Codex: a provider of their own, named "fake"
    out = checks.into(compat_repo, run.native_id, "codex")
    rollout = next((codex.codex_home() / "sessions").rglob(f"rollout-*{out['native_id']}.jsonl"))
    meta = json.loads(rollout.read_text().splitlines()[0])
    assert meta["payload"]["model_provider"] == codex.provider
    assert any("exec_command" in x for x in out["lost"]), out["lost"]

    model_server._log.clear()
    codex.resume(out["native_id"], PROMPT2).check()
    body = model_server.last_request()["body"]
    items = body["input"]
    calls = [i for i in items if i.get("type") in ("function_call", "custom_tool_call")]
    outputs = [i for i in items if i.get("type") in ("function_call_output", "custom_tool_call_output")]
    assert [c["name"] for c in calls] == ["exec_command", "apply_patch", "apply_patch"], calls
    assert sorted(c["call_id"] for c in calls) == sorted(o["call_id"] for o in outputs)
    assert SHELL_TEXT in json.dumps(outputs)
    checks.assert_request_holds(model_server, [claude.prompt1, SHELL_TEXT, PROMPT2])
    text = checks.request_text(model_server)
    harness = [m for m in shown["messages"] if (m.get("extra") or {}).get("harness")]
    for m in harness:  # Claude's injected context never reaches Codex as a user turn
        for t in checks.texts(m, "text"):
            assert t[:200] not in text


def test_codex_rollout_alone_lost_is_written_back_where_its_thread_store_points(
        compat_repo: Path, model_server) -> None:
    """Codex's databases kept (state_5.sqlite names the rollout's path), the rollout file gone:
    Codex finds a thread by that row, not by a scan, so the file must come back at that path."""
    d = make_driver("codex", compat_repo, model_server)
    assert isinstance(d, CodexDriver)
    sid = _first_run(d, compat_repo)
    original = d.session_file(sid)
    before = original.read_bytes()
    checks.import_session(compat_repo, sid)
    original.unlink()
    out = checks.into(compat_repo, sid, "codex")
    assert out["written"] == [str(original)] and original.read_bytes() == before
    model_server._log.clear()
    d.resume(sid, PROMPT2).check()
    checks.assert_request_holds(model_server, [d.prompt1, SHELL_TEXT, PROMPT2])
