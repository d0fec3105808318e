"""`git oxide trace`: a commit's attribution as an Agent Trace record (validated against the
published schema, tests/fixtures/agent-trace) and as a Git AI authorship log (read back with a
reader written from the Git AI Standard v3.0.0), the same lines `blame` gives; notes written,
pushed and pulled, carried across an amend."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from oxide_git.store import writes as store
from tests.blame_helpers import Clock, FakeAgent, commit, human_edit
from tests.conftest import git, make_ctx, oxide
from tests.hooks.test_hooks import idle

SID = "0" * 12 + "b" * 20
SCHEMA = json.loads((Path(__file__).parents[1] / "fixtures" / "agent-trace" / "trace-record.schema.json").read_text())


@pytest.fixture
def work(repo: Path) -> tuple[Path, Clock, FakeAgent]:
    oxide(repo, "hooks", "install")
    clock = Clock()
    a = FakeAgent(repo, clock, SID, agent="claude", model="claude-sonnet-4-5")
    a.prompt("start")
    ctx = make_ctx(repo, clock.t)
    store.set_current_session(ctx, SID)
    ctx.close()
    return repo, clock, a


def _turn_and_commit(repo: Path, clock: Clock, a: FakeAgent) -> str:
    a.write("app.txt", "one\ntwo\n")
    a.say("done")
    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\n")
    return commit(repo, "-m", "app")


def run_trace(repo: Path, *args: str) -> Any:
    r = oxide(repo, "trace", *args)
    return r.stdout


def blamed(repo: Path, rev: str) -> dict[str, list[tuple[int, str]]]:
    """blame --json of each file the commit added lines to: {path: [(line, who)]} of its lines."""
    out: dict[str, list[tuple[int, str]]] = {}
    names = git(repo, "diff-tree", "--no-commit-id", "--root", "-r", "--name-only", rev).split()
    short = git(repo, "rev-parse", "--short", rev).strip()
    for path in names:
        doc = json.loads(oxide(repo, "blame", "--json", "--rev", rev, path).stdout)
        out[path] = [(ln["number"], ln["who"]) for ln in doc["lines"] if ln["commit"] and short.startswith(ln["commit"][:7])]
    return {p: v for p, v in out.items() if v}


# a reader of Git AI authorship logs, written from the standard (section 1.2) ----------------------

_KEY = re.compile(r"^(?:[0-9a-f]{16}|[0-9a-f]{7}|h_[0-9a-f]{14}|s_[0-9a-f]{14}::t_[0-9a-f]{14})$")


def read_git_ai(text: str) -> tuple[dict[str, dict[str, list[int]]], dict[str, Any]]:
    """({path: {key: [lines]}}, metadata) of an authorship log; asserts what the spec requires."""
    lines = text.split("\n")
    assert lines.count("---") >= 1, "the divider is a line of exactly ---"
    cut = lines.index("---")
    files: dict[str, dict[str, list[int]]] = {}
    path = None
    for line in lines[:cut]:
        if line.startswith("  "):
            key, _, spec = line[2:].partition(" ")
            assert _KEY.match(key), key
            assert path is not None and " " not in spec and spec
            numbers: list[int] = []
            starts = []
            for part in spec.split(","):
                a, _, b = part.partition("-")
                first, last = int(a), int(b or a)
                assert 1 <= first <= last
                starts.append(first)
                numbers += range(first, last + 1)
            assert starts == sorted(starts)
            files[path].setdefault(key, []).extend(numbers)
        else:
            assert line and not line[0].isspace()
            path = line[1:-1] if line.startswith('"') and line.endswith('"') else line
            files[path] = {}
    meta = json.loads("\n".join(lines[cut + 1:]))
    assert meta["schema_version"] == "authorship/3.0.0"
    assert isinstance(meta["base_commit_sha"], str) and isinstance(meta["prompts"], dict)
    for path, keys in files.items():
        assert keys, f"{path}: a file without attestations is left out"
        for key in keys:
            table = "humans" if key.startswith("h_") else "sessions" if key.startswith("s_") else "prompts"
            assert key.split("::")[0] in meta.get(table, {}), key
    for rec in meta["prompts"].values():
        assert set(rec["agent_id"]) == {"tool", "id", "model"}
        for k in ("total_additions", "total_deletions", "accepted_lines", "overriden_lines"):
            assert isinstance(rec[k], int)
    for rec in meta.get("humans", {}).values():
        assert re.match(r"^.+ <.*>$", rec["author"])
    return files, meta


SPEC_EXAMPLE = """src/main.rs
  s_c9883b05a2487d::t_9f8e7d6c5b4a32 1-10
  h_31dce776f88375 15-20
src/lib.rs
  abcd1234abcd1234 1-50
---
{
  "schema_version": "authorship/3.0.0",
  "git_ai_version": "1.4.5",
  "base_commit_sha": "7734793b756b3921c88db5375a8c156e9532447b",
  "prompts": {
    "abcd1234abcd1234": {
      "agent_id": {"tool": "cursor", "id": "old_session_id", "model": "gpt-4"},
      "human_author": "Developer <dev@example.com>",
      "total_additions": 50, "total_deletions": 0, "accepted_lines": 50, "overriden_lines": 0
    }
  },
  "humans": {"h_31dce776f88375": {"author": "Developer <dev@example.com>"}},
  "sessions": {
    "s_c9883b05a2487d": {"agent_id": {"tool": "claude", "id": "conv_abc123", "model": "claude-sonnet-4-5-20250514"},
                         "human_author": "dev@example.com"}
  }
}"""


def test_the_reader_reads_the_standards_own_example() -> None:
    """The spec's mixed-format example (section 1.2.7) as the reader sees it."""
    files, meta = read_git_ai(SPEC_EXAMPLE)
    assert files == {"src/main.rs": {"s_c9883b05a2487d::t_9f8e7d6c5b4a32": list(range(1, 11)),
                                     "h_31dce776f88375": list(range(15, 21))},
                     "src/lib.rs": {"abcd1234abcd1234": list(range(1, 51))}}
    assert meta["base_commit_sha"].startswith("7734793b")


def test_agent_trace_validates_and_names_the_lines_blame_gives(work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    c = _turn_and_commit(repo, clock, a)
    rec = json.loads(run_trace(repo, "HEAD"))
    # the published schema, its version pattern aside (the record says "1.0" and passes it anyway)
    jsonschema.validate(rec, SCHEMA, format_checker=jsonschema.FormatChecker())
    assert rec["version"] == "1.0" and rec["vcs"] == {"type": "git", "revision": c}
    assert rec["tool"]["name"] == "git-oxide"
    [f] = rec["files"]
    assert f["path"] == "app.txt"
    by_type = {conv["contributor"]["type"]: conv for conv in f["conversations"]}
    ai = by_type["ai"]
    assert ai["contributor"]["model_id"] == "anthropic/claude-sonnet-4-5"
    assert ai["url"] == f"oxide:session/{SID}"
    assert [r["type"] for r in ai["related"]] == ["checkpoint", "prompt"]
    assert ai["related"][1]["url"] == f"oxide:session/{SID}/message/{a.prompt_ids[0]}"
    assert [(r["start_line"], r["end_line"]) for r in ai["ranges"]] == [(1, 2)]
    assert ai["ranges"][0]["content_hash"] == "sha256:" + hashlib.sha256(b"one\ntwo").hexdigest()[:16]
    assert [(r["start_line"], r["end_line"]) for r in by_type["human"]["ranges"]] == [(3, 3)]
    # exactly the lines blame gives the commit, with the same contributor
    kind = {"agent": "ai", "human": "human", "agent or user": "mixed", "before oxide": "unknown"}
    from_trace = sorted((n, conv["contributor"]["type"]) for conv in f["conversations"]
                        for r in conv["ranges"] for n in range(r["start_line"], r["end_line"] + 1))
    assert from_trace == sorted((n, kind[w]) for n, w in blamed(repo, c)["app.txt"])


def test_git_ai_log_parses_as_the_standard_says(work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    c = _turn_and_commit(repo, clock, a)
    text = run_trace(repo, "--format", "git-ai").rstrip("\n")
    files, meta = read_git_ai(text)
    key = hashlib.sha256(f"claude:{a.session.native_id}".encode()).hexdigest()[:16]
    author = git(repo, "log", "-1", "--format=%cn <%ce>").strip()
    human = "h_" + hashlib.sha256(author.encode()).hexdigest()[:14]
    assert files == {"app.txt": {key: [1, 2], human: [3]}}
    assert text.splitlines()[:3] == ["app.txt", f"  {key} 1-2", f"  {human} 3"]
    assert meta["base_commit_sha"] == c
    assert meta["prompts"][key] == {
        "agent_id": {"tool": "claude", "id": a.session.native_id, "model": "claude-sonnet-4-5"},
        "human_author": author, "total_additions": 2, "total_deletions": 0,
        "accepted_lines": 2, "overriden_lines": 0}
    assert meta["humans"] == {human: {"author": author}}
    # serde_json's pretty form, as git-ai writes it
    assert text.partition("---\n")[2] == json.dumps(meta, indent=2, ensure_ascii=False)


def note_on(repo: Path, ref: str, rev: str = "HEAD") -> str | None:
    r = subprocess.run(["git", "notes", f"--ref={ref}", "show", rev], cwd=repo, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def test_write_puts_notes_on_both_refs_and_push_pull_carries_them(
        work: tuple[Path, Clock, FakeAgent], tmp_path: Path) -> None:
    repo, clock, a = work
    c = _turn_and_commit(repo, clock, a)
    assert note_on(repo, "agent-trace") is None and note_on(repo, "ai") is None  # not asked for
    [out] = json.loads(oxide(repo, "trace", "--write", "--json").stdout)
    assert out["ref"] == "refs/notes/agent-trace" and out["commit"] == c
    oxide(repo, "trace", "--write", "--format", "git-ai")
    rec = json.loads(note_on(repo, "agent-trace") or "")
    jsonschema.validate(rec, SCHEMA)
    log = note_on(repo, "ai") or ""
    assert read_git_ai(log.rstrip("\n"))[0]["app.txt"]
    # git-ai reads `git notes --ref=ai`: the same text
    assert log.rstrip("\n") == run_trace(repo, "--format", "git-ai").rstrip("\n")
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    pushed = json.loads(oxide(repo, "push", "--json").stdout)["updated"]
    assert pushed["refs/notes/agent-trace"] == "new" and pushed["refs/notes/ai"] == "new"
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    oxide(b, "init")
    pulled = json.loads(oxide(b, "pull", "--json").stdout)["updated"]
    assert pulled["refs/notes/agent-trace"] == "new" and pulled["refs/notes/ai"] == "new"
    assert note_on(b, "ai", c) == log and json.loads(note_on(b, "agent-trace", c) or "") == rec
    # diverged: each side wrote another commit's note; a pull keeps both (ours where both have one)
    (b / "b.txt").write_text("b\n")
    git(b, "add", "b.txt")
    git(b, "commit", "-q", "-m", "b")
    oxide(b, "trace", "--write", "--format", "git-ai")
    oxide(b, "push")
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    idle(repo)
    oxide(repo, "trace", "--write", "--format", "git-ai")
    assert json.loads(oxide(repo, "pull", "--json").stdout)["updated"]["refs/notes/ai"] == "merged"
    theirs = git(b, "rev-parse", "HEAD").strip()
    assert note_on(repo, "ai", theirs) is not None and note_on(repo, "ai", c) == log


def test_oxide_trace_config_writes_them_at_commit_and_an_amend_carries_them(
        work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    git(repo, "config", "oxide.trace", "agent-trace,git-ai")
    c = _turn_and_commit(repo, clock, a)
    rec = json.loads(note_on(repo, "agent-trace", c) or "")
    assert rec["vcs"]["revision"] == c
    files, meta = read_git_ai((note_on(repo, "ai", c) or "").rstrip("\n"))
    assert meta["base_commit_sha"] == c and sorted(files["app.txt"].values()) == [[1, 2], [3]]
    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\nfour\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--amend", "-m", "app, amended")
    idle(repo)
    amended = git(repo, "rev-parse", "HEAD").strip()
    assert amended != c
    rec = json.loads(note_on(repo, "agent-trace", amended) or "")
    jsonschema.validate(rec, SCHEMA)
    assert rec["vcs"]["revision"] == amended
    types = {conv["contributor"]["type"]: [(r["start_line"], r["end_line"]) for r in conv["ranges"]]
             for conv in rec["files"][0]["conversations"]}
    assert types == {"ai": [(1, 2)], "human": [(3, 4)]}
    files, meta = read_git_ai((note_on(repo, "ai", amended) or "").rstrip("\n"))
    assert meta["base_commit_sha"] == amended


def test_a_range_gives_one_record_per_commit(work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    base = git(repo, "rev-parse", "HEAD").strip()
    c1 = _turn_and_commit(repo, clock, a)
    a.edit("app.txt", "two\n", "two\nmore\n")
    c2 = commit(repo, "-m", "more")
    rows = [json.loads(line) for line in run_trace(repo, f"{base}..HEAD").splitlines()]
    assert [r["vcs"]["revision"] for r in rows] == [c1, c2]
    assert [(r["start_line"], r["end_line"]) for r in rows[1]["files"][0]["conversations"][0]["ranges"]] == [(3, 3)]
    logs = run_trace(repo, f"{base}..HEAD", "--format", "git-ai")
    assert logs.startswith(f"commit {c1}\n") and f"\ncommit {c2}\n" in logs
    bad = oxide(repo, "trace", "nope", check=False)
    assert bad.returncode == 1 and bad.stderr.startswith("error: cannot read nope")


def test_notes_written_by_hand_follow_a_rebase(work: tuple[Path, Clock, FakeAgent]) -> None:
    """Without oxide.trace, a commit that had the notes gets them again when rebased."""
    repo, clock, a = work
    base = git(repo, "rev-parse", "HEAD").strip()
    c = _turn_and_commit(repo, clock, a)
    oxide(repo, "trace", "--write", "--format", "git-ai")
    git(repo, "checkout", "-q", "-b", "side", base)
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", "main")
    git(repo, "rebase", "-q", "side")
    idle(repo)
    new = git(repo, "rev-parse", "HEAD").strip()
    assert new != c
    files, meta = read_git_ai((note_on(repo, "ai", new) or "").rstrip("\n"))
    assert meta["base_commit_sha"] == new and sorted(files["app.txt"].values()) == [[1, 2], [3]]
    assert note_on(repo, "agent-trace", new) is None  # only the formats it had


def test_assisted_by_trailers_name_the_agent_and_model_of_the_staged_lines(
        work: tuple[Path, Clock, FakeAgent]) -> None:
    repo, clock, a = work
    git(repo, "config", "oxide.trailers", "true")
    other = FakeAgent(repo, clock, "1" * 12 + "c" * 20, agent="codex", model="gpt-5-codex")
    other.prompt("other")
    a.write("app.txt", "one\ntwo\n")
    other.write("lib.txt", "x\n")
    a.write("unstaged.txt", "not in this commit\n")
    human_edit(repo, clock, "notes.txt", "mine\n")
    git(repo, "add", "app.txt", "lib.txt", "notes.txt")
    git(repo, "commit", "-q", "-m", "work")
    msg = git(repo, "log", "-1", "--format=%B")
    got = [line for line in msg.splitlines() if line.startswith(("Assisted-by:", "Oxide-Session:"))]
    assert got == [f"Oxide-Session: {SID}", "Assisted-by: claude:claude-sonnet-4-5", "Assisted-by: codex:gpt-5-codex"]
    # a commit of the human's lines only: the session's trailer, no Assisted-by
    human_edit(repo, clock, "notes.txt", "mine\nmore\n")
    git(repo, "commit", "-q", "-a", "-m", "human")
    msg = git(repo, "log", "-1", "--format=%B")
    assert f"Oxide-Session: {SID}" in msg and "Assisted-by:" not in msg


def test_the_github_workflow_puts_attribution_usage_and_traces_where_it_says(
        work: tuple[Path, Clock, FakeAgent], tmp_path: Path) -> None:
    """The step of docs/ci/github-actions.yml, run as the runner runs it (bash -e)."""
    repo, clock, a = work
    base = git(repo, "rev-parse", "HEAD").strip()
    c = _turn_and_commit(repo, clock, a)
    text = (Path(__file__).resolve().parents[2] / "docs" / "ci" / "github-actions.yml").read_text()
    step = text.split("- name: Attribution, usage and traces\n", 1)[1].split("run: |\n", 1)[1]
    body = []
    for line in step.splitlines():
        if not line.startswith(" " * 10):
            break
        body.append(line[10:])
    script = "\n".join(body)
    script = script.replace("origin/${{ github.base_ref }}", base)
    summary = tmp_path / "summary.md"
    r = subprocess.run(["bash", "-e", "-c", script], cwd=repo, capture_output=True, text=True,
                       env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary),
                            "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]})
    assert r.returncode == 0, r.stderr
    md = summary.read_text()
    assert "| claude (agent) | 2 | 66.7% |" in md
    assert "| claude:claude-sonnet-4-5 | 2 | 66.7% |" in md  # the share per agent and model
    assert "### What the sessions cost" in md
    assert isinstance(json.loads((repo / "usage.json").read_text()), list)
    [rec] = [json.loads(line) for line in (repo / "agent-trace.jsonl").read_text().splitlines()]
    jsonschema.validate(rec, SCHEMA)
    assert rec["vcs"]["revision"] == c


def test_blame_reads_other_tools_notes_for_lines_oxide_has_no_checkpoint_for(repo: Path) -> None:
    """A commit made without oxide, noted by git-ai (refs/notes/ai) and by an Agent Trace tool."""
    (repo / "ext.txt").write_text("a\nb\nc\nd\n")
    git(repo, "add", "ext.txt")
    git(repo, "commit", "-q", "-m", "by another tool")
    c = git(repo, "rev-parse", "HEAD").strip()
    log = SPEC_EXAMPLE.replace("src/lib.rs", "ext.txt").replace("1-50", "1-2")
    git(repo, "notes", "--ref=ai", "add", "-m", log, c)
    rec = {"version": "1.0", "id": "550e8400-e29b-41d4-a716-446655440000", "timestamp": "2026-01-23T14:30:00Z",
           "files": [{"path": "ext.txt", "conversations": [
               {"contributor": {"type": "ai", "model_id": "openai/gpt-5"}, "ranges": [{"start_line": 2, "end_line": 3}]},
               {"contributor": {"type": "human"}, "ranges": [{"start_line": 4, "end_line": 4}]}]}]}
    jsonschema.validate(rec, SCHEMA)
    before = json.loads(oxide(repo, "blame", "--json", "ext.txt").stdout)["lines"]  # the cache is keyed on the refs
    assert [ln["who"] for ln in before] == ["agent", "agent", "before oxide", "before oxide"]
    assert "(agent-trace note)" not in oxide(repo, "blame", "ext.txt").stdout  # a text answer, kept
    git(repo, "notes", "--ref=agent-trace", "add", "-m", json.dumps(rec), c)
    doc = json.loads(oxide(repo, "blame", "--json", "ext.txt").stdout)
    got = [(ln["who"], ln["agent"], ln["model"], ln["source"]) for ln in doc["lines"]]
    assert got == [("agent", "cursor", "gpt-4", "git-ai note"),  # the Git AI log wins where both speak
                   ("agent", "cursor", "gpt-4", "git-ai note"),
                   ("agent", "openai", "gpt-5", "agent-trace note"),
                   ("human", None, None, "agent-trace note")]
    text = oxide(repo, "blame", "ext.txt").stdout.splitlines()
    assert "cursor (git-ai note)" in text[0] and "human (agent-trace note)" in text[3]
    assert "source agent-trace note" in oxide(repo, "blame", "--porcelain", "ext.txt").stdout
