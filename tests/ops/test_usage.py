"""`git oxide usage` and the session totals (issue 35, part 4): for each agent, what `usage`
sums equals the agent's own records summed here from the raw fixture file, each response once."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, git, make_ctx

Tokens = tuple[int, int, int, int]  # input (uncached), output, cache read, cache write


def _cli(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str, code: int = 0) -> Any:
    from click.testing import CliRunner

    from oxide_git.cli import main

    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == code, (r.output, r.exception)
    return r


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue  # the fixtures' damaged lines
        if isinstance(obj, dict):
            yield obj


def _add(a: Tokens, b: Tokens) -> Tokens:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


# The agents' own records, read from the raw files (each its own way, without git oxide's code) ---

def raw_claude(path: Path) -> Tokens:
    last: dict[str, dict[str, int]] = {}  # a response's lines repeat its message.id: the last one counts
    for o in _lines(path):
        m = o.get("message")
        if o.get("type") == "assistant" and isinstance(m, dict) and isinstance(m.get("usage"), dict):
            last[m["id"]] = m["usage"]
    out: Tokens = (0, 0, 0, 0)
    for u in last.values():
        out = _add(out, (u.get("input_tokens", 0), u.get("output_tokens", 0),
                         u.get("cache_read_input_tokens", 0), u.get("cache_creation_input_tokens", 0)))
    return out


def raw_codex(path: Path) -> Tokens:
    out: Tokens = (0, 0, 0, 0)
    prev = None
    for o in _lines(path):
        p = o.get("payload") or {}
        if o.get("type") != "event_msg" or p.get("type") != "token_count" or not p.get("info"):
            continue
        if p["info"]["total_token_usage"] == prev:
            continue  # the same event written again: a turn counts once
        prev = p["info"]["total_token_usage"]
        last = p["info"]["last_token_usage"]
        cached = last.get("cached_input_tokens", 0)
        out = _add(out, (last["input_tokens"] - cached, last["output_tokens"], cached,
                         last.get("cache_write_input_tokens", 0)))
    return out


def raw_opencode(storage: Path) -> tuple[Tokens, float]:
    out: Tokens = (0, 0, 0, 0)
    cost = 0.0
    for f in (storage / "message").rglob("*.json"):
        m = json.loads(f.read_text())
        t = m.get("tokens")
        if m.get("role") == "assistant" and t:
            out = _add(out, (t["input"], t["output"] + t.get("reasoning", 0), t["cache"]["read"],
                             t["cache"]["write"]))
            cost += m.get("cost", 0)
    return out, cost


def raw_opencode_export(path: Path) -> Tokens:
    out: Tokens = (0, 0, 0, 0)
    for m in json.loads(path.read_text())["messages"]:
        t = m["info"].get("tokens")
        if m["info"]["role"] == "assistant" and t:
            out = _add(out, (t["input"], t["output"] + t.get("reasoning", 0), t["cache"]["read"], t["cache"]["write"]))
    return out


def raw_gemini(folder: Path) -> Tokens:
    seen: dict[str, Tokens] = {}
    for f in folder.rglob("*.json*"):
        for o in _lines(f) if f.suffix == ".jsonl" else [json.loads(f.read_text())]:
            for r in o.get("messages", [o]):
                t = r.get("tokens")
                if r.get("type") == "gemini" and isinstance(t, dict):
                    seen[r["id"]] = (t["input"] - t.get("cached", 0) + t.get("tool", 0),
                                     t["output"] + t.get("thoughts", 0), t.get("cached", 0), 0)
    out: Tokens = (0, 0, 0, 0)
    for t in seen.values():
        out = _add(out, t)
    return out


def raw_qwen(folder: Path) -> Tokens:
    seen: dict[str, Tokens] = {}
    for f in folder.rglob("*.jsonl"):
        for o in _lines(f):
            u = o.get("usageMetadata")
            if o.get("type") == "assistant" and isinstance(u, dict):
                cached = u.get("cachedContentTokenCount", 0)
                prompt = u["promptTokenCount"] + u.get("toolUsePromptTokenCount", 0)
                out = u["candidatesTokenCount"]
                # Qwen Code 0.24's record of an OpenAI-style answer: candidates are the completion
                # tokens, thoughts included (its converter: candidatesTokenCount = completion_tokens,
                # thoughtsTokenCount = reasoning_tokens; totalTokenCount = total_tokens)
                if u.get("totalTokenCount") != prompt + out:
                    out += u.get("thoughtsTokenCount", 0)
                seen[o["uuid"]] = (prompt - cached, out, cached, 0)
    out: Tokens = (0, 0, 0, 0)
    for t in seen.values():
        out = _add(out, t)
    return out


def raw_copilot(folder: Path) -> Tokens:
    seen: dict[str, Tokens] = {}  # a session resumed or forked writes its events again: by their id
    for f in [folder] if folder.is_file() else folder.rglob("events.jsonl"):
        for o in _lines(f):
            if o.get("type") == "session.usage_record":
                u = o["data"]["usage"]
                # inputTokens holds the cache's share: Copilot CLI 1.0.102 reckons the uncached
                # input as inputTokens - cacheReadTokens - cacheWriteTokens
                read, write = u.get("cacheReadTokens", 0), u.get("cacheWriteTokens", 0)
                seen[o["id"]] = (u["inputTokens"] - read - write, u["outputTokens"], read, write)
    out: Tokens = (0, 0, 0, 0)
    for t in seen.values():
        out = _add(out, t)
    return out


def raw_cline(folder: Path) -> tuple[Tokens, float]:
    out: Tokens = (0, 0, 0, 0)
    cost = 0.0
    for f in folder.glob("*.messages.json"):
        for m in json.loads(f.read_text())["messages"]:
            u = m.get("metrics")
            if isinstance(u, dict):  # inputTokens holds the cache's share (Cline 3's cost: the difference)
                read, write = u.get("cacheReadTokens", 0), u.get("cacheWriteTokens", 0)
                out = _add(out, (u["inputTokens"] - read - write, u["outputTokens"], read, write))
                cost += u.get("cost", 0)
    return out, cost


def raw_pi(path: Path) -> Tokens:
    out: Tokens = (0, 0, 0, 0)
    for o in _lines(path):
        u = (o.get("message") or {}).get("usage")
        if o.get("type") == "message" and isinstance(u, dict):
            out = _add(out, (u["input"], u["output"], u["cacheRead"], u["cacheWrite"]))
    return out


def raw_aider(path: Path) -> tuple[Tokens, float]:
    scale = {"": 1, "k": 1000}
    out: Tokens = (0, 0, 0, 0)
    cost = 0.0
    release: tuple[int, ...] = ()
    for line in path.read_text().splitlines():
        if m := re.match(r"> Aider v(\d+)\.(\d+)\.(\d+)", line):
            release = tuple(int(x) for x in m.groups())
        if not line.startswith("> Tokens:"):
            continue
        got = {what: int(float(n) * scale[unit.lower()])
               for n, unit, what in re.findall(r"([\d.]+)([kK]?) (sent|received|cache write|cache hit)", line)}
        sent, hit, write = got.get("sent", 0), got.get("cache hit", 0), got.get("cache write", 0)
        if release >= (0, 86, 2):
            # 0.86.2 (litellm 1.81.10): sent = prompt_tokens (the whole prompt) + the cache write again
            sent = max(0, sent - hit - 2 * write)
        out = _add(out, (sent, got.get("received", 0), hit, write))
        m = re.search(r"Cost: \$([\d.]+) message", line)
        cost += float(m.group(1)) if m else 0
    return out, cost


def _usage(repo: Path, monkeypatch: pytest.MonkeyPatch, agent: str, *paths: Path) -> list[dict[str, Any]]:
    for p in paths:
        _cli(repo, monkeypatch, "import", "--agent", agent, str(p))
    return json.loads(_cli(repo, monkeypatch, "usage", "--by", "agent", "--json").output)


def _tokens(row: dict[str, Any]) -> Tokens:
    return (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"], row["cache_write_tokens"])


CASES = [
    ("claude", [FIXTURES / "claude" / "split_response.jsonl"], raw_claude),
    ("claude", [FIXTURES / "claude" / "compaction.jsonl"], raw_claude),
    ("codex", [FIXTURES / "codex" / "turns.jsonl"], raw_codex),
    ("codex", [next((FIXTURES / "codex").glob("rollout-2026-*.jsonl"))], raw_codex),
    ("opencode", [FIXTURES / "opencode" / "db-1.18.33" / "export.json"], raw_opencode_export),  # a real run
    ("opencode", list((FIXTURES / "opencode" / "export").glob("*.json")), raw_opencode_export),
    ("gemini", [FIXTURES / "gemini" / "project"], raw_gemini),
    ("gemini", [FIXTURES / "gemini" / "subagent"], raw_gemini),
    ("qwen", [FIXTURES / "qwen" / "projects"], raw_qwen),
    ("copilot", [FIXTURES / "copilot" / "81c03215-76d1-48c4-bea3-4d764f350eaa"], raw_copilot),
    ("copilot", [FIXTURES / "copilot"], raw_copilot),  # forks and sub-agents among them
    ("copilot", [FIXTURES / "copilot" / "edge_cases.jsonl"], raw_copilot),
    ("pi", [FIXTURES / "pi" / "basic.jsonl"], raw_pi),
    ("pi", [FIXTURES / "pi" / "responses.jsonl"], raw_pi),
    ("pi", [FIXTURES / "pi" / "tree.jsonl"], raw_pi),  # branches: the shared entries count once
    ("gemini", [FIXTURES / "gemini" / "rewind"], raw_gemini),
    ("qwen", [FIXTURES / "qwen" / "rewind"], raw_qwen),
    # real runs whose answers had a cached share and reasoning (fixtures/usage/SOURCE.md)
    ("copilot", [FIXTURES / "usage" / "copilot-1.0.102" / "events.jsonl"], raw_copilot),
    ("cline", [FIXTURES / "usage" / "cline-3.0.65" / "1796644990521_xfag5"], lambda p: raw_cline(p)[0]),
    ("qwen", [FIXTURES / "usage" / "qwen-0.24.4"], raw_qwen),
]


@pytest.mark.parametrize(("agent", "paths", "raw"), CASES, ids=[f"{c[0]}-{c[1][0].name[:20]}" for c in CASES])
def test_usage_is_the_agents_own_records_each_response_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch, agent: str, paths: list[Path], raw: Any) -> None:
    want: Tokens = (0, 0, 0, 0)
    for p in paths:
        want = _add(want, raw(p))
    assert any(want), "the fixture records usage"
    [row] = _usage(repo, monkeypatch, agent, *paths)
    assert row["agent"] == agent
    assert _tokens(row) == want


@pytest.mark.parametrize(("agent", "path"), [
    ("copilot", "copilot-1.0.102/events.jsonl"), ("cline", "cline-3.0.65/1796644990521_xfag5"),
    ("qwen", "qwen-0.24.4")])
def test_cached_input_and_reasoning_count_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch, agent: str, path: str) -> None:
    """What the model server sent these real sessions (fixtures/usage/SOURCE.md): 1,370 prompt
    tokens of which 250 cached, 110 output tokens of which 10 reasoning. Copilot CLI's and
    Cline's input holds the cached share (counted twice once); Qwen Code's candidates hold the
    reasoning its thoughts repeat (counted twice once)."""
    [row] = _usage(repo, monkeypatch, agent, FIXTURES / "usage" / path)
    assert _tokens(row) == (1120, 110, 250, 0)
    assert row["responses"] == 4


def test_aider_sent_holds_the_cache_hit_and_write(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Aider 0.86.2's line of an Anthropic answer (317 prompt tokens: 251 uncached, 55 read from
    the cache, 11 written): "328 sent, 11 cache write, 55 cache hit". Each token counts once."""
    [row] = _usage(repo, monkeypatch, "aider", FIXTURES / "usage" / "aider-0.86.2-anthropic.md")
    assert _tokens(row) == (251, 23, 55, 11)
    # a history that names no release (or an older one) keeps its sent as the uncached input
    old = repo.parent / "old.md"
    old.write_text((FIXTURES / "usage" / "aider-0.86.2-anthropic.md").read_text().replace(
        "> Aider v0.86.2", "> Aider v0.85.0").replace("12:12:10", "12:13:10"))  # another session
    [both] = _usage(repo, monkeypatch, "aider", old)
    assert _tokens(both) == (251 + 328, 23 * 2, 55 * 2, 11 * 2)


def test_sums_of_an_older_reading_are_made_again(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sums kept by a build that read the records otherwise (tables version 1: Copilot CLI's
    cached share counted twice) are not taken: they are made again."""
    path = FIXTURES / "usage" / "copilot-1.0.102" / "events.jsonl"
    _usage(repo, monkeypatch, "copilot", path)
    with sqlite3.connect(repo / ".git" / "oxide" / "index.db") as conn:
        conn.execute("UPDATE usage_spent SET input=input+250")  # as version 1 summed it
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('usage_tables', '1')")
    [row] = json.loads(_cli(repo, monkeypatch, "usage", "--json").output)
    assert _tokens(row) == (1120, 110, 250, 0)


def test_claude_split_response_counts_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Five lines of one response (msg_A, the same usage repeated, then its final counts): once."""
    [row] = _usage(repo, monkeypatch, "claude", FIXTURES / "claude" / "split_response.jsonl")
    assert _tokens(row) == (3 + 5, 125 + 7, 17000, 0)
    assert row["responses"] == 2
    # claude-opus-4-6: $5 in, $25 out, $0.50 cache read per million (the package's table)
    assert row["cost_usd"] == pytest.approx((8 * 5 + 132 * 25 + 17000 * 0.5) / 1e6)


def test_codex_repeated_token_count_counts_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [row] = _usage(repo, monkeypatch, "codex", FIXTURES / "codex" / "turns.jsonl")
    assert _tokens(row) == (750, 65, 0, 0)  # the last running total, not the events added up


def test_agents_own_cost_is_used(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenCode, Cline and Aider record their cost: their figure counts, not the table's."""
    storage = FIXTURES / "opencode" / "storage"
    (tokens, cost), = [raw_opencode(storage)]
    [row] = _usage(repo, monkeypatch, "opencode", storage)
    assert _tokens(row) == tokens
    assert row["cost_usd"] == pytest.approx(cost)


def test_cline_and_aider_records(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cline = [FIXTURES / "cline" / "1796170000000_edgea", FIXTURES / "cline" / "1796162970748_d4qjp"]
    aider = FIXTURES / "aider" / "tokens.md"
    rows = {r["agent"]: r for r in _usage(repo, monkeypatch, "cline", *cline)}
    rows.update({r["agent"]: r for r in _usage(repo, monkeypatch, "aider", aider)})
    want, _ = raw_cline(cline[0])
    want = _add(want, raw_cline(cline[1])[0])
    assert _tokens(rows["cline"]) == want
    assert rows["cline"]["cost_usd"] is None  # fake-model's responses without a cost have no price
    a_tokens, _ = raw_aider(aider)
    assert any(a_tokens)
    assert _tokens(rows["aider"]) == a_tokens


def test_by_each_key_since_and_json_fields(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cli(repo, monkeypatch, "import", "--agent", "claude", str(FIXTURES / "claude" / "split_response.jsonl"))
    _cli(repo, monkeypatch, "import", "--agent", "codex", str(FIXTURES / "codex" / "turns.jsonl"))
    fields = {"session", "agent", "model", "input_tokens", "output_tokens", "cache_read_tokens",
              "cache_write_tokens", "cost_usd"}
    by_session = json.loads(_cli(repo, monkeypatch, "usage", "--json").output)
    assert len(by_session) == 2 and all(fields <= r.keys() and r["session"] for r in by_session)
    totals = sum(r["output_tokens"] for r in by_session)
    for by in ("agent", "model", "day"):
        rows = json.loads(_cli(repo, monkeypatch, "usage", "--by", by, "--json").output)
        assert all(fields | {by} <= r.keys() for r in rows)
        assert sum(r["output_tokens"] for r in rows) == totals
    days = json.loads(_cli(repo, monkeypatch, "usage", "--by", "day", "--json").output)
    assert [d["day"] for d in days] == ["2026-02-01", "2026-03-01"]  # claude's, then codex's
    later = json.loads(_cli(repo, monkeypatch, "usage", "--by", "agent", "--since", "2026-02-15", "--json").output)
    assert [r["agent"] for r in later] == ["codex"]
    models = {r["model"]: r for r in json.loads(_cli(repo, monkeypatch, "usage", "--by", "model", "--json").output)}
    assert set(models) == {"claude-opus-4-6", "gpt-5-codex", "gpt-5.1-codex"}
    text = _cli(repo, monkeypatch, "usage", "--by", "agent").output.splitlines()
    assert text[0].split()[:3] == ["AGENT", "INPUT", "OUTPUT"]
    assert text[-1].split()[0] == "total" and text[-1].split()[2] == f"{totals:,}"
    assert len({line.index("OUTPUT") if "OUTPUT" in line else 0 for line in text[:1]}) == 1
    _cli(repo, monkeypatch, "usage", "--since", "not a day", code=1)


def test_unknown_model_has_no_cost_and_a_price_file_overrides(
        repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    [row] = _usage(repo, monkeypatch, "copilot", FIXTURES / "copilot" / "81c03215-76d1-48c4-bea3-4d764f350eaa")
    assert row["model"] == "fake-model" and row["cost_usd"] is None
    assert "-" in _cli(repo, monkeypatch, "usage").output.splitlines()[-1].split()
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"fake-model": {"input": 1.0, "output": 2.0}}}))
    git(repo, "config", "oxide.prices", str(prices))
    [row] = json.loads(_cli(repo, monkeypatch, "usage", "--by", "agent", "--json").output)
    assert row["cost_usd"] == pytest.approx((row["input_tokens"] * 1.0 + row["output_tokens"] * 2.0
                                             + row["cache_read_tokens"] * 1.0 + row["cache_write_tokens"] * 1.0) / 1e6)
    prices.write_text(json.dumps({"models": {"fake-model": {"input": 10.0, "output": 0}}}))
    monkeypatch.setenv("OXIDE_PRICES", str(prices))  # the environment's file wins over git config
    [row2] = json.loads(_cli(repo, monkeypatch, "usage", "--by", "agent", "--json").output)
    assert row2["cost_usd"] == pytest.approx((row["input_tokens"] + row["cache_read_tokens"]
                                              + row["cache_write_tokens"]) * 10.0 / 1e6)
    prices.write_text("{not json")
    assert "cannot read the price table" in _cli(repo, monkeypatch, "usage", code=1).output


def test_show_prints_the_session_totals(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cli(repo, monkeypatch, "import", "--agent", "claude", str(FIXTURES / "claude" / "split_response.jsonl"))
    [s] = json.loads(_cli(repo, monkeypatch, "list", "--json").output)
    out = _cli(repo, monkeypatch, "show", s["id"], "--no-pager").output.splitlines()
    [line] = [ln for ln in out if ln.startswith("usage:")]
    assert "8 in, 132 out, 17,000 cache read, 0 cache write" in line and "$0.0118" in line


def test_cache_follows_the_log_and_reindex(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The totals kept in the index follow a session's log: an append is counted, a fork's
    copied messages are not counted again, and a dropped index is made again."""
    src = FIXTURES / "claude" / "split_response.jsonl"
    work = repo.parent / "claude.jsonl"
    lines = src.read_text().splitlines(keepends=True)
    work.write_text("".join(lines[:5]))  # msg_A's first lines only
    _cli(repo, monkeypatch, "import", "--agent", "claude", str(work))
    [first] = json.loads(_cli(repo, monkeypatch, "usage", "--json").output)
    assert first["output_tokens"] == 1
    work.write_text("".join(lines))
    _cli(repo, monkeypatch, "import", "--agent", "claude", str(work))
    [row] = json.loads(_cli(repo, monkeypatch, "usage", "--json").output)
    assert _tokens(row) == (8, 132, 17000, 0)
    _cli(repo, monkeypatch, "fork", row["session"])
    rows = json.loads(_cli(repo, monkeypatch, "usage", "--by", "agent", "--json").output)
    assert _tokens(rows[0]) == (8, 132, 17000, 0)  # the fork spent nothing of its own
    db = repo / ".git" / "oxide" / "index.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM usage_seen").fetchone()[0] == 2
    _cli(repo, monkeypatch, "reindex")
    rows = json.loads(_cli(repo, monkeypatch, "usage", "--by", "agent", "--json").output)
    assert _tokens(rows[0]) == (8, 132, 17000, 0)
    _cli(repo, monkeypatch, "rm", row["session"], "--recursive", "--yes")
    assert json.loads(_cli(repo, monkeypatch, "usage", "--json").output) == []
    with sqlite3.connect(db) as conn:  # the removed sessions' rows go too
        assert conn.execute("SELECT count(*) FROM usage_seen").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM usage_spent").fetchone()[0] == 0


def test_session_total_in_process(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oxide_git.ops.usage import line, session_total

    _cli(repo, monkeypatch, "import", "--agent", "pi", str(FIXTURES / "pi" / "basic.jsonl"))
    ctx = make_ctx(repo)
    [s] = ctx.index.session_rows()
    t = session_total(ctx, s["id"])
    assert t is not None and t["cost_usd"] == 0.0  # pi recorded its cost: 0 for its fake model
    assert line(t).endswith("cost $0.00")
    ctx.close()


def test_aider_keeps_the_tokens_of_a_request_that_failed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`> Tokens: 1 sent, 2 received.` after an error, with no answer to hold it, was text only."""
    _cli(repo, monkeypatch, "import", "--agent", "aider", str(FIXTURES / "aider" / "tokens.md"))
    [s] = json.loads(_cli(repo, monkeypatch, "list", "--json").output)
    shown = json.loads(_cli(repo, monkeypatch, "show", s["id"], "--json").output)
    [failed] = [m for m in shown["messages"] if m["role"] == "tool" and m["parts"][0]["is_error"]]
    assert failed["usage"]["input_tokens"] == 1 and failed["usage"]["output_tokens"] == 2


def test_html_export_and_picker_preview_show_the_totals(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oxide_git.cli.picker import Model
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.store import writes as store

    ctx = make_ctx(repo)
    s = Session(id="0" * 11 + "1" + "a" * 20, agent="claude", title="priced", worktree="main", updated_at=2000)
    store.append(ctx, s, [Message("user", (Part.text("hi"),)),
                          Message("assistant", (Part.text("hello"),), model="claude-sonnet-4-5",
                                  usage={"input_tokens": 1000, "output_tokens": 2000,
                                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})])
    want = "1,000 in, 2,000 out, 0 cache read, 0 cache write tokens; cost $0.0330"  # $3 + $15 a million
    assert any(want in line for line in Model(ctx, True).preview())
    ctx.close()
    html = _cli(repo, monkeypatch, "export", s.id, "--format", "html").output
    assert f"<dt>Usage</dt><dd>{want}</dd>" in html


def test_copilot_cost_is_premium_requests_not_dollars(
        repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"gpt-5.4": {"input": 1.0, "output": 1.0}}}))
    monkeypatch.setenv("OXIDE_PRICES", str(prices))
    [row] = _usage(repo, monkeypatch, "copilot", FIXTURES / "copilot" / "edge_cases.jsonl")
    assert row["model"] == "gpt-5.4"
    assert row["cost_usd"] == pytest.approx(15 / 1e6)  # its record says "cost": 1e21


def test_since_forms_prices_errors_and_an_empty_store(
        repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from oxide_git.core.errors import OxideError
    from oxide_git.ops import prices
    from oxide_git.ops.usage import report, since_day

    now = 1_796_083_200_000  # 2026-12-01T00:00:00Z
    assert since_day("7d", now) == "2026-11-24" and since_day("2w", now) == "2026-11-17"
    assert since_day("2026-11-30T23:59:00+02:00", now) == "2026-11-30"
    assert "No usage recorded" in _cli(repo, monkeypatch, "usage").output
    ctx = make_ctx(repo)
    with pytest.raises(OxideError, match="cannot count usage by 'week'"):
        report(ctx, "week")
    ctx.close()
    with pytest.raises(OxideError, match="cannot read the price table"):
        prices.load(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    for doc in ({"models": {"m": {"input": 1}}}, {"models": []}):
        bad.write_text(json.dumps(doc))
        with pytest.raises(OxideError, match="cannot read the price table"):
            prices.load(str(bad))
    bad.write_text(json.dumps({"m": {"input": 1, "output": 2}}))  # the models alone: read as well
    table = prices.load(str(bad))
    assert prices.find(table, "M") == (1.0, 2.0, 1.0, 1.0)
    assert prices.find(table, "anthropic/claude-sonnet-4-5-20250929") == (3.0, 15.0, 0.3, 3.75)
    assert prices.find(table, None) is None and prices.find(table, "fake-model") is None


def test_tables_of_another_build_are_made_again(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cli(repo, monkeypatch, "import", "--agent", "pi", str(FIXTURES / "pi" / "basic.jsonl"))
    db = repo / ".git" / "oxide" / "index.db"
    with sqlite3.connect(db) as conn:  # an older shape, as another build left it
        conn.execute("DROP TABLE IF EXISTS usage_seen")
        conn.execute("CREATE TABLE usage_seen (session_id TEXT PRIMARY KEY, log_commit TEXT)")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('usage_tables', '0')")
    [row] = json.loads(_cli(repo, monkeypatch, "usage", "--json").output)
    assert _tokens(row) == raw_pi(FIXTURES / "pi" / "basic.jsonl")


def test_show_does_not_wait_to_read_a_long_session(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A header's line reads at most READ_LIMIT messages from git; past it `usage` counts them."""
    from oxide_git.ops import usage

    monkeypatch.setattr(usage, "READ_LIMIT", 3)
    _cli(repo, monkeypatch, "import", "--agent", "claude", str(FIXTURES / "claude" / "split_response.jsonl"))
    [s] = json.loads(_cli(repo, monkeypatch, "list", "--json").output)
    head = _cli(repo, monkeypatch, "show", s["id"], "--no-pager").output
    assert "usage:    not counted yet in this long session; `git oxide usage` counts it" in head
    _cli(repo, monkeypatch, "usage")
    assert "usage:    8 in, 132 out" in _cli(repo, monkeypatch, "show", s["id"], "--no-pager").output


def test_a_log_git_lacks_is_left_out(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cli(repo, monkeypatch, "import", "--agent", "pi", str(FIXTURES / "pi" / "basic.jsonl"))
    _cli(repo, monkeypatch, "import", "--agent", "claude", str(FIXTURES / "claude" / "split_response.jsonl"))
    db = repo / ".git" / "oxide" / "index.db"
    with sqlite3.connect(db) as conn:  # the index names a log commit git does not have
        conn.execute("UPDATE sessions SET log_commit=? WHERE agent='pi'", ("1" * 40,))
    rows = json.loads(_cli(repo, monkeypatch, "usage", "--by", "agent", "--json").output)
    assert [r["agent"] for r in rows] == ["claude"]


def test_what_a_merge_brought_in_counts_in_the_fork() -> None:
    """`merge` copies a fork's turns into its parent, each naming where it came from."""
    from oxide_git.ops.usage import session_rows

    answer = {"role": "assistant", "created_at": 0, "model": "m", "extra": {},
              "usage": {"input_tokens": 10, "output_tokens": 1}}
    merged = {**answer, "extra": {"merged_from": {"session": "f" * 32, "seq": 1}}}
    [row] = session_rows("claude", [(0, answer), (1, merged)])
    assert row[2:4] == (10, 1) and row[-1] == 1
