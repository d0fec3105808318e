"""`git oxide trace` on what real agents did (issue 35): the scenario of test_blame.py (two turns,
the user's line and file between them), committed with oxide's git hooks; then

- ``trace HEAD --format agent-trace`` validates against Agent Trace's published JSON schema
  (tests/fixtures/agent-trace; its version pattern ``^[0-9]+\\.[0-9]+$`` takes the "1.0" the
  reference implementation writes, not the "0.1.0" of the README's examples), and the lines it
  names ``ai`` are exactly those `blame --json` gives the session, ``human`` those it gives the
  user, and nothing else;
- ``trace HEAD --format git-ai`` parses as the Git AI standard says (tests/test_trace.py's
  reader) and names the same lines: the session's under its prompt key (SHA-256 of
  "<tool>:<the agent's session id>"), the user's under the committer's ``h_`` key;
- the notes the post-commit hook wrote (``oxide.trace agent-trace,git-ai``) say the same.

With ``OXIDE_COMPAT_ARTIFACTS`` set, the record and the log of each run are left there."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.ops import test_trace as spec

from . import checks
from .modelserver import ModelServer
from .test_blame import commit_with_hooks, two_turns

AGENTS = ("claude", "codex")
FILES = ("notes.txt", "shell.txt", "mine.txt")
ARTIFACTS = os.environ.get("OXIDE_COMPAT_ARTIFACTS")


def _git(repo: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _blamed(repo: Path, sid: str) -> dict[str, dict[str, list[int]]]:
    """{path: {"ai" | "human" | what else blame says: [line numbers]}} of HEAD's files, as
    `blame --json --rev HEAD` gives them; "ai" only for the session ``sid``'s lines."""
    out: dict[str, dict[str, list[int]]] = {}
    for path in FILES:
        doc = json.loads(checks.oxide(repo, "blame", path, "--json", "--rev", "HEAD").stdout)
        for ln in doc["lines"]:
            who = ln["who"]
            kind = ("ai" if who == "agent" and sid.startswith(ln["session_id"] or "-") else
                    "human" if who == "human" else who)
            out.setdefault(path, {}).setdefault(kind, []).append(ln["number"])
    return out


def _lines_of(rec: dict[str, Any], sid: str) -> dict[str, dict[str, list[int]]]:
    """The same from an Agent Trace record ("ai" only for conversations of the session ``sid``)."""
    out: dict[str, dict[str, list[int]]] = {}
    for f in rec["files"]:
        for conv in f["conversations"]:
            kind = conv["contributor"]["type"]
            if kind == "ai" and conv.get("url") != f"oxide:session/{sid}":
                kind = f"ai of {conv.get('url')}"
            numbers = out.setdefault(f["path"], {}).setdefault(kind, [])
            for r in conv["ranges"]:
                numbers += range(r["start_line"], r["end_line"] + 1)
    return {p: {k: sorted(v) for k, v in kinds.items()} for p, kinds in out.items()}


@pytest.mark.parametrize("agent", AGENTS)
def test_trace_validates_and_names_the_lines_blame_gives(agent: str, compat_repo: Path,
                                                         model_server: ModelServer) -> None:
    d, sid, _prompts = two_turns(agent, compat_repo, model_server)
    _git(compat_repo, "config", "oxide.trace", "agent-trace,git-ai")  # the post-commit hook's notes too
    commit_with_hooks(compat_repo, sid, "the agent's work and mine")
    head = _git(compat_repo, "rev-parse", "HEAD").strip()
    blamed = _blamed(compat_repo, sid)
    # what the scenario makes: the agent's three lines of notes.txt and shell.txt, the user's line
    # and file (test_blame.py scores these against blame; here blame is the reference)
    assert blamed == {"notes.txt": {"ai": [1, 2, 4], "human": [3]}, "shell.txt": {"ai": [1]},
                      "mine.txt": {"human": [1]}}, blamed

    text = checks.oxide(compat_repo, "trace", "HEAD", "--format", "agent-trace").stdout
    rec = json.loads(text)
    jsonschema.validate(rec, spec.SCHEMA, format_checker=jsonschema.FormatChecker())
    assert rec["version"] == "1.0" and rec["vcs"] == {"type": "git", "revision": head}
    assert _lines_of(rec, sid) == blamed
    shown = checks.show(compat_repo, sid)
    native = shown["session"]["native_id"]
    assert rec["metadata"]["dev.git-oxide"]["sessions"] == {sid: {"agent": agent, "native_id": native}}
    ai = [c for f in rec["files"] for c in f["conversations"] if c["contributor"]["type"] == "ai"]
    models = {c["contributor"].get("model_id") for c in ai}
    assert len(models) == 1 and all(str(m).endswith(str(shown["session"]["model"])) for m in models), models

    log = checks.oxide(compat_repo, "trace", "HEAD", "--format", "git-ai").stdout.rstrip("\n")
    files, meta = spec.read_git_ai(log)
    key = hashlib.sha256(f"{agent}:{native}".encode()).hexdigest()[:16]
    author = _git(compat_repo, "log", "-1", "--format=%cn <%ce>").strip()
    human = "h_" + hashlib.sha256(author.encode()).hexdigest()[:14]
    names = {key: "ai", human: "human"}
    assert {p: {names.get(k, k): sorted(v) for k, v in keys.items()} for p, keys in files.items()} == blamed
    assert meta["base_commit_sha"] == head
    assert meta["prompts"][key]["agent_id"]["tool"] == agent
    assert meta["prompts"][key]["agent_id"]["id"] == native
    assert meta["prompts"][key]["accepted_lines"] == sum(len(k.get("ai", [])) for k in blamed.values())
    # what the post-commit hook wrote (oxide.trace) says the same as the command
    noted = json.loads(_git(compat_repo, "notes", "--ref", "refs/notes/agent-trace", "show", "HEAD"))
    jsonschema.validate(noted, spec.SCHEMA, format_checker=jsonschema.FormatChecker())
    assert {k: v for k, v in noted.items() if k not in ("id", "timestamp")} == {
        k: v for k, v in rec.items() if k not in ("id", "timestamp")}
    assert _git(compat_repo, "notes", "--ref", "refs/notes/ai", "show", "HEAD").rstrip("\n") == log
    if ARTIFACTS:
        folder = Path(ARTIFACTS)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"agent-trace-{agent}.json").write_text(json.dumps(rec, indent=2) + "\n")
        (folder / f"git-ai-{agent}.txt").write_text(log + "\n")
        (folder / f"blame-{agent}.json").write_text(json.dumps(blamed, indent=1) + "\n")
    checks.record({"check": "trace", "agent": agent, "version": d.pin.version, "valid": True,
                   "lines": sum(len(v) for k in blamed.values() for v in k.values())})
