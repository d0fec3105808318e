"""export: session selection (names, --commit, --range through notes and trailers), formats,
determinism, checkpoints with diffstats, and the JSON schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import git, make_ctx, oxide
from tests.planted import NEEDLES, claude_transcript

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "export.schema.json"


@pytest.fixture
def imported(repo: Path, tmp_path: Path) -> tuple[Path, str]:
    from oxide_git.imports.importing import import_sessions

    oxide(repo, "init")
    path = claude_transcript(tmp_path / "t.jsonl", str(repo), turns=2)
    sid = import_sessions(make_ctx(repo), [("claude", path)]).files[0].sessions[0]
    (repo / "src" / "app.py").write_text("print('hello')\nprint('more')\n")
    oxide(repo, "checkpoint", "-m", "after the fix", "--session", sid)
    return repo, sid


def test_markdown_has_prompts_tools_checkpoints_and_counts(imported: tuple[Path, str]) -> None:
    repo, sid = imported
    md = oxide(repo, "export", sid[:10], "--format", "markdown").stdout
    assert "please fix the deploy script" in md
    assert "<details><summary>Tool call: Bash" in md and "<details><summary>Tool result: Bash" in md
    assert "**Checkpoint `" in md and "src/app.py | 3 ++-" in md
    assert "1 file(s) changed, 2 insertion(s)(+), 1 deletion(s)(-)" in md
    assert "**Redacted:** anthropic_key × " in md
    assert not [n for n in NEEDLES if n in md]


def test_exports_are_deterministic(imported: tuple[Path, str], tmp_path: Path) -> None:
    repo, sid = imported
    for fmt in ("markdown", "html", "json", "jsonl"):
        one = oxide(repo, "export", sid, "--format", fmt).stdout
        env_later = oxide(repo, "export", sid, "--format", fmt, "-o", str(tmp_path / "x")).stderr
        assert "Exported 1 session(s)" in env_later
        assert (tmp_path / "x").read_text() == one, fmt


def test_json_and_jsonl_follow_the_schema(imported: tuple[Path, str]) -> None:
    repo, sid = imported
    schema = json.loads(SCHEMA.read_text())
    doc = json.loads(oxide(repo, "export", sid, "--format", "json").stdout)
    assert doc["format"] == "git-oxide-export" and doc["version"] == 1
    _validate(doc, schema, schema)
    [s] = doc["sessions"]
    assert s["session"]["id"] == sid and len(s["messages"]) == s["session"]["message_count"]
    assert s["checkpoints"][0]["files"][0]["path"] == "src/app.py"
    lines = [json.loads(ln) for ln in oxide(repo, "export", sid, "--format", "jsonl").stdout.splitlines()]
    assert [r["type"] for r in lines[:3]] == ["export", "session", "checkpoint"]
    for rec in lines:
        _validate(rec, schema["$defs"]["record"], schema)


def test_commit_and_range_find_sessions_through_notes_and_trailers(imported: tuple[Path, str]) -> None:
    repo, sid = imported
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.txt").write_text("a")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "with a note")
    git(repo, "notes", "--ref", "oxide", "add", "-m", json.dumps({"oxide": 1, "sessions": [sid], "checkpoints": []}))
    (repo / "b.txt").write_text("b")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-q", "-m", f"with a trailer\n\nOxide-Session: {sid}")
    (repo / "c.txt").write_text("c")
    git(repo, "add", "c.txt")
    git(repo, "commit", "-q", "-m", "with a line note")
    git(repo, "notes", "--ref", "oxide", "add", "-m", "0000000000000000000000000000unknown")
    out = json.loads(oxide(repo, "export", "--range", f"{base}..HEAD", "--format", "json").stdout)
    assert [s["session"]["id"] for s in out["sessions"]] == [sid]
    r = oxide(repo, "export", "--commit", "HEAD~1", "--format", "jsonl")
    assert json.loads(r.stdout.splitlines()[1])["id"] == sid
    r = oxide(repo, "export", "--commit", "HEAD", "--format", "markdown")
    assert "not in this repository" in r.stderr and "No agent session" in r.stdout
    r = oxide(repo, "export", "--range", "nope..HEAD", check=False)
    assert r.returncode == 1 and "hint:" in r.stderr


def _validate(value: object, schema: dict, root: dict) -> None:  # type: ignore[type-arg]
    """A small JSON Schema checker (type, required, properties, items, enum, const, $ref, oneOf)."""
    if "$ref" in schema:
        node: object = root
        for key in schema["$ref"].lstrip("#/").split("/"):
            node = node[key]  # type: ignore[index]
        return _validate(value, node, root)  # type: ignore[arg-type]
    if "oneOf" in schema:
        errors = []
        for sub in schema["oneOf"]:
            try:
                _validate(value, sub, root)
                return None
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(f"{value!r:.80} matches none of oneOf: {errors}")
    types = schema.get("type")
    if types:
        names = types if isinstance(types, list) else [types]
        py = {"object": dict, "array": list, "string": str, "integer": int, "number": (int, float),
              "boolean": bool, "null": type(None)}
        assert any(isinstance(value, py[n]) and not (n in ("integer", "number") and isinstance(value, bool))
                   for n in names), f"{value!r:.80} is not {names}"
    if "const" in schema:
        assert value == schema["const"]
    if "enum" in schema:
        assert value in schema["enum"], f"{value!r} not in {schema['enum']}"
    if isinstance(value, dict):
        for k in schema.get("required", []):
            assert k in value, f"missing {k} in {list(value)}"
        for k, sub in schema.get("properties", {}).items():
            if k in value:
                _validate(value[k], sub, root)
    if isinstance(value, list) and "items" in schema:
        for item in value:
            _validate(item, schema["items"], root)
    return None


def test_harness_context_is_folded_not_shown_as_a_user_turn(repo: Path, tmp_path: Path) -> None:
    """Claude's isMeta lines (local-command caveats) are the harness's, not the user's: the HTML
    and Markdown exports fold them under "harness context", as `show` does."""
    from oxide_git.imports.importing import import_sessions
    from tests.planted import line

    oxide(repo, "init")
    sid_native = "60000000-0000-4000-8000-000000000006"
    caveat = "Caveat: The messages below were generated by the user while running local commands."
    path = tmp_path / "meta.jsonl"
    path.write_text("\n".join([
        line("user", 1, None, {"role": "user", "content": caveat}, sid_native, cwd=str(repo), isMeta=True),
        line("user", 2, 1, {"role": "user", "content": "a real prompt"}, sid_native, cwd=str(repo)),
        line("assistant", 3, 2, {"model": "m", "id": "msg_1", "type": "message", "role": "assistant",
                                 "content": [{"type": "text", "text": "an answer"}]}, sid_native, cwd=str(repo)),
    ]) + "\n")
    sid = import_sessions(make_ctx(repo), [("claude", path)]).files[0].sessions[0]
    html = oxide(repo, "export", sid, "--format", "html").stdout
    folded = html[html.index(caveat[:20]) - 400:html.index(caveat[:20])]
    assert '<details class="harness"><summary>harness context</summary>' in folded
    assert re.search(r"user · #\d+ · harness context <time>", folded)
    assert html.count('class="harness"') == 1  # the real prompt is not folded
    md = oxide(repo, "export", sid, "--format", "markdown").stdout
    assert re.search(r"#### User · #\d+ · harness context\n\n<details><summary>harness context</summary>", md)
    assert re.search(r"#### User · #\d+\n\na real prompt", md)
