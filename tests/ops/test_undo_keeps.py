"""`git oxide undo` reverts only what the operation changed and is still as it left it (issue 38.1).

Each test does what the user did: an operation, more work, then undo. What changed since is kept
and listed; `--force` overwrites it after a checkpoint the output names; `--dry-run` shows the
same plan and writes nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
import pytest
from click.testing import CliRunner, Result

from oxide_git.cli import main
from oxide_git.core.errors import Refused
from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.fork import fork
from oxide_git.ops.rm import rm
from oxide_git.ops.undo import undo
from oxide_git.store import journal, sessionlog
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, fsck_clean, git, make_ctx, new_repo

CALC = "def add(a, b): return a + b\n"
DIV = "def div(a, b): return a / b\n"


def cli(monkeypatch: pytest.MonkeyPatch, cwd: Path, *args: str, now: int = NOW_MS, code: int = 0) -> Result:
    """`git oxide ARGS` in this process (CliRunner), in ``cwd``, with the clock at ``now``."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("OXIDE_NOW", str(now))
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == code, (r.output, r.stderr, r.exception)
    return r


def _issue_repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text(CALC)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "calc")
    return root


def _issue_sequence(monkeypatch: pytest.MonkeyPatch, root: Path) -> str:
    """The issue's reproduction up to the undo; returns checkpoint A's id."""
    out = json.loads(cli(monkeypatch, root, "checkpoint", "-m", "A", "--json").stdout)
    cp = out["id"]
    with open(root / "calc.py", "a") as f:
        f.write("garbage\n")
    (root / "extra.txt").write_text("extra\n")
    cli(monkeypatch, root, "rewind", cp, "--code", "--yes", now=NOW_MS + 1)
    assert (root / "calc.py").read_text() == CALC and not (root / "extra.txt").exists()
    (root / "README.md").write_text("readme\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "add readme")
    with open(root / "calc.py", "a") as f:
        f.write(DIV)
    return cp


def test_the_issue_sequence_keeps_what_changed_since_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _issue_repo(tmp_path / "r")
    _issue_sequence(monkeypatch, root)
    head = git(root, "rev-parse", "HEAD").strip()
    dry = cli(monkeypatch, root, "undo", "--dry-run", now=NOW_MS + 2)
    assert "keep   calc.py (changed since the rewind)" in dry.stdout
    assert "keep   README.md (changed since the rewind)" in dry.stdout
    assert "add    extra.txt" in dry.stdout
    assert "--force" in dry.stderr
    assert (root / "calc.py").read_text() == CALC + DIV and not (root / "extra.txt").exists()

    r = cli(monkeypatch, root, "undo", "--yes", now=NOW_MS + 3)
    assert (root / "calc.py").read_text() == CALC + DIV  # the uncommitted `div` is still there
    assert (root / "README.md").read_text() == "readme\n"  # the commit made since is not undone
    assert (root / "extra.txt").read_text() == "extra\n"  # what the rewind deleted is back
    assert "keep   calc.py (changed since the rewind)" in r.stdout
    assert "keep   README.md (changed since the rewind)" in r.stdout
    assert "Undid: rewind to" in r.stderr
    assert "Kept 2 path(s) changed since the rewind, as they are" in r.stderr
    assert "note: HEAD moved since the rewind" in r.stderr and f"now {head[:7]}" in r.stderr
    assert git(root, "rev-parse", "HEAD").strip() == head
    fsck_clean(root)

    # undo again is a redo: it takes back only what the undo wrote
    cli(monkeypatch, root, "undo", "--yes", now=NOW_MS + 4)
    assert not (root / "extra.txt").exists()
    assert (root / "calc.py").read_text() == CALC + DIV and (root / "README.md").exists()


def test_the_issue_sequence_with_force_overwrites_after_a_checkpoint_it_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _issue_repo(tmp_path / "r")
    _issue_sequence(monkeypatch, root)
    r = cli(monkeypatch, root, "undo", "--yes", "--force", "--json", now=NOW_MS + 3)
    out = json.loads(r.stdout)
    assert out["files"]["overwritten"] == ["README.md", "calc.py"] and out["files"]["kept"] == []
    assert out["head"]["now"] == git(root, "rev-parse", "HEAD").strip()
    assert (root / "calc.py").read_text() == CALC + "garbage\n"  # the state before the rewind
    assert not (root / "README.md").exists() and (root / "extra.txt").exists()
    saved = out["checkpoint"]
    g = pygit2.Repository(str(root))
    tree = g[saved].peel(pygit2.Tree)
    assert tree["calc.py"].data.decode() == CALC + DIV  # the checkpoint really holds them
    assert tree["README.md"].data.decode() == "readme\n"
    assert git(root, "for-each-ref", "--format=%(refname)", "refs/oxide/checkpoints/").count(saved) == 1
    # and the human output names it
    root2 = _issue_repo(tmp_path / "r2")
    _issue_sequence(monkeypatch, root2)
    r = cli(monkeypatch, root2, "undo", "--yes", "--force", now=NOW_MS + 3)
    [line] = [ln for ln in r.stderr.splitlines() if ln.startswith("The state before this undo is checkpoint")]
    short = line.split("checkpoint ")[1].split(":")[0]
    assert "holds the 2 overwritten path(s)" in line
    assert f"modify calc.py (changed since the rewind; saved in checkpoint {short})" in r.stdout
    assert f"delete README.md (changed since the rewind; saved in checkpoint {short})" in r.stdout
    shown = git(root2, "show", f"{short}:calc.py")
    assert shown == CALC + DIV


def test_an_undo_with_everything_changed_since_is_refused_and_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _issue_repo(tmp_path / "r")
    cp = json.loads(cli(monkeypatch, root, "checkpoint", "--json").stdout)["id"]
    (root / "calc.py").write_text("agent's version\n")
    cli(monkeypatch, root, "rewind", cp, "--code", "--yes", now=NOW_MS + 1)
    (root / "calc.py").write_text("mine\n")
    lines = (root / ".git" / "oxide" / "worktrees" / "main" / "journal.jsonl").read_text()
    r = cli(monkeypatch, root, "undo", "--yes", now=NOW_MS + 2, code=1)
    assert r.stderr.startswith("error: everything rewind to ") and "calc.py" in r.stderr
    assert "hint:" in r.stderr and "--force" in r.stderr and "Traceback" not in r.stderr
    assert (root / "calc.py").read_text() == "mine\n"
    assert (root / ".git" / "oxide" / "worktrees" / "main" / "journal.jsonl").read_text() == lines


def test_rewind_both_keeps_a_file_and_a_conversation_changed_since(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = Session(id="0" * 12 + "c" * 20, agent="claude", title="t", cwd=str(repo), worktree="main")
    store.append(ctx, s, [Message("user", (Part.text(f"m{i}"),), created_at=1000 + i) for i in range(4)])
    store.set_current_session(ctx, s.id)
    cp = checkpoint(ctx, kind="manual")
    (repo / "README.md").write_text("agent\n")
    (repo / "src" / "app.py").write_text("agent\n")
    store.append(ctx, s, [Message("user", (Part.text("later"),))])
    from oxide_git.ops.rewind import rewind

    rewind(make_ctx(repo, NOW_MS + 1), cp.id)
    assert sessionlog.load(ctx.repo, s.id).count == 4
    (repo / "README.md").write_text("mine, after the rewind\n")
    store.append(make_ctx(repo), s, [Message("user", (Part.text("said after the rewind"),))])
    res = undo(make_ctx(repo, NOW_MS + 2))
    assert res.files["kept"] == ["README.md"] and res.files["modified"] == ["src/app.py"]
    assert list(res.kept_refs) == [refs.session_ref(s.id)]
    assert (repo / "README.md").read_text() == "mine, after the rewind\n"
    assert (repo / "src" / "app.py").read_text() == "agent\n"
    assert sessionlog.load(ctx.repo, s.id).count == 5  # the conversation since is kept


def test_fork_whose_session_was_appended_since_is_kept(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = make_ctx(repo)
    s = Session(id="0" * 12 + "c" * 20, agent="claude", title="t", cwd=str(repo), worktree="main")
    store.append(ctx, s, [Message("user", (Part.text(f"m{i}"),), created_at=1000 + i) for i in range(4)])
    f = fork(make_ctx(repo, NOW_MS + 1), s.id, at="2")
    log = sessionlog.load(ctx.repo, f.id)
    assert log is not None
    store.append(make_ctx(repo, NOW_MS + 2), log.session, [Message("user", (Part.text("work in the fork"),))])
    r = cli(monkeypatch, repo, "undo", "--yes", now=NOW_MS + 3, code=1)
    assert r.stderr.startswith(f"error: {refs.session_ref(f.id)} moved since (now ")
    assert refs.read(ctx.repo.git, refs.session_ref(f.id)) is not None
    dry = cli(monkeypatch, repo, "undo", "--dry-run", now=NOW_MS + 3)
    assert f"keep   {refs.session_ref(f.id)} (moved since the fork)" in dry.stdout
    tip = git(repo, "rev-parse", refs.session_ref(f.id)).strip()
    r = cli(monkeypatch, repo, "undo", "--yes", "--force", now=NOW_MS + 4)
    trash = journal.trash_name(refs.session_ref(f.id), NOW_MS + 4)
    line = f"reset  {refs.session_ref(f.id)} (moved since the fork; the newer state stays as {trash})"
    assert line in r.stdout
    assert git(repo, "rev-parse", trash).strip() == tip
    assert refs.read(ctx.repo.git, refs.session_ref(f.id)) is None


def test_rm_of_a_session_made_again_since_keeps_the_new_one(repo: Path) -> None:
    """rm of two sessions; one is written again (say by a pull) before the undo: it is kept, the
    other comes back."""
    ctx = make_ctx(repo)
    a = Session(id="0" * 12 + "a" * 20, agent="claude", title="a", cwd=str(repo), worktree="main")
    store.append(ctx, a, [Message("user", (Part.text("a"),))])
    fa = fork(make_ctx(repo, NOW_MS + 1), a.id)
    tip_a = git(repo, "rev-parse", refs.session_ref(a.id)).strip()
    res = rm(make_ctx(repo, NOW_MS + 2), a.id, recursive=True)
    assert len(res.refs) == 2
    again = Session(id=fa.id, agent="claude", title="again", cwd=str(repo), worktree="main")
    store.append(make_ctx(repo, NOW_MS + 3), again, [Message("user", (Part.text("new"),))])
    new_tip = git(repo, "rev-parse", refs.session_ref(fa.id)).strip()
    out = undo(make_ctx(repo, NOW_MS + 4))
    assert list(out.kept_refs) == [refs.session_ref(fa.id)]
    assert out.kept_refs[refs.session_ref(fa.id)]["now"] == new_tip
    assert git(repo, "rev-parse", refs.session_ref(a.id)).strip() == tip_a
    assert git(repo, "rev-parse", refs.session_ref(fa.id)).strip() == new_tip


def test_pull_a_ref_changed_since_is_kept(tmp_path: Path) -> None:
    from oxide_git.ops.share import pull, push

    a, b = new_repo(tmp_path / "a"), tmp_path / "b"
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(a, "remote", "add", "origin", str(bare))
    s1 = Session(id="0" * 12 + "1" * 20, agent="claude", title="one", cwd=str(a), worktree="main")
    s2 = Session(id="0" * 12 + "2" * 20, agent="claude", title="two", cwd=str(a), worktree="main")
    for s in (s1, s2):
        store.append(make_ctx(a), s, [Message("user", (Part.text(s.title or ""),))])
    push(make_ctx(a))
    git(tmp_path, "clone", "-q", str(bare), str(b))
    pulled = pull(make_ctx(b, NOW_MS + 1))
    assert refs.session_ref(s1.id) in pulled.moved
    log = sessionlog.load(make_ctx(b).repo, s1.id)
    assert log is not None
    store.append(make_ctx(b, NOW_MS + 2), log.session, [Message("user", (Part.text("mine, since"),))])
    mine = git(b, "rev-parse", refs.session_ref(s1.id)).strip()
    res = undo(make_ctx(b, NOW_MS + 3))
    assert list(res.kept_refs) == [refs.session_ref(s1.id)]
    assert git(b, "rev-parse", refs.session_ref(s1.id)).strip() == mine  # kept
    assert refs.read(make_ctx(b).repo.git, refs.session_ref(s2.id)) is None  # undone (to the trash)
    fsck_clean(b)


def test_old_journal_lines_are_still_read_and_a_newer_field_is_skipped(repo: Path) -> None:
    path = make_ctx(repo).repo.worktree_dir
    path.mkdir(parents=True, exist_ok=True)
    old = {"op": "fork", "at": 1, "summary": "fork x as y", "refs": {}, "files_before": None,
           "files_after": None, "undoable": True}
    (path / "journal.jsonl").write_text(json.dumps(old) + "\n" + json.dumps({**old, "summary": "newer",
                                                                              "from_the_future": 1}) + "\n")
    es = journal.entries(make_ctx(repo))
    assert [e.summary for e in es] == ["fork x as y", "newer"]
    assert es[0].files_kept == [] and es[0].head is None


def test_a_kept_file_in_the_way_of_a_folder_keeps_the_write_too(repo: Path) -> None:
    """The rewind deleted ``d/x``; since then the user made ``d`` a file. Restoring ``d/x`` would
    delete the user's ``d``: that write is kept too."""
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    (repo / "d").mkdir()
    (repo / "d" / "x").write_text("agent\n")
    from oxide_git.ops.rewind import rewind

    rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert not (repo / "d").exists()
    (repo / "d").write_text("the user's file\n")
    with pytest.raises(Refused):
        undo(make_ctx(repo, NOW_MS + 2))
    res = undo(make_ctx(repo, NOW_MS + 2), dry_run=True)
    assert res.files["kept"] == ["d", "d/x"] and not res.changes
    assert (repo / "d").read_text() == "the user's file\n"
    os.unlink(repo / "d")
    undo(make_ctx(repo, NOW_MS + 3))
    assert (repo / "d" / "x").read_text() == "agent\n"


def test_a_file_the_present_snapshot_cannot_hold_is_never_overwritten(repo: Path) -> None:
    """The rewind deleted big.bin; since then the user wrote a big.bin too large for a checkpoint.
    Nothing could bring it back once overwritten: it is kept, even with --force."""
    from oxide_git.ops.rewind import rewind
    from oxide_git.store.snapshots import DEFAULT_MAX_FILE_SIZE

    cp = checkpoint(make_ctx(repo))
    (repo / "big.bin").write_text("small\n")
    rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert not (repo / "big.bin").exists()
    big = b"x" * (DEFAULT_MAX_FILE_SIZE + 1)
    (repo / "big.bin").write_bytes(big)
    assert undo(make_ctx(repo, NOW_MS + 2), dry_run=True, force=True).files["kept"] == ["big.bin"]
    cps = git(repo, "for-each-ref", "refs/oxide/checkpoints/")
    for force in (False, True):
        with pytest.raises(Refused) as e:
            undo(make_ctx(repo, NOW_MS + 3), force=force)
        assert "big.bin" in e.value.message and ("move it away" in (e.value.hint or "")) == force
    assert (repo / "big.bin").read_bytes() == big
    assert git(repo, "for-each-ref", "refs/oxide/checkpoints/") == cps  # a refused undo leaves no checkpoint


def test_a_journal_line_written_by_the_previous_version_is_undone_by_the_rule(repo: Path) -> None:
    """Lines without ``files_kept`` and ``head``: the state after is the checkpoint rewound to,
    HEAD then is the before-checkpoint's parent."""
    from oxide_git.ops.rewind import rewind

    cp = checkpoint(make_ctx(repo))
    (repo / "README.md").write_text("agent\n")
    (repo / "src" / "app.py").write_text("agent\n")
    rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    path = make_ctx(repo).repo.worktree_dir / "journal.jsonl"
    line = json.loads(path.read_text().splitlines()[-1])
    del line["files_kept"], line["head"]
    path.write_text(json.dumps(line) + "\n")
    (repo / "README.md").write_text("mine\n")
    git(repo, "commit", "-qam", "mine")
    res = undo(make_ctx(repo, NOW_MS + 2))
    assert res.files["kept"] == ["README.md"] and res.files["modified"] == ["src/app.py"]
    assert res.head == {"then": line["files_before"] and git(repo, "rev-parse", "HEAD~1").strip(),
                        "now": git(repo, "rev-parse", "HEAD").strip()}
    assert (repo / "README.md").read_text() == "mine\n" and (repo / "src" / "app.py").read_text() == "agent\n"


def test_an_entry_whose_state_after_is_unknown_keeps_everything_changed(repo: Path) -> None:
    """Without the state after the operation nothing can be shown unchanged since: all is kept."""
    before = checkpoint(make_ctx(repo))
    (repo / "README.md").write_text("changed\n")
    for after in (None, "0" * 40):
        journal.record(make_ctx(repo), journal.Entry("rewind", NOW_MS, "rewind to x", files_before=before.id,
                                                     files_after=after))
        res = undo(make_ctx(repo, NOW_MS + 1), dry_run=True)
        assert res.files["kept"] == ["README.md"] and not res.changes
        forced = undo(make_ctx(repo, NOW_MS + 1), dry_run=True, force=True)
        assert forced.files["overwritten"] == ["README.md"] and forced.files["modified"] == ["README.md"]


def test_a_temp_file_of_a_killed_undo_is_not_kept_as_the_users(repo: Path) -> None:
    """An undo killed while writing leaves ``.oxide-tmp-*``; run again, it finishes and sweeps it."""
    from oxide_git.ops.rewind import rewind

    cp = checkpoint(make_ctx(repo))
    (repo / "src" / "app.py").write_text("agent\n")
    rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    (repo / "src" / ".oxide-tmp-999999-0").write_text("half-written\n")
    res = undo(make_ctx(repo, NOW_MS + 2))
    assert res.files["kept"] == [] and res.files["deleted"] == ["src/.oxide-tmp-999999-0"]
    assert sorted(p.name for p in (repo / "src").iterdir()) == ["app.py"]
    assert (repo / "src" / "app.py").read_text() == "agent\n"


def test_a_forced_undo_names_the_trash_ref_only_when_it_writes_one(repo: Path) -> None:
    """A ref moved since the fork: the forced undo puts its newer state in the trash and says
    where; the dry run of it names no trash ref (it writes none)."""
    ctx = make_ctx(repo)
    s = Session(id="0" * 12 + "d" * 20, agent="claude", title="t", cwd=str(repo), worktree="main")
    store.append(ctx, s, [Message("user", (Part.text(f"m{i}"),), created_at=1000 + i) for i in range(4)])
    f = fork(make_ctx(repo, NOW_MS + 1), s.id, at="2")
    log = sessionlog.load(ctx.repo, f.id)
    assert log is not None
    store.append(make_ctx(repo, NOW_MS + 2), log.session, [Message("user", (Part.text("work in the fork"),))])
    name = refs.session_ref(f.id)
    dry = undo(make_ctx(repo, NOW_MS + 3), dry_run=True, force=True)
    assert "trash" not in dry.overwritten_refs[name]
    res = undo(make_ctx(repo, NOW_MS + 4), force=True)
    assert res.overwritten_refs[name]["trash"] == journal.trash_name(name, NOW_MS + 4)


def test_a_refused_undo_names_five_paths_and_counts_the_rest(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cp = json.loads(cli(monkeypatch, repo, "checkpoint", "--json").stdout)["id"]
    names = [f"f{i}.txt" for i in range(7)]
    for n in names:
        (repo / n).write_text("agent's\n")
    cli(monkeypatch, repo, "rewind", cp, "--code", "--yes", now=NOW_MS + 1)
    for n in names:
        (repo / n).write_text("mine\n")
    r = cli(monkeypatch, repo, "undo", "--yes", now=NOW_MS + 2, code=1)
    assert "f0.txt, f1.txt, f2.txt, f3.txt, f4.txt and 2 more); undo would lose that" in r.stderr
