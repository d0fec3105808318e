"""`git oxide merge`: a fork's conversation and code back into the session it left, undoable."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oxide_git.cli import main
from oxide_git.core.errors import Refused
from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.fork import fork
from oxide_git.ops.merge import MARKER, merge
from oxide_git.ops.undo import undo
from oxide_git.store import journal, sessionlog
from oxide_git.store import writes as store
from tests.conftest import FIXTURES, NOW_MS, fsck_clean, git, make_ctx

PARENT = "0" * 12 + "a" * 20


def _cli(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str, code: int = 0) -> Any:
    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == code, (r.output, r.exception)
    return r


def _fork_turns(ctx: Any, fork_id: str, path: str = "feature.py", body: str = "def feature():\n    return 1\n") -> None:
    s = sessionlog.load_required(ctx.repo, fork_id).session
    store.append(ctx, s, [
        Message("user", (Part.text("add a feature module"),), created_at=NOW_MS + 10),
        Message("assistant", (Part.text("Writing it."), Part.tool_call("call-1", "Write", {"file_path": path})),
                created_at=NOW_MS + 11),
        Message("user", (Part.tool_result("call-1", f"wrote {path}"),), created_at=NOW_MS + 12),
        Message("assistant", (Part.text("Done: the feature is in."),), created_at=NOW_MS + 13),
    ])


def _scenario(repo: Path, *, path: str = "feature.py", body: str = "def feature():\n    return 1\n") -> tuple[str, str]:
    """A session (two turns, a checkpoint, two more turns) and a fork of it after its first two
    messages that wrote ``path`` and checkpointed; the worktree is back as the parent left it."""
    ctx = make_ctx(repo)
    parent = Session(id=PARENT, agent="claude", native_id="nat-parent", title="parent work",
                     cwd=str(repo), worktree=ctx.repo.worktree_id)
    store.append(ctx, parent, [Message("user", (Part.text("hello"),), created_at=NOW_MS),
                               Message("assistant", (Part.text("hi"),), created_at=NOW_MS + 1)])
    store.set_current_session(ctx, PARENT)
    checkpoint(ctx, session=PARENT, text="after the first turn")
    f = fork(make_ctx(repo, NOW_MS + 5), PARENT, at="2", title="feature idea")
    store.append(ctx, sessionlog.load_required(ctx.repo, PARENT).session,
                 [Message("user", (Part.text("the parent goes on"),), created_at=NOW_MS + 20),
                  Message("assistant", (Part.text("on it"),), created_at=NOW_MS + 21)])
    _fork_turns(ctx, f.id, path, body)
    target = repo / path
    old = target.read_bytes() if target.exists() else None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body)
    checkpoint(make_ctx(repo, NOW_MS + 30), session=f.id, text="the fork's work")
    if old is None:
        target.unlink()
    else:
        target.write_bytes(old)
    return PARENT, f.id


def _texts(repo: Path, sid: str) -> list[str]:
    log = sessionlog.load_required(make_ctx(repo).repo, sid)
    return [m.text() for _q, m in sessionlog.iter_messages(make_ctx(repo).repo, log.commit.tree)]


def test_merge_brings_files_and_turns_and_undo_reverts_both(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent, fork_id = _scenario(repo)
    head, index = git(repo, "rev-parse", "HEAD"), git(repo, "ls-files", "-s")
    tip_before = refs.read(make_ctx(repo).repo.git, refs.session_ref(parent))
    res = merge(make_ctx(repo, NOW_MS + 100), fork_id[:10])
    assert res.target["id"] == parent and res.fork_point == 1
    assert res.files["added"] == ["feature.py"] and not res.conflicts
    assert (repo / "feature.py").read_text() == "def feature():\n    return 1\n"
    assert res.messages_added == 5  # the marker, then the fork's four messages
    assert any("resume 00000000 --into claude" in n for n in res.notes)  # its own file lacks them
    texts = _texts(repo, parent)
    assert texts[:4] == ["hello", "hi", "the parent goes on", "on it"]
    assert texts[4].startswith(MARKER) and fork_id in texts[4] and "feature idea" in texts[4]
    assert texts[5:] == ["add a feature module", "Writing it.", "", "Done: the feature is in."]
    log = sessionlog.load_required(make_ctx(repo).repo, parent)
    msgs = dict(sessionlog.iter_messages(make_ctx(repo).repo, log.commit.tree))
    assert msgs[6].parts[1].get("call_id") == "call-1" and msgs[7].parts[0].get("output") == "wrote feature.py"
    assert msgs[6].extra["merged_from"] == {"session": fork_id, "seq": 3, "agent": "claude"}
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "ls-files", "-s") == index
    # the merged turns are the target's own: its model context carries them, search finds them
    doc = json.loads(_cli(repo, monkeypatch, "resume", parent[:10], "--format", "json").stdout)
    dumped = json.dumps(doc)
    assert "add a feature module" in dumped and "wrote feature.py" in dumped and "Done: the feature is in." in dumped
    assert "parent work" in _cli(repo, monkeypatch, "search", "feature").stdout
    shown = _cli(repo, monkeypatch, "show", parent[:10], "--no-pager").stdout
    assert MARKER in shown and "merged from" in shown
    tree = _cli(repo, monkeypatch, "list", "--tree").stdout
    assert "merged into" in tree
    entry = journal.last(make_ctx(repo))
    assert entry.op == "merge" and entry.files_before and entry.files_after
    undo(make_ctx(repo, NOW_MS + 200))
    assert not (repo / "feature.py").exists()
    assert refs.read(make_ctx(repo).repo.git, refs.session_ref(parent)) == tip_before
    assert _texts(repo, parent) == ["hello", "hi", "the parent goes on", "on it"]
    fsck_clean(repo)


def test_merging_twice_adds_nothing_and_a_grown_fork_adds_only_its_new_turns(repo: Path) -> None:
    parent, fork_id = _scenario(repo)
    first = merge(make_ctx(repo, NOW_MS + 100), fork_id)
    assert first.messages_added == 5
    entries = len(journal.entries(make_ctx(repo)))
    again = merge(make_ctx(repo, NOW_MS + 101), fork_id)
    assert again.messages_added == 0 and again.already_merged == 4 and again.written == 0
    assert len(journal.entries(make_ctx(repo))) == entries  # nothing changed: nothing journaled
    ctx = make_ctx(repo, NOW_MS + 102)
    store.append(ctx, sessionlog.load_required(ctx.repo, fork_id).session,
                 [Message("user", (Part.text("one more thing"),), created_at=NOW_MS + 102)])
    grown = merge(make_ctx(repo, NOW_MS + 103), fork_id, conversation=True, code=False)
    assert grown.messages_added == 2 and grown.already_merged == 4
    assert _texts(repo, parent)[-1] == "one more thing"


def test_a_conflict_is_written_with_git_markers_listed_and_exits_1(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent, fork_id = _scenario(repo, path="README.md", body="hello from the fork\n")
    (repo / "README.md").write_text("hello from the parent\n")
    git(repo, "commit", "-qam", "the parent's change")
    r = _cli(repo, monkeypatch, "merge", fork_id[:10], "--yes", code=1)
    text = (repo / "README.md").read_text()
    assert "<<<<<<< worktree" in text and ">>>>>>> fork " in text and "=======" in text
    assert "hello from the parent" in text and "hello from the fork" in text
    assert "CONFLICT (both changed): README.md" in r.output
    assert sessionlog.load_required(make_ctx(repo).repo, parent).count == 9


def test_uncommitted_changes_are_merged_as_a_side_never_overwritten(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _parent, fork_id = _scenario(repo, path="src/app.py", body="print('hi')\nprint('fork')\n")
    (repo / "src" / "app.py").write_text("print('user')\nprint('hi')\n")  # uncommitted, another line
    (repo / "notes.txt").write_text("the user's own file\n")
    r = _cli(repo, monkeypatch, "merge", fork_id[:10], "--code", "--yes")
    assert (repo / "src" / "app.py").read_text() == "print('user')\nprint('hi')\nprint('fork')\n"
    assert (repo / "notes.txt").read_text() == "the user's own file\n"
    assert "uncommitted changes (2 file(s)) as its side: none was overwritten" in r.output
    undo(make_ctx(repo, NOW_MS + 300))
    assert (repo / "src" / "app.py").read_text() == "print('user')\nprint('hi')\n"


def test_digest_keeps_prompts_answers_and_files(repo: Path) -> None:
    parent, fork_id = _scenario(repo)
    res = merge(make_ctx(repo, NOW_MS + 100), fork_id, digest_only=True, code=False)
    assert res.messages_added == 3
    texts = _texts(repo, parent)[4:]
    assert texts[0].startswith(MARKER) and "Files it changed: feature.py" in texts[0]
    assert "Its 1 prompt(s) and 1 final answer(s) follow." in texts[0], texts[0]
    assert texts[1:] == ["add a feature module", "Done: the feature is in."]
    assert not (repo / "feature.py").exists()


def _objects(repo: Path) -> str:
    return git(repo, "count-objects", "-v")


def test_dry_run_writes_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _parent, fork_id = _scenario(repo)
    (repo / "README.md").write_text("dirty\n")
    before = (git(repo, "for-each-ref"), _objects(repo), git(repo, "status", "--porcelain"),
              len(journal.entries(make_ctx(repo))))
    r = _cli(repo, monkeypatch, "merge", fork_id[:10], "--dry-run")
    assert "add    feature.py" in r.output and "append 5 message(s)" in r.output
    assert "Dry run: nothing was written" in r.output
    after = (git(repo, "for-each-ref"), _objects(repo), git(repo, "status", "--porcelain"),
             len(journal.entries(make_ctx(repo))))
    assert after == before and not (repo / "feature.py").exists()
    j = json.loads(_cli(repo, monkeypatch, "merge", fork_id[:10], "--dry-run", "--json").stdout)
    assert j["messages_added"] == 5 and j["files"]["added"] == ["feature.py"] and j["dry_run"]


def test_a_fork_of_a_fork_merges_into_either_ancestor(repo: Path) -> None:
    parent, fork_id = _scenario(repo)
    ctx = make_ctx(repo, NOW_MS + 50)
    grand = fork(ctx, fork_id, at="5", title="deeper")  # after the fork's prompt and first answer
    store.append(ctx, sessionlog.load_required(ctx.repo, grand.id).session,
                 [Message("user", (Part.text("go deeper"),), created_at=NOW_MS + 51)])
    into_fork = merge(make_ctx(repo, NOW_MS + 60), grand.id, conversation=True, code=False)
    assert into_fork.target["id"] == fork_id and into_fork.messages_added == 2  # marker + its one turn
    into_parent = merge(make_ctx(repo, NOW_MS + 61), grand.id, into=parent, code=False)
    # the fork's first three turns it shares, then its own: after the marker
    assert into_parent.messages_added == 5
    assert _texts(repo, parent)[-4:] == ["add a feature module", "Writing it.", "", "go deeper"]


def test_refusals(repo: Path) -> None:
    parent, _fork_id = _scenario(repo)
    with pytest.raises(Refused, match="not a fork"):
        merge(make_ctx(repo), parent)
    with pytest.raises(Refused, match="into itself"):
        merge(make_ctx(repo), parent, into=parent)


def test_delete_and_binary_conflicts_keep_a_side_and_are_listed(repo: Path) -> None:
    (repo / "blob.bin").write_bytes(b"\x00base\x00")
    (repo / "gone.txt").write_text("base\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "files")
    _parent, fork_id = _scenario(repo)
    # the fork's checkpoint, then: it deleted README.md, changed gone.txt and blob.bin
    ctx = make_ctx(repo, NOW_MS + 40)
    saved = {p: (repo / p).read_bytes() for p in ("README.md", "gone.txt", "blob.bin")}
    (repo / "README.md").unlink()
    (repo / "gone.txt").write_text("fork\n")
    (repo / "blob.bin").write_bytes(b"\x00fork\x00")
    checkpoint(ctx, session=fork_id, text="more fork work")
    for p, data in saved.items():
        (repo / p).write_bytes(data)
    # the worktree: changed README.md and blob.bin, deleted gone.txt
    (repo / "README.md").write_text("hello, edited\n")
    (repo / "blob.bin").write_bytes(b"\x00mine\x00")
    (repo / "gone.txt").unlink()
    res = merge(make_ctx(repo, NOW_MS + 100), fork_id, conversation=False)
    kinds = {c["path"]: c["kind"] for c in res.conflicts}
    assert kinds["README.md"].startswith("deleted by the fork") and kinds["blob.bin"].startswith("binary")
    assert kinds["gone.txt"].startswith("deleted in the worktree")
    assert (repo / "README.md").read_text() == "hello, edited\n"
    assert (repo / "blob.bin").read_bytes() == b"\x00mine\x00" and (repo / "gone.txt").read_text() == "fork\n"
    assert res.messages_added == 0


def test_an_unrelated_session_merges_whole_into_a_named_one(repo: Path) -> None:
    parent, _fork_id = _scenario(repo)
    ctx = make_ctx(repo, NOW_MS + 50)
    other = Session(id="0" * 12 + "b" * 20, agent="codex", native_id="nat-other", title="elsewhere",
                    cwd=str(repo), worktree=ctx.repo.worktree_id)
    store.append(ctx, other, [Message("user", (Part.text("write other.txt"),), created_at=NOW_MS + 50),
                              Message("assistant", (Part.text("written"),), created_at=NOW_MS + 51)])
    (repo / "other.txt").write_text("other\n")
    checkpoint(ctx, session=other.id, text="other's work")
    (repo / "other.txt").unlink()
    res = merge(make_ctx(repo, NOW_MS + 100), other.id, into=parent[:14])
    assert res.ancestor is None and res.fork_point is None and res.messages_added == 3
    assert res.files["added"] == ["other.txt"] and (repo / "other.txt").read_text() == "other\n"
    assert _texts(repo, parent)[-2:] == ["write other.txt", "written"]


def test_a_continuation_merges_into_the_session_its_fork_left(repo: Path) -> None:
    """A fork handed to an agent (`resume --into`) and continued there: the continuation holds the
    export (the fork's history), then its own turns; it merges into the fork's parent."""
    parent, fork_id = _scenario(repo)
    ctx = make_ctx(repo, NOW_MS + 60)
    f = sessionlog.load_required(ctx.repo, fork_id)
    exported = [m for _q, m in sessionlog.iter_messages(ctx.repo, f.commit.tree)]
    store.save(ctx, dataclasses.replace(f.session, source={"exports": {
        "claude": {"native_id": "nat-cont", "messages": len(exported)}}}), {},
        summary="exported to claude as nat-cont")
    cont = Session(id="0" * 12 + "d" * 20, agent="claude", native_id="nat-cont", title="hello",  # the agent's: its first prompt
                   cwd=str(repo), worktree=ctx.repo.worktree_id, parent_id=fork_id,
                   source={"continues": fork_id})
    store.append(ctx, cont, [dataclasses.replace(m, id="") for m in exported]
                 + [Message("user", (Part.text("continued in the agent"),), created_at=NOW_MS + 61)])
    res = merge(make_ctx(repo, NOW_MS + 100), cont.id, code=False)
    assert res.target["id"] == parent and res.messages_added == 6  # marker, the fork's 4, the new turn
    texts = _texts(repo, parent)
    assert texts[-6].startswith(MARKER)
    # the fork's title names it, not the one the agent gave its continuation (the parent's first
    # prompt, which the export begins with: make compat)
    assert '"feature idea"' in texts[-6] and '"hello"' not in texts[-6], texts[-6]
    assert texts[-5:] == ["add a feature module", "Writing it.", "", "Done: the feature is in.",
                          "continued in the agent"]


def test_a_fork_linked_by_its_fork_message_merges_after_it(repo: Path) -> None:
    """A fork an import linked to its parent by the last message they share (no fork_seq)."""
    parent, _fork_id = _scenario(repo)
    ctx = make_ctx(repo, NOW_MS + 70)
    shared = ctx.index.query("SELECT id FROM messages WHERE session_id=? AND seq=1", (parent,))[0][0]
    linked = Session(id="0" * 12 + "e" * 20, agent="claude", native_id="nat-linked", title="linked",
                     cwd=str(repo), worktree=ctx.repo.worktree_id, parent_id=parent, fork_message_id=shared)
    store.append(ctx, linked, [Message("user", (Part.text("hello"),), created_at=NOW_MS),
                               Message("assistant", (Part.text("hi"),), created_at=NOW_MS + 1),
                               Message("user", (Part.text("a linked turn"),), created_at=NOW_MS + 71)])
    res = merge(make_ctx(repo, NOW_MS + 100), linked.id, code=False)
    assert res.fork_point == 1 and res.messages_added == 2
    assert _texts(repo, parent)[-1] == "a linked turn"


def test_without_a_checkpoint_only_the_conversation_merges(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent, _fork_id = _scenario(repo)
    bare = fork(make_ctx(repo, NOW_MS + 80), parent, at="2", title="talk only")
    ctx = make_ctx(repo, NOW_MS + 81)
    store.append(ctx, sessionlog.load_required(ctx.repo, bare.id).session,
                 [Message("user", (Part.text("just talk"),), created_at=NOW_MS + 81)])
    r = _cli(repo, monkeypatch, "merge", bare.id, "--yes")
    assert "no checkpoint" in r.output and "1 message(s)" not in r.output
    assert _texts(repo, parent)[-1] == "just talk"
    r = _cli(repo, monkeypatch, "merge", bare.id, "--yes")
    assert "Already merged" in r.output


def test_tool_calls_after_the_forks_checkpoint_are_named(repo: Path) -> None:
    _parent, fork_id = _scenario(repo)
    ctx = make_ctx(repo, NOW_MS + 90)
    store.append(ctx, sessionlog.load_required(ctx.repo, fork_id).session, [
        Message("assistant", (Part.tool_call("call-2", "Edit", {"file_path": "late.py"}),), created_at=NOW_MS + 90)])
    res = merge(make_ctx(repo, NOW_MS + 100), fork_id, dry_run=True)
    assert any("1 tool call(s) after its latest checkpoint" in n and str(repo) in n for n in res.notes)


def test_a_conflicted_merge_run_again_adds_nothing_and_after_undo_merges_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _parent, fork_id = _scenario(repo, path="README.md", body="hello from the fork\n")
    (repo / "README.md").write_text("hello from the parent\n")  # uncommitted: the worktree's side
    merge(make_ctx(repo, NOW_MS + 100), fork_id)
    conflicted = (repo / "README.md").read_text()
    assert conflicted.count("<<<<<<<") == 1
    again = merge(make_ctx(repo, NOW_MS + 101), fork_id)
    assert not again.conflicts and again.written == 0 and again.messages_added == 0
    assert any("merged into this worktree already" in n for n in again.notes)
    assert (repo / "README.md").read_text() == conflicted  # no markers inside markers
    undo(make_ctx(repo, NOW_MS + 102))
    assert (repo / "README.md").read_text() == "hello from the parent\n"
    redo = merge(make_ctx(repo, NOW_MS + 103), fork_id, conversation=False)
    assert [c["path"] for c in redo.conflicts] == ["README.md"]
    # the fork goes on: only what it changed since the merge comes in
    (repo / "README.md").write_text("resolved\n")
    ctx = make_ctx(repo, NOW_MS + 104)
    (repo / "extra.txt").write_text("more\n")
    checkpoint(ctx, session=fork_id, text="the fork goes on")
    (repo / "extra.txt").unlink()
    (repo / "README.md").write_text("resolved\n")
    later = merge(make_ctx(repo, NOW_MS + 105), fork_id, conversation=False)
    assert later.files["added"] == ["extra.txt"] and not later.conflicts
    assert (repo / "README.md").read_text() == "resolved\n"
    assert any("only what it changed since" in n for n in later.notes)


def test_without_yes_off_a_terminal_it_refuses_and_changes_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent, fork_id = _scenario(repo)
    r = _cli(repo, monkeypatch, "merge", fork_id[:10], code=1)
    assert "refusing to merge without confirmation" in r.output and "--yes" in r.output
    assert not (repo / "feature.py").exists() and len(_texts(repo, parent)) == 4


def test_the_parent_merges_into_its_fork_too(repo: Path) -> None:
    parent, fork_id = _scenario(repo)
    res = merge(make_ctx(repo, NOW_MS + 100), parent, into=fork_id, code=False)
    assert res.ancestor == parent and res.fork_point == 1 and res.messages_added == 3
    assert _texts(repo, fork_id)[-2:] == ["the parent goes on", "on it"]


def test_what_the_forks_checkpoint_left_out_is_left_alone(repo: Path) -> None:
    """A file the fork's checkpoint skipped (grown too large there) is not deleted by the merge."""
    (repo / "big.dat").write_text("small\n")  # untracked, in the checkpoint the two diverged at
    _parent, fork_id = _scenario(repo)
    git(repo, "config", "oxide.maxFileSize", "10")
    (repo / "big.dat").write_text("x" * 100)  # the fork made it too large to be checkpointed
    checkpoint(make_ctx(repo, NOW_MS + 40), session=fork_id, text="with a big file")
    (repo / "big.dat").write_text("small\n")
    res = merge(make_ctx(repo, NOW_MS + 100), fork_id, conversation=False)
    assert "big.dat" not in res.files["deleted"] and (repo / "big.dat").read_text() == "small\n"
    assert any("left big.dat as it is" in n for n in res.notes)


def test_the_targets_own_transcript_growing_after_a_merge_keeps_the_merged_turns(tmp_path: Path) -> None:
    """The user merges a fork into a session an agent keeps writing (its own transcript), then the
    agent goes on and `import` reads its new lines: they come after the merged turns, which stay
    (the import's cursor belongs to what the session's tip holds, and the merge moved the tip)."""
    from tests.sync_team import Team

    team = Team(tmp_path, n=1)  # one clone: a Claude Code transcript imported as the agent writes it
    a = team.clones[0]
    team.talk(0)
    with team.ctx(a) as ctx:
        f = fork(ctx, team.sid, title="try it")
        _fork_turns(ctx, f.id)
    with team.ctx(a) as ctx:
        merge(ctx, f.id, code=False)
    merged = team.texts(a)
    assert merged is not None and "Done: the feature is in." in merged
    team.talk(0)  # the agent's own transcript grows, and is imported
    after = team.texts(a)
    assert after is not None and after[:len(merged)] == merged  # nothing merged was overwritten
    assert after[len(merged):] == ["A4 user", "A4 assistant"]  # the agent's new turn, after them


# Anthropic Messages content blocks (what Claude Code sends its model from a transcript's lines)
CLAUDE_BLOCKS = {"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking",
                 "server_tool_use", "web_search_tool_result"}


def test_another_agents_merged_turns_reach_claude_as_foreign_ones(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Codex session (a real rollout) merged into a Claude session, resumed in Claude: the merged
    turns are Codex's records, written the way a Codex session is handed to Claude (its harness
    context left out, its calls as Claude's tools), never as Claude's own lines: Codex's events
    (token_count, task_started...) as content blocks, its item fields on them, were sent to the
    model by the real Claude Code (make compat), which the Messages API refuses."""
    parent, _fork_id = _scenario(repo)
    rollout = FIXTURES / "codex" / \
        "rollout-2026-12-01T20-03-01-01a23334-175b-7030-bb12-84938bd24286.jsonl"
    _cli(repo, monkeypatch, "import", "--agent", "codex", str(rollout))
    codex_sid = make_ctx(repo).index.resolve_session("01a23334-175b-7030-bb12-84938bd24286")
    res = merge(make_ctx(repo, NOW_MS + 100), codex_sid, into=parent, code=False)
    assert res.messages_added > 5
    log = sessionlog.load_required(make_ctx(repo).repo, parent)
    came = [m.extra["merged_from"] for _q, m in sessionlog.iter_messages(make_ctx(repo).repo, log.commit.tree)
            if "merged_from" in m.extra]
    assert came and all(c["agent"] == "codex" for c in came)
    out = json.loads(_cli(repo, monkeypatch, "resume", parent, "--into", "claude", "--json").stdout)
    [path] = out["written"]
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    blocks = [b for ln in lines if isinstance((ln.get("message") or {}).get("content"), list)
              for b in ln["message"]["content"]]
    kinds = {str(b.get("type")) for b in blocks}
    assert kinds <= CLAUDE_BLOCKS, sorted(kinds - CLAUDE_BLOCKS)
    assert not [b for b in blocks if {"codex_type", "native", "status"} & b.keys()], "Codex's fields on a block"
    assert {ln["type"] for ln in lines} <= {"user", "assistant", "system"}
    calls = [b["name"] for b in blocks if b["type"] == "tool_use"]
    assert "Bash" in calls, calls  # Codex's exec_command handed over as Claude's own tool
    dumped = json.dumps(lines)
    assert "<environment_context>" not in dumped  # Codex's harness context is no user turn of Claude's
    assert any("codex" in x for x in out["lost"]), out["lost"]


CODEX_ROLLOUT = FIXTURES / "codex" / \
    "rollout-2026-12-01T20-03-01-01a23334-175b-7030-bb12-84938bd24286.jsonl"


def _prompts_and_answers(repo: Path, sid: str) -> list[str]:
    log = sessionlog.load_required(make_ctx(repo).repo, sid)
    return [m.text() for _q, m in sessionlog.iter_messages(make_ctx(repo).repo, log.commit.tree)
            if m.role in ("user", "assistant") and m.text() and not m.is_harness()]


def _import_into(repo: Path, monkeypatch: pytest.MonkeyPatch, sid: str, agent: str) -> Path:
    out = json.loads(_cli(repo, monkeypatch, "resume", sid, "--into", agent, "--json").stdout)
    [path] = out["written"]
    return Path(path)


def test_the_agents_copy_of_merged_turns_is_not_imported_again_claude(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude's own session, a Claude fork's turns and a Codex session merged into it, `resume
    --into claude` (the transcript then holds the merged turns under Claude's line ids), Claude
    goes on, `import`: the merged turns stay once, as the merge wrote them, the new turn after them
    (a real run imported the whole merged block again after the merge's copy)."""
    native = "11111111-1111-4111-8111-111111111111"
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / \
        "".join(c if c.isalnum() else "-" for c in str(repo))
    folder.mkdir(parents=True)
    lines = _claude_turn(repo, native, None, "a", "2026-01-01", "hello", "hi", "msg_1")
    (folder / f"{native}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    _cli(repo, monkeypatch, "import")
    ctx = make_ctx(repo, NOW_MS + 10)
    sid = ctx.index.resolve_session(native)
    f = fork(ctx, sid, title="try it")
    _fork_turns(make_ctx(repo, NOW_MS + 20), f.id)
    merge(make_ctx(repo, NOW_MS + 30), f.id, code=False)
    _cli(repo, monkeypatch, "import", "--agent", "codex", str(CODEX_ROLLOUT))
    codex_sid = make_ctx(repo).index.resolve_session("01a23334-175b-7030-bb12-84938bd24286")
    merge(make_ctx(repo, NOW_MS + 40), codex_sid, into=sid, code=False)
    merged = _prompts_and_answers(repo, sid)
    assert merged.count("add a feature module") == 1
    path = _import_into(repo, monkeypatch, sid, "claude")
    last = json.loads(path.read_text().splitlines()[-1])["uuid"]
    more = _claude_turn(repo, native, last, "b", "2026-01-02", "and now?", "all merged", "msg_2")
    with path.open("a") as fh:
        fh.write("".join(json.dumps(x) + "\n" for x in more))
    _cli(repo, monkeypatch, "import")
    assert _prompts_and_answers(repo, sid) == [*merged, "and now?", "all merged"]


def test_the_agents_copy_of_merged_turns_is_not_imported_again_codex(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with Codex, whose rollouts give messages no ids: a fork's turns merged into a
    Codex session come back from its rollout as the same messages (their role, time and what they
    say), and stay once."""
    _cli(repo, monkeypatch, "import", "--agent", "codex", str(CODEX_ROLLOUT))
    sid = make_ctx(repo).index.resolve_session("01a23334-175b-7030-bb12-84938bd24286")
    f = fork(make_ctx(repo, NOW_MS + 10), sid, title="try it")
    ctx = make_ctx(repo, NOW_MS + 20)
    store.append(ctx, sessionlog.load_required(ctx.repo, f.id).session, [  # Codex's own records
        Message("user", (Part.text("add a feature module"),), created_at=NOW_MS + 10),
        Message("assistant", (Part.tool_call("call-1", "exec_command", {"cmd": "echo hi"},
                                             arguments='{"cmd": "echo hi"}', codex_type="function_call"),),
                created_at=NOW_MS + 11),
        Message("tool", (Part.tool_result("call-1", "hi\n", codex_type="function_call_output"),),
                created_at=NOW_MS + 12),
        Message("assistant", (Part.text("Done: the feature is in."),), created_at=NOW_MS + 13)])
    merge(make_ctx(repo, NOW_MS + 30), f.id, code=False)
    merged = _prompts_and_answers(repo, sid)
    assert merged.count("add a feature module") == 1 and merged.count("Done: the feature is in.") == 1
    path = _import_into(repo, monkeypatch, sid, "codex")
    more = [{"timestamp": "2026-12-02T00:00:00.000Z", "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "and now?"}]}},
            {"timestamp": "2026-12-02T00:00:00.000Z", "type": "event_msg",
             "payload": {"type": "user_message", "message": "and now?", "images": [], "local_images": [],
                         "text_elements": []}},
            {"timestamp": "2026-12-02T00:00:01.000Z", "type": "response_item",
             "payload": {"type": "message", "role": "assistant",
                         "content": [{"type": "output_text", "text": "all merged"}]}}]
    with path.open("a") as fh:
        fh.write("".join(json.dumps(x) + "\n" for x in more))
    _cli(repo, monkeypatch, "import")
    assert _prompts_and_answers(repo, sid) == [*merged, "and now?", "all merged"]


def test_a_digest_names_the_files_without_a_divergence_checkpoint(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No checkpoint of the session before the fork (a user without hooks): the code merges
    against the commits' merge base, and the digest names the fork's files from that base too
    (it said "Files it changed: none." while the merge wrote the fork's file: make compat)."""
    ctx = make_ctx(repo)
    parent = Session(id=PARENT, agent="claude", native_id="nat-parent", title="parent work",
                     cwd=str(repo), worktree=ctx.repo.worktree_id)
    store.append(ctx, parent, [Message("user", (Part.text("hello"),), created_at=NOW_MS),
                               Message("assistant", (Part.text("hi"),), created_at=NOW_MS + 1)])
    f = fork(make_ctx(repo, NOW_MS + 5), PARENT, title="feature idea")
    _fork_turns(make_ctx(repo, NOW_MS + 6), f.id)
    (repo / "feature.py").write_text("x = 1\n")
    checkpoint(make_ctx(repo, NOW_MS + 30), session=f.id, text="the fork's work")
    (repo / "feature.py").unlink()
    dry = merge(make_ctx(repo, NOW_MS + 90), f.id, digest_only=True, dry_run=True)
    assert dry.files["added"] == ["feature.py"]
    res = merge(make_ctx(repo, NOW_MS + 100), f.id, digest_only=True)
    assert res.files["added"] == ["feature.py"] and (repo / "feature.py").read_text() == "x = 1\n"
    marker = _texts(repo, PARENT)[2]
    assert marker.startswith(MARKER) and "Files it changed: feature.py." in marker, marker


def _claude_line(native: str, cwd: Path, uuid: str, parent: str | None, role: str, text: str, ts: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "user", "content": text}
    if role == "assistant":
        message = {"role": "assistant", "id": f"msg_{uuid[:8]}", "type": "message", "model": "claude-test",
                   "content": [{"type": "text", "text": text}]}
    return {"parentUuid": parent, "isSidechain": False, "type": role, "cwd": str(cwd), "sessionId": native,
            "uuid": uuid, "timestamp": ts, "message": message}


def test_claude_reads_the_merged_turns_after_the_marker_and_the_sessions_own_later_turns(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Claude fork's first line names the fork point as its parent. Written so into the target's
    transcript, Claude's chain (read up from the last line) went from the fork's turns straight to
    the fork point: past the merge's marker and past the turns the session had after the fork
    point, which its model then never saw (make compat: the digest's marker was not in the
    request). A merged line keeps only a parent of its own merged run."""
    import os

    native = "22222222-2222-4222-8222-222222222222"
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "".join(c if c.isalnum() else "-" for c in str(repo))
    folder.mkdir(parents=True)
    own = folder / f"{native}.jsonl"
    u = [f"c0000000-0000-4000-8000-00000000000{i}" for i in range(1, 5)]
    lines = [_claude_line(native, repo, u[0], None, "user", "hello", "2026-01-01T00:00:00.000Z"),
             _claude_line(native, repo, u[1], u[0], "assistant", "hi", "2026-01-01T00:00:01.000Z")]
    own.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _cli(repo, monkeypatch, "import")
    sid = make_ctx(repo).index.resolve_session(native)
    f = fork(make_ctx(repo, NOW_MS + 10), sid, title="try it")
    fork_file = _import_into(repo, monkeypatch, f.id, "claude")  # the fork continued in Claude
    fork_native = fork_file.stem
    with fork_file.open("a") as fh:
        for x in (_claude_line(fork_native, repo, "f0000000-0000-4000-8000-000000000001", u[1], "user",
                               "the fork's prompt", "2026-01-02T00:00:00.000Z"),
                  _claude_line(fork_native, repo, "f0000000-0000-4000-8000-000000000002",
                               "f0000000-0000-4000-8000-000000000001", "assistant", "the fork's answer",
                               "2026-01-02T00:00:01.000Z")):
            fh.write(json.dumps(x) + "\n")
    lines += [_claude_line(native, repo, u[2], u[1], "user", "the session goes on", "2026-01-03T00:00:00.000Z"),
              _claude_line(native, repo, u[3], u[2], "assistant", "on it", "2026-01-03T00:00:01.000Z")]
    own.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _cli(repo, monkeypatch, "import")
    [cont] = [r for r in json.loads(_cli(repo, monkeypatch, "list", "--all", "--json").stdout)
              if r.get("parent_id") == f.id]
    res = merge(make_ctx(repo, NOW_MS + 100), cont["id"], code=False)
    assert res.target["id"] == sid and res.messages_added == 3
    written = [json.loads(x) for x in _import_into(repo, monkeypatch, sid, "claude").read_text().splitlines()]
    by_uuid = {x["uuid"]: x for x in written if "uuid" in x}
    chain, at = [], written[-1]["uuid"]
    while at is not None:
        chain.append(by_uuid[at])
        at = by_uuid[at].get("parentUuid")
    said = [x["message"]["content"] if isinstance(x["message"]["content"], str) else x["message"]["content"][0]["text"]
            for x in reversed(chain)]
    assert said[:4] == ["hello", "hi", "the session goes on", "on it"], said
    assert said[4].startswith(MARKER) and said[5:] == ["the fork's prompt", "the fork's answer"], said


def test_another_agents_merged_turns_reach_codex_as_foreign_ones(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Claude session merged into a Codex one, resumed in Codex: Claude's Bash call is handed over
    as Codex's exec_command (as a whole Claude session would be), not written as Codex's own
    record, which turned it into text (make compat: a Claude fork merged into a Codex session)."""
    _cli(repo, monkeypatch, "import", "--agent", "codex", str(CODEX_ROLLOUT))
    codex_sid = make_ctx(repo).index.resolve_session("01a23334-175b-7030-bb12-84938bd24286")
    claude_file = FIXTURES / "claude" / "split_response.jsonl"
    _cli(repo, monkeypatch, "import", "--agent", "claude", str(claude_file))
    [claude_row] = [r for r in json.loads(_cli(repo, monkeypatch, "list", "--all", "--json").stdout)
                    if r["agent"] == "claude"]
    res = merge(make_ctx(repo, NOW_MS + 100), claude_row["id"], into=codex_sid, code=False)
    assert res.messages_added > 2
    rollout = _import_into(repo, monkeypatch, codex_sid, "codex")
    items = [json.loads(x).get("payload") or {} for x in rollout.read_text().splitlines()]
    calls = [i for i in items if i.get("type") == "function_call" and str(i.get("call_id", "")).startswith("toolu")]
    assert [c["name"] for c in calls if c["name"] == "exec_command"], calls
    texts = json.dumps([i for i in items if i.get("type") == "message"])
    assert "[tool call Bash" not in texts


def test_another_agents_merged_turns_reach_pi_as_foreign_ones(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exporters that write a session of their own agent whole as its records (pi, OpenCode,
    Copilot, Cline...) get one holding another agent's merged turns as that agent's session:
    Codex's exec_command reaches pi as a tool call of its own, not as text, and none of Codex's
    records or harness context with it (make compat: pi sent the call as text and Codex's
    instructions as a user turn; Cline's provider refused Codex's system messages)."""
    pi_file = FIXTURES / "pi" / "basic.jsonl"
    _cli(repo, monkeypatch, "import", "--agent", "pi", str(pi_file))
    [pi_row] = [r for r in json.loads(_cli(repo, monkeypatch, "list", "--all", "--json").stdout) if r["agent"] == "pi"]
    _cli(repo, monkeypatch, "import", "--agent", "codex", str(CODEX_ROLLOUT))
    codex_sid = make_ctx(repo).index.resolve_session("01a23334-175b-7030-bb12-84938bd24286")
    merge(make_ctx(repo, NOW_MS + 100), codex_sid, into=pi_row["id"], code=False)
    out = json.loads(_cli(repo, monkeypatch, "resume", pi_row["id"], "--into", "pi", "--json").stdout)
    [path] = out["written"]
    text = Path(path).read_text()
    assert "[tool call exec_command" not in text and "<skills_instructions>" not in text, text[-3000:]
    assert '"echo from-shell | tee shell.txt"' in text  # the call, handed over with its command
    assert out["native_id"] != pi_row["native_id"]  # written as another agent's session: a new one of pi's


def _claude_turn(repo: Path, native: str, parent: str | None, mark: str, day: str, prompt: str, answer: str,
                 msg_id: str) -> list[dict[str, Any]]:
    """A prompt and its answer as Claude Code writes them (uuids ``<mark>0000000-…-00000000000N``)."""
    u, a = f"{mark}0000000-0000-4000-8000-000000000001", f"{mark}0000000-0000-4000-8000-000000000002"
    base = {"isSidechain": False, "cwd": str(repo), "sessionId": native}
    return [{**base, "parentUuid": parent, "type": "user", "uuid": u, "timestamp": f"{day}T00:00:00.000Z",
             "message": {"role": "user", "content": prompt}},
            {**base, "parentUuid": u, "type": "assistant", "uuid": a, "timestamp": f"{day}T00:00:01.000Z",
             "message": {"role": "assistant", "id": msg_id, "type": "message", "model": "claude-test",
                         "content": [{"type": "text", "text": answer}]}}]
