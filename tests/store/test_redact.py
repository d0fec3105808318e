"""Redaction: each rule on its own, the allowlist and switch, counts, and nothing escaping to git."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part
from oxide_git.store.redact import Redactor, redact_message, redact_session
from tests.conftest import git, make_ctx, oxide
from tests.planted import NEEDLES, PLANTED, claude_transcript


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_rule_redacts_its_kind(kind: str) -> None:
    text, secret = PLANTED[kind]
    counts: Counter[str] = Counter()
    out = Redactor().text(text, counts)
    assert secret not in out and f"[REDACTED:{kind}]" in out
    assert counts == {kind: 1}
    assert Redactor().text(out, Counter()) == out  # idempotent: a second pass finds nothing


@pytest.mark.parametrize("text", [
    "max_tokens=4096 and input_tokens: 12345678",
    "task-management-system-abcdefghijk is a sk-learn-compatible-estimator-thing",
    "password = os.environ.get('PW') and token = config.api.token",
    "sort_key=name; tokenizer: bert-base-uncased; git@github.com:foo/bar.git",
    "see https://github.com/org/repo and http://localhost:8000/path",
    "password: ${DB_PASSWORD} token=<your token here> secret=CHANGE_ME_LATER",
    "commit 3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39 touched keyboard.py",
    '"tokenAccountingBasis":"local_full_context_estimate"',  # Copilot CLI's compaction line
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    counts: Counter[str] = Counter()
    assert Redactor().text(text, counts) == text and not counts


def test_dict_keys_that_name_secrets_are_judged_like_assignments() -> None:
    counts: Counter[str] = Counter()
    out = Redactor().value({"password": "hunter2!", "api_token": "x8Kd92mLq0PzR7tY", "n": 3,
                            "token": "short", "nested": [{"clientSecret": "Zx81mQp2LkV7tR9wY3nB"}]}, counts)
    assert out == {"password": "[REDACTED:password]", "api_token": "[REDACTED:secret]", "n": 3,
                   "token": "short", "nested": [{"clientSecret": "[REDACTED:secret]"}]}
    assert counts == {"password": 1, "secret": 2}
    # an enum value of snake_case words is not a secret (Copilot CLI 1.0.102's compaction event)
    assert Redactor().value({"tokenAccountingBasis": "local_full_context_estimate"}, counts) == {
        "tokenAccountingBasis": "local_full_context_estimate"}


def test_allowlist_keeps_matching_hits() -> None:
    text, secret = PLANTED["aws_access_key_id"]
    assert Redactor([secret]).text(text, Counter()) == text
    assert Redactor([r"^AKIA"]).text(text, Counter()) == text
    assert secret not in Redactor([r"^NOPE"]).text(text, Counter())


def test_redact_message_walks_every_part_and_counts() -> None:
    m = Message("assistant", (
        Part.text(PLANTED["openai_key"][0]),
        Part.tool_call("c1", "Bash", {"cmd": PLANTED["github_token"][0], "list": [PLANTED["jwt"][0]]}),
        Part.tool_result("c1", [{"type": "text", "text": PLANTED["slack_token"][0]}]),
        Part.other("weird", {"deep": {"deeper": [PLANTED["stripe_key"][0]]}}),
    ), extra={"raw": PLANTED["password"][0]}, unknown={"x": PLANTED["gitlab_token"][0]})
    out, counts = redact_message(m)
    blob = repr(out)
    assert not [n for n in NEEDLES if n in blob]
    assert counts == {k: 1 for k in ("openai_key", "github_token", "jwt", "slack_token", "stripe_key",
                                     "password", "gitlab_token")}
    assert out.extra["redactions"] == counts
    again, more = redact_message(out)
    assert again is out and more == {}


def test_redact_session_sums_messages() -> None:
    from oxide_git.core.model import Session

    s = Session("s1", "claude", title="deploy with " + PLANTED["stripe_key"][0])
    msgs = [Message("user", (Part.text(PLANTED["openai_key"][0]),)) for _ in range(3)]
    s2, _out = redact_session(s, msgs)
    assert s2.redactions == {"openai_key": 3, "stripe_key": 1}
    assert PLANTED["stripe_key"][1] not in (s2.title or "")


def _all_objects(root: Path) -> bytes:
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root,
                          capture_output=True, check=True).stdout


def test_nothing_planted_reaches_git_or_exports(repo: Path, tmp_path: Path) -> None:
    from oxide_git.imports.importing import import_sessions
    from oxide_git.store.sessionlog import load

    oxide(repo, "init")
    path = claude_transcript(tmp_path / "t.jsonl", str(repo), turns=2)
    ctx = make_ctx(repo)
    report = import_sessions(ctx, [("claude", path)])
    assert not report.problems
    sid = report.files[0].sessions[0]
    stored = load(ctx.repo, sid).session.redactions  # type: ignore[union-attr]
    assert set(stored) == set(PLANTED) and all(v >= 2 for v in stored.values())
    # Re-import after the file changed (not just grew): counts must not double.
    path.write_text(path.read_text().replace("please fix", "please FIX"))
    import_sessions(make_ctx(repo), [("claude", path)])
    assert load(ctx.repo, sid).session.redactions == stored  # type: ignore[union-attr]
    oxide(repo, "checkpoint", "-m", "cp", "--session", sid)
    blob = _all_objects(repo)
    assert b"[REDACTED:openai_key]" in blob
    assert not [n for n in NEEDLES if n.encode() in blob]
    index_db = (repo / ".git" / "oxide" / "index.db").read_bytes()
    assert not [n for n in NEEDLES if n.encode() in index_db]
    shown = oxide(repo, "show", sid).stdout
    assert "redacted:" in shown and "openai_key" in shown
    for fmt in ("markdown", "html", "json", "jsonl"):
        out = tmp_path / f"export.{fmt}"
        oxide(repo, "export", sid, "--format", fmt, "-o", str(out))
        text = out.read_text()
        assert not [n for n in NEEDLES if n in text], fmt
        assert "openai_key" in text


def test_config_switch_turns_redaction_off(repo: Path, tmp_path: Path) -> None:
    from oxide_git.imports.importing import import_sessions

    oxide(repo, "init")
    git(repo, "config", "oxide.redact", "false")
    path = claude_transcript(tmp_path / "t.jsonl", str(repo))
    import_sessions(make_ctx(repo), [("claude", path)])
    assert PLANTED["openai_key"][1].encode() in _all_objects(repo)


def test_allowlist_files_are_honoured(repo: Path, tmp_path: Path) -> None:
    from oxide_git.imports.importing import import_sessions

    oxide(repo, "init")
    (repo / ".oxideallow").write_text("# test keys\n" + PLANTED["stripe_key"][1] + "\n")
    (repo / ".git" / "oxide" / "allowlist").write_text("^AKIA\n")
    path = claude_transcript(tmp_path / "t.jsonl", str(repo))
    import_sessions(make_ctx(repo), [("claude", path)])
    blob = _all_objects(repo)
    assert PLANTED["stripe_key"][1].encode() in blob
    assert PLANTED["aws_access_key_id"][1].encode() in blob
    assert PLANTED["openai_key"][1].encode() not in blob


def test_store_append_redacts_and_accumulates(repo: Path) -> None:
    from oxide_git.core.model import Session
    from oxide_git.store import writes as store
    from oxide_git.store.sessionlog import load

    oxide(repo, "init")
    ctx = make_ctx(repo)
    s = Session("0000000000001234567890abcdef1234", "claude")
    store.append(ctx, s, [Message("user", (Part.text(PLANTED["openai_key"][0]),))])
    store.append(ctx, s, [Message("user", (Part.text(PLANTED["openai_key"][0] + " " + PLANTED["jwt"][0]),))])
    log = load(ctx.repo, s.id)
    assert log is not None and log.session.redactions == {"jwt": 1, "openai_key": 2}
    # a rewind that drops the last message takes its counts away
    store.save(ctx, log.session, {}, summary="rewind", truncate_at=1)
    assert load(ctx.repo, s.id).session.redactions == {"openai_key": 1}  # type: ignore[union-attr]


def test_export_redacts_on_its_own_what_was_stored_unredacted(repo: Path, tmp_path: Path) -> None:
    """The second pass: a session stored while redaction was off (or by an older release, or pulled
    from a clone that had it off) still leaves no secret in an export, once redaction is on."""
    from oxide_git.imports.importing import import_sessions

    oxide(repo, "init")
    git(repo, "config", "oxide.redact", "false")
    path = claude_transcript(tmp_path / "t.jsonl", str(repo))
    sid = import_sessions(make_ctx(repo), [("claude", path)]).files[0].sessions[0]
    assert PLANTED["openai_key"][1].encode() in _all_objects(repo)  # stored as it came
    for fmt in ("markdown", "json"):  # with redaction off, export leaves it too
        out = tmp_path / f"off.{fmt}"
        oxide(repo, "export", sid, "--format", fmt, "-o", str(out))
        assert PLANTED["openai_key"][1] in out.read_text(), fmt
    git(repo, "config", "--unset", "oxide.redact")
    for fmt in ("markdown", "html", "json", "jsonl"):
        out = tmp_path / f"export.{fmt}"
        oxide(repo, "export", sid, "--format", fmt, "-o", str(out))
        text = out.read_text()
        assert not [n for n in NEEDLES if n in text], fmt
        assert "[REDACTED:openai_key]" in text, fmt
    whole = json.loads((tmp_path / "export.json").read_text())
    found = whole["sessions"][0]["redactions"] if "sessions" in whole else whole["redactions"]
    assert set(found) == set(PLANTED)  # counted on the way out, every kind
