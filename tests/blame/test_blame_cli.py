"""`git oxide blame` as a user runs it: text, --porcelain, --json, --summary, -L, --range, errors,
and `export --range` carrying the range's summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.blame.test_blame_history import SID, _turn_and_commit, work  # noqa: F401 - the fixture
from tests.blame_helpers import Clock, FakeAgent
from tests.conftest import git, oxide
from tests.export.test_export import SCHEMA, _validate


def _two_commits(work: tuple[Path, Clock, FakeAgent]) -> tuple[Path, str]:  # noqa: F811
    repo, clock, a = work
    base = git(repo, "rev-parse", "HEAD").strip()
    _turn_and_commit(repo, clock, a)
    a.prompt("more")
    a.edit("app.txt", "three\n", "three\nfour\n")  # not committed
    return repo, base


def test_text_porcelain_json_and_summary(work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    repo, _ = _two_commits(work)
    text = oxide(repo, "blame", "app.txt").stdout.splitlines()
    assert len(text) == 4
    short = json.loads(oxide(repo, "list", "--json").stdout)[0]["id"]
    assert text[0].startswith(SID[:8] + " (claude ") and text[0].endswith(" 1) one")
    assert "(human " in text[2] and text[2].endswith("3) three")
    assert text[3].endswith("4) four") and "(claude" in text[3]
    por = oxide(repo, "blame", "--porcelain", "-L", "3,+2", "app.txt").stdout
    blocks = por.split("line ")[1:]
    assert [b.splitlines()[0] for b in blocks] == ["3", "4"]
    assert "who human\n" in blocks[0] and "\tthree\n" in blocks[0] and "commit " in blocks[0]
    assert f"session {short}\n" in blocks[1] and "agent claude\n" in blocks[1] and "commit" not in blocks[1]
    doc = json.loads(oxide(repo, "blame", "app.txt", "--json").stdout)
    assert [ln["who"] for ln in doc["lines"]] == ["agent", "agent", "human", "agent"]
    assert doc["lines"][0]["session_id"] == SID[:8] and doc["lines"][3]["commit"] is None
    assert doc["summary"]["agent"] == 3
    s = json.loads(oxide(repo, "blame", "app.txt", "--summary", "--json").stdout)
    assert (s["lines"], s["agent"], s["human"], s["by_agent"]) == (4, 3, 1, {"claude": 3})
    assert "agent               3" in oxide(repo, "blame", "app.txt", "--summary").stdout
    # from a sub-folder, the path is the user's
    (repo / "src" / "x.py").write_text("x = 1\n")
    assert oxide(repo / "src", "blame", "x.py").stdout.strip().endswith("1) x = 1")


def test_errors_read_like_git(work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    repo, _ = _two_commits(work)
    for args, words in ((["missing.txt"], "cannot blame missing.txt"),
                        (["app.txt", "--rev", "nope"], "cannot blame app.txt at nope"),
                        (["--range", "nope"], "is not a range"),
                        (["--range", "a..b", "app.txt"], "--range takes no FILE")):
        r = oxide(repo, "blame", *args, check=False)
        assert r.returncode == 1 and r.stderr.startswith("error: ") and words in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    r = oxide(repo, "blame", "-L", "9,2", "app.txt", check=False)
    assert r.returncode == 2 and "-L" in r.stderr
    assert "--porcelain" in oxide(repo, "blame", "-h").stdout


def test_range_in_markdown_and_in_export(work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    repo, base = _two_commits(work)
    md = oxide(repo, "blame", "--range", f"{base}..HEAD").stdout
    assert f"### Who wrote the lines of `{base}..HEAD`" in md
    assert "3 line(s) added by 1 commit(s)." in md
    assert "| claude (agent) | 2 | 66.7% |" in md and "| human | 1 | 33.3% |" in md
    assert "| `app.txt` | 3 | 2 | 1 | 0 | 0 |" in md
    got = json.loads(oxide(repo, "blame", "--range", f"{base}..HEAD", "--json").stdout)
    assert (got["lines"], got["agent"], got["human"]) == (3, 2, 1)
    exported = oxide(repo, "export", "--range", f"{base}..HEAD", "--format", "markdown").stdout
    assert exported.startswith("# Agent sessions\n\n### Who wrote the lines") and "| human | 1 |" in exported
    schema = json.loads(SCHEMA.read_text())
    doc = json.loads(oxide(repo, "export", "--range", f"{base}..HEAD", "--format", "json").stdout)
    _validate(doc, schema, schema)
    assert doc["blame"]["by_agent"] == {"claude": 2}
    lines = [json.loads(x) for x in oxide(repo, "export", "--range", f"{base}..HEAD", "--format", "jsonl").stdout.splitlines()]
    assert [r["type"] for r in lines[:2]] == ["export", "blame"]
    for rec in lines:
        _validate(rec, schema["$defs"]["record"], schema)
    assert "Who wrote the lines of" in oxide(repo, "export", "--range", f"{base}..HEAD", "--format", "html").stdout
    empty = oxide(repo, "blame", "--range", "HEAD..HEAD").stdout
    assert "0 line(s) added by 0 commit(s)." in empty


def test_the_click_form_refuses_what_the_plain_form_leaves_to_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `git oxide blame` hands to click (two output forms, a bad -L, no FILE) is refused there,
    with git's exit codes: in process (the plain form never runs these)."""
    from click.testing import CliRunner

    from oxide_git.cli import main

    monkeypatch.chdir(repo)
    (repo / "f.txt").write_text("a\n")
    both = CliRunner().invoke(main, ["blame", "--porcelain", "--json", "f.txt"])
    assert both.exit_code == 1 and "give one of --porcelain, --json, --summary" in both.output
    bad = CliRunner().invoke(main, ["blame", "-L", "x", "f.txt"])
    assert bad.exit_code == 2 and "is not START,END or START,+COUNT" in bad.output
    none = CliRunner().invoke(main, ["blame"])
    assert none.exit_code == 2 and "give a FILE (or --range A..B)" in none.output
