"""What every compatibility test checks, the same way for every agent.

- ``import_session``: ``git oxide import`` with no path (discovery from the agent's default store),
  then the session as ``show --json`` gives it, found by the agent's own id.
- ``assert_conversation``: every prompt is a user message, every tool call has its result (same
  call id), and the shell command's output is in a result.
- ``round_trip``: the agent's own files moved away, ``git oxide resume --into`` writes them back,
  and the line-identity share against what the agent wrote itself.
- ``assert_request_holds``: the last scripted request the agent sent its model holds the texts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .driver import SHELL_TEXT, Driver
from .modelserver import ModelServer

RESULTS = Path(os.environ.get("OXIDE_COMPAT_RESULTS") or
               Path(__file__).resolve().parent.parent.parent / ".compat-cache" / "results.jsonl")


def oxide(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    r = subprocess.run(["git", "oxide", *args], cwd=repo, capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise AssertionError(f"git oxide {' '.join(args)} exited {r.returncode}:\n{r.stderr}\n{r.stdout}")
    return r


def oxide_json(repo: Path, *args: str) -> Any:
    return json.loads(oxide(repo, *args, "--json").stdout)


def import_session(repo: Path, native_id: str) -> dict[str, Any]:
    """Import from the default stores (no path) and return ``show --json`` of that session."""
    oxide(repo, "import")
    return show(repo, native_id)


def assert_compaction_imported(repo: Path, native_id: str, summary: str) -> list[dict[str, Any]]:
    """Import the session: one compaction holding ``summary``, every message before it compacted,
    and the model context (`resume --format json`) starting at it; that context's messages."""
    shown = import_session(repo, native_id)
    kinds = [[p["type"] for p in m["parts"]] for m in shown["messages"]]
    at = kinds.index(["compaction"])
    assert summary in shown["messages"][at]["parts"][0]["summary"]
    assert all(m["compacted"] for m in shown["messages"][:at]) and not shown["messages"][at]["compacted"]
    context = oxide_json(repo, "resume", native_id, "--format", "json")
    msgs: list[dict[str, Any]] = context["messages"] if isinstance(context, dict) else context
    assert [p["type"] for p in msgs[0]["parts"]] == ["compaction"]  # the model context starts there
    return msgs


def show(repo: Path, ref: str) -> dict[str, Any]:
    return json.loads(oxide(repo, "show", ref, "--json", "--full").stdout)


def texts(msg: Mapping[str, Any], *types: str) -> list[str]:
    out = []
    for p in msg.get("parts", []):
        if not types or p.get("type") in types:
            for key in ("text", "output", "summary"):
                v = p.get(key)
                if isinstance(v, str):
                    out.append(v)
                elif v is not None and key == "output":
                    out.append(json.dumps(v))
    return out


def user_prompts(shown: Mapping[str, Any]) -> list[str]:
    return ["\n".join(texts(m, "text")) for m in shown["messages"] if m["role"] == "user"
            and texts(m, "text")]


def tool_calls(shown: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for m in shown["messages"] for p in m["parts"] if p["type"] == "tool_call"]


def tool_results(shown: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for m in shown["messages"] for p in m["parts"] if p["type"] == "tool_result"]


def assert_conversation(shown: Mapping[str, Any], prompts: Sequence[str], *, tools: bool = True) -> None:
    users = user_prompts(shown)
    for prompt in prompts:
        assert any(prompt in u for u in users), f"prompt {prompt!r} is not a user message: {users}"
    if not tools:
        return
    calls, results = tool_calls(shown), tool_results(shown)
    assert calls, "no tool call was imported"
    call_ids = [c["call_id"] for c in calls]
    result_ids = [r["call_id"] for r in results]
    assert all(call_ids), calls
    assert sorted(call_ids) == sorted(result_ids), (call_ids, result_ids)
    outputs = json.dumps([r.get("output") for r in results])
    assert SHELL_TEXT in outputs, f"the shell command's output is not in a tool result: {outputs[:2000]}"


@dataclass
class RoundTrip:
    written: dict[str, bytes] = field(default_factory=dict)
    lines_same: int = 0
    lines_total: int = 0
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return self.lines_same / self.lines_total if self.lines_total else 1.0


def snapshot(paths: Iterable[Path]) -> dict[str, bytes]:
    """Every file under ``paths`` (files or folders), by absolute path."""
    out: dict[str, bytes] = {}
    for p in paths:
        if p.is_file():
            out[str(p)] = p.read_bytes()
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    out[str(f)] = f.read_bytes()
    return out


def line_identity(original: bytes, written: bytes) -> tuple[int, int]:
    """(lines of ``original`` found unchanged in ``written``, lines of ``original``)."""
    want = [ln for ln in original.splitlines() if ln.strip()]
    have: dict[bytes, int] = {}
    for ln in written.splitlines():
        have[ln] = have.get(ln, 0) + 1
    same = 0
    for ln in want:
        if have.get(ln, 0):
            have[ln] -= 1
            same += 1
    return same, len(want)


def into(repo: Path, ref: str, agent: str) -> dict[str, Any]:
    out = oxide_json(repo, "resume", ref, "--into", agent)
    assert isinstance(out, dict)
    return out


def round_trip(driver: Driver, repo: Path, native_id: str, tmp: Path,
               compare: Iterable[Path] | None = None) -> RoundTrip:
    """Move the agent's files away, write them back with ``resume --into``, compare lines."""
    before = snapshot(compare or driver.store())
    driver.move_store_away(tmp / "moved-away")
    rt = RoundTrip(result=into(repo, native_id, driver.name))
    after = snapshot(compare or driver.store())
    rt.written = after
    for path, data in before.items():
        if path in after and (path.endswith((".jsonl", ".md", ".json")) or b"\n" in data):
            same, total = line_identity(data, after[path])
            rt.lines_same += same
            rt.lines_total += total
    return rt


def request_text(server: ModelServer) -> str:
    """The last scripted request's body as text (what the agent sent its model)."""
    return json.dumps(server.last_request()["body"], ensure_ascii=False)


def assert_request_holds(server: ModelServer, needles: Iterable[str]) -> None:
    body = request_text(server)
    missing = [n for n in needles if n not in body and json.dumps(n)[1:-1] not in body]
    assert not missing, f"the agent's request to its model lacks {missing}"


def request_tool_calls(server: ModelServer) -> list[tuple[str, str]]:
    """(tool name, arguments as JSON text) of every tool call in the history of the last scripted
    request: the calls the agent's model sees as real tool history, not as text."""
    row = server.last_request()
    body, api = row["body"], row["api"]
    out: list[tuple[str, str]] = []
    if api == "gemini":  # functionCall parts of the contents
        from .modelserver_gemini import tool_calls

        return tool_calls(body)
    if api == "responses":
        for it in body.get("input") or []:
            if isinstance(it, dict) and it.get("type", "").endswith("_call"):
                args = it.get("arguments", it.get("input", it.get("action")))
                out.append((str(it.get("name") or it.get("type")), json.dumps(args)))
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        for c in m.get("tool_calls") or []:  # Chat Completions
            f = c.get("function") or {}
            out.append((str(f.get("name")), str(f.get("arguments"))))
        content = m.get("content")
        for b in content if isinstance(content, list) else []:  # Anthropic Messages
            if isinstance(b, dict) and b.get("type") == "tool_use":
                out.append((str(b.get("name")), json.dumps(b.get("input"))))
    return out


def record(row: Mapping[str, Any]) -> None:
    """One result row for the README's "Tested with" table (``python -m tests.compat.report``)."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with open(RESULTS, "a", encoding="utf-8") as f:
        f.write(json.dumps(dict(row)) + "\n")
