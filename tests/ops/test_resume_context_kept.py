"""`resume --format`: the model context after a compaction is its summary, then the earlier
messages the agent kept in it, then what came after. Cline copies the recent messages into its
compaction file (``kept``); pi goes on sending the messages from its ``firstKeptEntryId``
(``kept_from``). Both from files the real CLIs wrote (fixtures/cline, fixtures/pi)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from oxide_git.core.model import Part
from tests.conftest import FIXTURES, oxide

CLINE = "1796176846032_h5zab"


def _context(repo: Path, agent: str, path: Path) -> tuple[str, list[dict], list[dict]]:
    """The session of ``path`` whose context starts at a compaction: its id, context, all."""
    oxide(repo, "init")
    oxide(repo, "import", "--agent", agent, str(path))
    for row in json.loads(oxide(repo, "list", "--all", "--json").stdout):
        ctx = json.loads(oxide(repo, "resume", row["id"], "--format", "json").stdout)["messages"]
        if ctx and ctx[0]["parts"][0]["type"] == "compaction":
            full = json.loads(oxide(repo, "resume", row["id"], "--format", "json", "--full").stdout)
            return row["id"], ctx, full["messages"]
    raise AssertionError("no session starts at a compaction")


def test_clines_context_holds_the_messages_its_compaction_kept(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / CLINE
    shutil.copytree(FIXTURES / "cline" / CLINE, folder)
    doc = json.loads((folder / f"{CLINE}.compaction.json").read_text())
    kept = [m["id"] for m in doc["messages"] if m.get("id")]
    assert kept  # the real file keeps two recent messages beside its summary
    sid, ctx, full = _context(repo, "cline", folder / f"{CLINE}.messages.json")
    assert ctx[0]["parts"][0]["type"] == "compaction"
    assert [m["native_id"] for m in ctx[1:1 + len(kept)]] == kept
    at = ctx[0]["seq"]
    after = [m["seq"] for m in full if m["seq"] > at]
    assert [m["seq"] for m in ctx[1 + len(kept):]] == after  # then everything after it, once
    assert all(m["seq"] < at for m in ctx[1:1 + len(kept)])
    md = oxide(repo, "resume", sid, "--format", "markdown").stdout
    assert md.index("Conversation compacted") < md.index(f"#{ctx[1]['seq']}\n")


def test_pis_context_goes_on_from_its_first_kept_entry(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "fork.jsonl"
    shutil.copy(FIXTURES / "pi" / "fork.jsonl", path)
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    [comp] = [e for e in entries if e.get("type") == "compaction"]
    _sid, main, full = _context(repo, "pi", path)
    assert main[0]["parts"][0]["type"] == "compaction" and main[0]["native_id"] == comp["id"]
    by_native = {m["native_id"]: m["seq"] for m in full if m.get("native_id")}
    first, at = by_native[comp["firstKeptEntryId"]], main[0]["seq"]
    assert first < at
    assert [m["seq"] for m in main[1:1 + at - first]] == list(range(first, at))
    assert [m["seq"] for m in main[1 + at - first:]] == [m["seq"] for m in full if m["seq"] > at]


def _stored(repo: Path, compaction: Part, sid: str) -> str:
    """A session of five messages (native ids n0..n3, then the compaction, then one after)."""
    from oxide_git.core.model import Message, Session
    from oxide_git.store import writes as store
    from tests.conftest import make_ctx

    ctx = make_ctx(repo)
    s = Session(id=sid, agent="claude", title="kept")
    msgs = [Message("user", (Part.text(f"old {i}"),), native_id=f"n{i}") for i in range(4)]
    msgs += [Message("system", (compaction,), native_id="c"), Message("user", (Part.text("after"),))]
    store.append(ctx, s, msgs)
    ctx.close()
    return sid


@pytest.mark.parametrize(("compaction", "texts"), [
    (Part.compaction("S", kept=["n2", "missing", 7, "n1"]), ["S", "old 1", "old 2", "after"]),
    (Part.compaction("S", kept_from="n2"), ["S", "old 2", "old 3", "after"]),
    (Part.compaction("S", kept_from="missing"), ["S", "after"]),
    (Part.compaction("S", kept_from=3), ["S", "after"]),
    (Part.compaction("S"), ["S", "after"]),
], ids=["kept-ids", "kept-from", "kept-from-unknown", "kept-from-not-a-name", "none"])
def test_what_a_compaction_kept_is_read_by_native_id_and_nothing_else(
        repo: Path, compaction: Part, texts: list[str]) -> None:
    """Kept ids in the session's order, each once; an id the session lacks, or that is no name,
    adds nothing; markdown and JSON give the same messages."""
    from oxide_git.ops import resume
    from tests.conftest import make_ctx

    sid = _stored(repo, compaction, "0" * 12 + "k" * 20)
    ctx = make_ctx(repo)
    _s, it = resume.context(ctx, sid)
    assert [m.text() or m.parts[0].get("summary") for _q, m in it] == texts
    _s, items = resume.context_json(ctx, sid)
    got = list(items)
    assert [d["parts"][0].get("text") or d["parts"][0].get("summary") for d in got] == texts
    assert len({d["seq"] for d in got}) == len(got)
