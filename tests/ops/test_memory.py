"""Project memory: writes named by session, rewind past a write with and without --memory, undo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part
from oxide_git.git import refs
from oxide_git.ops import memory
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.rewind import rewind
from oxide_git.ops.undo import undo
from oxide_git.store import writes as store
from tests.cli.test_history import _session
from tests.conftest import NOW_MS, fsck_clean, git, make_ctx, oxide


def test_add_show_rm_log(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 2)
    memory.add(ctx, "build", "Run `make test` before committing.")
    memory.add(make_ctx(repo, NOW_MS + 1), "build", "CI uses Python 3.11.")
    memory.add(make_ctx(repo, NOW_MS + 2), "style", "# Style\nTabs, never spaces.")
    idx = memory.show(ctx)
    assert idx.startswith("# Memory\n")
    assert "- [build](build.md) — Run `make test` before committing." in idx
    assert "- [style](style.md) — Style" in idx
    assert memory.show(ctx, "build") == "Run `make test` before committing.\nCI uses Python 3.11.\n"
    memory.rm(make_ctx(repo, NOW_MS + 3), "style")
    assert "style" not in memory.show(ctx) and set(memory.files(ctx)) == {"MEMORY.md", "build.md"}
    log = memory.log(ctx)
    assert [w.summary for w in log] == ["rm style", "add style", "add build", "add build"]
    last_msg = ctx.index.query("SELECT id FROM messages WHERE session_id=? AND seq=1", (s.id,))[0][0]
    assert all(w.session_id == s.id and w.message_id == last_msg for w in log)
    assert log[-1].at == NOW_MS
    with pytest.raises(memory.BadTopic):
        memory.add(ctx, "../escape", "x")
    fsck_clean(repo)


def _rewind_setup(repo: Path):  # type: ignore[no-untyped-def]
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    memory.add(ctx, "setup", "Use uv.")  # before the checkpoint: stays
    cp = checkpoint(make_ctx(repo, NOW_MS + 10))
    store.append(make_ctx(repo, NOW_MS + 20), s, [Message("user", (Part.text("remember this"),))])
    later = make_ctx(repo, NOW_MS + 30)
    memory.add(later, "gotchas", "The flaky test is test_net.")
    memory.add(later, "setup", "Also export FOO=1.")
    return s, cp


def test_rewind_without_memory_keeps_it(repo: Path) -> None:
    _s, cp = _rewind_setup(repo)
    res = rewind(make_ctx(repo, NOW_MS + 40), cp.id, code=False)
    assert res.messages_dropped == 1
    assert [w["summary"] for w in res.memory_writes] == ["add setup", "add gotchas"]
    assert res.memory_reverted is None
    assert "gotchas" in memory.show(make_ctx(repo))


def test_rewind_with_memory_reverts_and_undo_restores(repo: Path) -> None:
    _s, cp = _rewind_setup(repo)
    ctx = make_ctx(repo, NOW_MS + 40)
    before = git(repo, "rev-parse", refs.MEMORY).strip()
    res = rewind(ctx, cp.id, code=False, memory=True)
    assert res.memory_reverted and len(res.memory_writes) == 2
    fs = memory.files(make_ctx(repo))
    assert set(fs) == {"MEMORY.md", "setup.md"} and fs["setup.md"] == "Use uv.\n"
    assert "gotchas" not in fs["MEMORY.md"]
    log = memory.log(make_ctx(repo))
    assert log[0].summary.startswith("revert 2 write(s)") and len(log[0].reverts) == 2
    assert [w.summary for w in log[1:]] == ["add setup", "add gotchas", "add setup"]  # both kept
    # a second rewind finds nothing left to revert
    again = rewind(make_ctx(repo, NOW_MS + 41), cp.id, code=False, dry_run=True)
    assert again.memory_writes == []
    undo(make_ctx(repo, NOW_MS + 50))
    assert git(repo, "rev-parse", refs.MEMORY).strip() == before
    assert "gotchas" in memory.show(make_ctx(repo))
    fsck_clean(repo)


def test_cli_memory_rewind_and_resume(repo: Path) -> None:
    s, cp = _rewind_setup(repo)
    out = oxide(repo, "rewind", cp.id[:10], "--conversation", "--yes").stderr
    assert "Memory keeps these writes" in out and "add gotchas" in out
    oxide(repo, "undo", "--yes")
    out = oxide(repo, "rewind", cp.id[:10], "--conversation", "--memory", "--yes").stderr
    assert "Reverted 2 memory write(s)" in out
    log = json.loads(oxide(repo, "memory", "log", "--json").stdout)
    assert [w["summary"] for w in log][1:] == ["add setup", "add gotchas", "add setup"]
    oxide(repo, "memory", "add", "notes", "-", input="from stdin\n")
    assert oxide(repo, "memory", "show", "notes").stdout == "from stdin\n"
    ctxj = json.loads(oxide(repo, "resume", s.id[:8], "--format", "json", "--with-memory").stdout)
    first = ctxj["messages"][0]
    assert first["role"] == "system" and first["parts"][0]["text"].startswith("# Memory")
    plain = json.loads(oxide(repo, "resume", s.id[:8], "--format", "json").stdout)
    assert plain["messages"][0]["role"] == "user"


def test_claude_import_export(repo: Path, isolated_env: Path) -> None:
    ctx = make_ctx(repo)
    memory.add(ctx, "build", "make test")
    res = memory.export_claude(ctx)
    dest = Path(res["into"])
    encoded = "".join(c if c.isalnum() else "-" for c in str(repo))
    assert dest == isolated_env / ".claude" / "projects" / encoded / "memory"
    assert sorted(res["files"]) == ["MEMORY.md", "build.md"]
    (dest / "deploy.md").write_text("Deploy with fly.\n")
    (dest / "MEMORY.md").write_text((dest / "MEMORY.md").read_text() + "- [deploy](deploy.md)\n")
    r = json.loads(oxide(repo, "memory", "import", "--from", "claude", "--json").stdout)
    assert r["files"] == ["MEMORY.md", "deploy.md"]
    assert memory.show(make_ctx(repo), "deploy") == "Deploy with fly.\n"
