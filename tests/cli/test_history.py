"""Checkpoint -> edit -> rewind -> undo, fork, resume: in real repositories with worktrees."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pygit2
import pytest

from oxide_git.core.errors import Refused, UntrustedTree
from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.fork import fork
from oxide_git.ops.resume import context
from oxide_git.ops.rewind import rewind
from oxide_git.ops.undo import undo
from oxide_git.store import sessionlog
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, fsck_clean, git, make_ctx, oxide


def snapshot_files(root: Path) -> dict[str, tuple[str, bytes | str, int]]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p), 0)
            else:
                out[rel] = ("file", p.read_bytes(), st.st_mode & 0o111)
    return out


def _session(ctx, n: int = 6, sid: str = "0" * 12 + "c" * 20) -> Session:  # type: ignore[no-untyped-def]
    s = Session(id=sid, agent="claude", native_id="nat-" + sid[-4:], title="work", cwd=str(ctx.repo.workdir),
                worktree=ctx.repo.worktree_id)
    msgs = [Message("user" if i % 2 == 0 else "assistant", (Part.text(f"m{i}"),), created_at=1000 + i)
            for i in range(n)]
    store.append(ctx, s, msgs)
    store.set_current_session(ctx, s.id)
    return s


def test_rewind_code_restores_byte_for_byte_and_undo_returns(repo: Path) -> None:
    (repo / "tool.sh").write_text("#!/bin/sh\necho 1\n")
    os.chmod(repo / "tool.sh", 0o755)
    os.symlink("README.md", repo / "link")
    (repo / "debug.log").write_text("ignored, never touched\n")
    ctx = make_ctx(repo)
    cp = checkpoint(ctx, text="before the agent")
    at_checkpoint = snapshot_files(repo)
    # the agent edits, creates, deletes, chmods and re-points a symlink
    (repo / "README.md").write_text("rewritten\n")
    (repo / "src" / "new.py").write_text("new\n")
    (repo / "src" / "app.py").unlink()
    os.chmod(repo / "tool.sh", 0o644)
    os.unlink(repo / "link")
    os.symlink("src", repo / "link")
    (repo / "debug.log").write_text("ignored, changed by the user\n")
    edited = snapshot_files(repo)
    untouched_mtime = os.stat(repo / ".gitignore").st_mtime_ns
    head, index = git(repo, "rev-parse", "HEAD"), git(repo, "ls-files", "-s")

    res = rewind(make_ctx(repo, NOW_MS + 2), cp.id[:10], conversation=False)
    after = snapshot_files(repo)
    expected = dict(at_checkpoint)
    expected["debug.log"] = edited["debug.log"]  # ignored files are never touched
    assert after == expected
    assert sorted(res.files["modified"]) == ["README.md", "link", "tool.sh"]
    assert res.files["added"] == ["src/app.py"] and res.files["deleted"] == ["src/new.py"]
    assert os.stat(repo / ".gitignore").st_mtime_ns == untouched_mtime  # only differing files written
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "ls-files", "-s") == index

    undo(make_ctx(repo, NOW_MS + 3))
    assert snapshot_files(repo) == edited
    undo(make_ctx(repo, NOW_MS + 4))  # undo twice is redo
    assert snapshot_files(repo) == expected
    fsck_clean(repo)


def test_dry_run_changes_nothing(repo: Path) -> None:
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    (repo / "README.md").write_text("x\n")
    refs_before = git(repo, "for-each-ref")
    res = rewind(make_ctx(repo), cp.id, dry_run=True)
    assert res.files["modified"] == ["README.md"]
    assert (repo / "README.md").read_text() == "x\n"
    assert git(repo, "for-each-ref") == refs_before


def test_conversation_rewind_and_undo(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")  # tied to message 3 (the last)
    store.append(ctx, s, [Message("user", (Part.text("later"),)), Message("assistant", (Part.text("ok"),))])
    res = rewind(make_ctx(repo, NOW_MS + 5), cp.id, code=False)
    assert res.messages_dropped == 2
    assert sessionlog.load(ctx.repo, s.id).count == 4
    old_tip = git(repo, "rev-parse", f"refs/oxide/sessions/{s.id}~1").strip()
    assert sessionlog.load_commit(ctx.repo, pygit2.Oid(hex=old_tip)).count == 6  # still in history
    undo(make_ctx(repo, NOW_MS + 6))
    assert sessionlog.load(ctx.repo, s.id).count == 6
    assert make_ctx(repo).index.query("SELECT count(*) FROM messages WHERE session_id=?", (s.id,))[0][0] == 6


def test_rewind_refuses_over_another_sessions_work(repo: Path) -> None:
    ctx = make_ctx(repo)
    mine = _session(ctx, 2)
    cp = checkpoint(ctx)
    other = _session(ctx, 2, sid="0" * 12 + "d" * 20)
    (repo / "README.md").write_text("other session's edit\n")
    (repo / "src" / "app.py").write_text("my edit\n")
    checkpoint(make_ctx(repo, NOW_MS + 10), session=other.id)
    (repo / "README.md").write_text("other session's second edit\n")
    checkpoint(make_ctx(repo, NOW_MS + 20), session=other.id)
    store.set_current_session(ctx, mine.id)
    with pytest.raises(Refused) as e:
        rewind(make_ctx(repo, NOW_MS + 30), cp.id, conversation=False)
    assert "README.md" in e.value.message and other.id[:12] in e.value.message
    res = rewind(make_ctx(repo, NOW_MS + 40), cp.id, conversation=False, only_mine=True)
    assert res.skipped == ["README.md"]
    assert (repo / "README.md").read_text() == "other session's second edit\n"
    assert (repo / "src" / "app.py").read_text() == "print('hi')\n"


def test_rewind_refuses_other_worktree_without_force(repo: Path, tmp_path: Path) -> None:
    (repo / "README.md").write_text("edited in the main worktree\n")
    cp = checkpoint(make_ctx(repo))
    git(repo, "checkout", "-q", "--", "README.md")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    with pytest.raises(Refused) as e:
        rewind(make_ctx(wt), cp.id, conversation=False)
    assert "worktree main" in e.value.message
    assert (wt / "README.md").read_text() == "hello\n"  # refused: nothing written
    res = rewind(make_ctx(wt), cp.id, conversation=False, force=True)
    assert res.files["modified"] == ["README.md"] and res.written == 1
    assert (wt / "README.md").read_text() == "edited in the main worktree\n"
    assert (repo / "README.md").read_text() == "hello\n"  # the checkpoint's own worktree is untouched


def test_hostile_checkpoint_tree_is_refused(repo: Path) -> None:
    ctx = make_ctx(repo)
    g = ctx.repo.git
    for bad in ("..", ".git", ".GIT", ".git.", "git~1"):
        blob = g.create_blob(b"pwned")
        inner = g.TreeBuilder()
        inner.insert("evil", blob, pygit2.enums.FileMode.BLOB)
        tb = g.TreeBuilder(g.head.peel(pygit2.Commit).tree)
        # a raw tree object with a hostile name, as a remote could send
        raw = f"100644 {bad}\0".encode() + blob.raw if bad not in (".git", ".GIT", ".git.", "git~1") else None
        name = bad
        tree_oid = tb.write()
        entries = g[tree_oid]
        body = b"".join(f"{oct(e.filemode)[2:]} {e.name}\0".encode() + e.id.raw for e in entries)
        body += f"40000 {name}\0".encode() + inner.write().raw
        hostile = g.odb.write(pygit2.enums.ObjectType.TREE, body)
        sig = pygit2.Signature("x", "x@x", 0, 0)
        c = g.create_commit(f"refs/oxide/checkpoints/manual/{hostile}", sig, sig,
                            "oxide: evil\n\nOxide-Kind: manual\nOxide-Worktree: main\nOxide-Branch: main\n",
                            hostile, [g.head.target])
        from oxide_git.store.reindex import reindex

        reindex(ctx)
        with pytest.raises(UntrustedTree):
            rewind(make_ctx(repo), str(c), conversation=False)
        assert not (repo.parent / "evil").exists() and not (repo / ".git" / "evil").exists()
        del raw


def test_fork_shares_history_and_rewind_in_fork_leaves_parent(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 6)
    cp = checkpoint(ctx, kind="prompt", message_id=ctx.index.query(
        "SELECT id FROM messages WHERE session_id=? AND seq=4", (s.id,))[0][0])
    res = fork(make_ctx(repo, NOW_MS + 50), s.id[:14], at="4", title="try again")
    assert res.messages == 4 and res.fork_checkpoint == cp.id
    flog, plog = sessionlog.load(ctx.repo, res.id), sessionlog.load(ctx.repo, s.id)
    assert flog.count == 4 and plog.count == 6
    assert list(flog.commit.parent_ids) == [plog.tip]  # lineage is the commit graph
    assert flog.session.parent_id == s.id
    listing = json.loads(oxide(repo, "list", "--json", "--all").stdout)
    assert {r["id"]: r["parent_id"] for r in listing}[res.id] == s.id
    shown = json.loads(oxide(repo, "show", s.id[:14], "--json").stdout)
    assert shown["session"]["children"] == [res.id]
    parent_before = sessionlog.load(ctx.repo, s.id).tip
    store.append(make_ctx(repo), flog.session, [Message("user", (Part.text("fork work"),))])
    (repo / "README.md").write_text("fork edit\n")
    rewind(make_ctx(repo, NOW_MS + 60), res.fork_checkpoint, conversation=False)
    assert (repo / "README.md").read_text() == "hello\n"
    assert sessionlog.load(ctx.repo, s.id).tip == parent_before
    undo(make_ctx(repo, NOW_MS + 70))
    assert (repo / "README.md").read_text() == "fork edit\n"


def test_undo_of_fork_moves_it_to_trash_and_redo_brings_it_back(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 3)
    res = fork(ctx, s.id)
    undo(make_ctx(repo, NOW_MS + 5))
    assert git(repo, "for-each-ref", f"refs/oxide/sessions/{res.id}") == ""
    assert res.id[:12] in git(repo, "for-each-ref", "refs/oxide/trash")
    undo(make_ctx(repo, NOW_MS + 6))
    assert git(repo, "for-each-ref", f"refs/oxide/sessions/{res.id}") != ""


def test_resume_context_starts_at_compaction(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = Session(id="0" * 12 + "e" * 20, agent="claude", title="long")
    msgs = [Message("user", (Part.text(f"old {i}"),)) for i in range(3)]
    msgs.append(Message("system", (Part.compaction("summary of old"),)))
    msgs.append(Message("user", (Part.text("new"),)))
    msgs.append(Message("tool", (Part.tool_result("c1", "result text"),)))
    store.append(ctx, s, msgs)
    _, it = context(ctx, s.id)
    got = [m for _, m in it]
    assert [m.text() for m in got][:2] == ["summary of old", "new"]
    assert got[2].parts[0].get("output") == "result text"
    _, it = context(ctx, s.id, full=True)
    assert len(list(it)) == 6
    out = json.loads(oxide(repo, "resume", s.id, "--format", "json").stdout)
    assert out["messages"][0]["parts"][0]["type"] == "compaction"
    last = json.loads(oxide(repo, "resume", "--last", "--format", "json").stdout)
    assert last["session"]["id"] == s.id


def _journal_lines(repo: Path) -> list[str]:
    j = make_ctx(repo).repo.worktree_dir / "journal.jsonl"
    return j.read_text().splitlines() if j.exists() else []


def test_undo_dry_run_changes_nothing_then_undo_does(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")
    (repo / "README.md").write_text("after the checkpoint\n")
    store.append(ctx, s, [Message("user", (Part.text("later"),))])
    rewind(make_ctx(repo, NOW_MS + 5), cp.id)
    assert (repo / "README.md").read_text() == "hello\n"
    refs_before = git(repo, "for-each-ref", "refs/oxide/")
    journal_before = _journal_lines(repo)
    rows_before = make_ctx(repo).index.checkpoint_rows(None)
    out = json.loads(oxide(repo, "undo", "--dry-run", "--json").stdout)
    assert out["dry_run"] is True and out["undone"]["op"] == "rewind"
    assert out["files"]["modified"] == ["README.md"]
    assert (repo / "README.md").read_text() == "hello\n"  # nothing written
    assert git(repo, "for-each-ref", "refs/oxide/") == refs_before  # no ref moved (no checkpoint kept)
    assert _journal_lines(repo) == journal_before and sessionlog.load(ctx.repo, s.id).count == 4
    assert make_ctx(repo).index.checkpoint_rows(None) == rows_before  # nor a checkpoint indexed
    indexed = [c["id"] for c in rows_before]
    undo(make_ctx(repo, NOW_MS + 6))
    assert (repo / "README.md").read_text() == "after the checkpoint\n"
    [new] = [c for c in make_ctx(repo).index.checkpoint_rows(None) if c["id"] not in indexed]
    assert new["kind"] == "before-rewind" and new["message"].startswith("before undo of rewind to")
    assert sessionlog.load(ctx.repo, s.id).count == 5


def test_undo_refuses_when_the_session_moved_since_unless_forced(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 4)
    cp = checkpoint(ctx, kind="manual")
    store.append(ctx, s, [Message("user", (Part.text("later"),))])
    rewind(make_ctx(repo, NOW_MS + 5), cp.id, code=False)
    store.append(make_ctx(repo), s, [Message("user", (Part.text("written after the rewind"),))])
    moved = git(repo, "rev-parse", refs.session_ref(s.id)).strip()
    with pytest.raises(Refused) as e:
        undo(make_ctx(repo, NOW_MS + 6))
    assert "moved since" in e.value.message and "--force" in (e.value.hint or "")
    assert git(repo, "rev-parse", refs.session_ref(s.id)).strip() == moved  # nothing lost
    undo(make_ctx(repo, NOW_MS + 7), force=True)
    assert sessionlog.load(ctx.repo, s.id).count == 5
    trashed = git(repo, "for-each-ref", "--format=%(objectname)", "refs/oxide/trash/")
    assert moved in trashed.split()  # the newer state went to the trash, not away
