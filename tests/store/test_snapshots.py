from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from oxide_git.core.errors import BareRepository, NotInGitRepository
from oxide_git.git.repo import find_repo
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.store.snapshots import take
from tests.conftest import fsck_clean, git, make_ctx, user_state


def tree_files(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> dict[str, tuple[int, bytes]]:
    out = {}
    for e in tree:
        path = prefix + e.name
        obj = repo[e.id]
        if isinstance(obj, pygit2.Tree):
            out.update(tree_files(repo, obj, path + "/"))
        else:
            out[path] = (e.filemode, obj.data)
    return out


def test_checkpoint_captures_worktree_and_touches_nothing(repo: Path) -> None:
    (repo / "README.md").write_text("changed\n")
    (repo / "new.txt").write_text("untracked\n")
    (repo / "debug.log").write_text("ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("ignored dir\n")
    (repo / "src" / "app.py").unlink()
    (repo / "deep" / "er").mkdir(parents=True)
    (repo / "deep" / "er" / "x.sh").write_text("#!/bin/sh\n")
    os.chmod(repo / "deep" / "er" / "x.sh", 0o755)
    os.symlink("README.md", repo / "link")
    git(repo, "stash", "list")
    before = user_state(repo)
    ctx = make_ctx(repo)
    cp = checkpoint(ctx, text="before refactor")
    assert user_state(repo) == before
    g = ctx.repo.git
    commit = g[cp.id]
    assert [str(p) for p in commit.parent_ids] == [git(repo, "rev-parse", "HEAD").strip()]
    files = tree_files(g, commit.tree)
    assert files == {
        ".gitignore": (0o100644, b"*.log\nbuild/\n"),
        "README.md": (0o100644, b"changed\n"),
        "new.txt": (0o100644, b"untracked\n"),
        "deep/er/x.sh": (0o100755, b"#!/bin/sh\n"),
        "link": (0o120000, b"README.md"),
    }
    assert "Oxide-Kind: manual" in commit.message
    assert "Oxide-Worktree: main" in commit.message
    assert "Oxide-Branch: main" in commit.message
    assert g.references.get(f"refs/oxide/checkpoints/manual/{cp.id}") is not None
    # git show of the checkpoint is exactly what changed
    stat = git(repo, "show", "--stat", "--format=", cp.id)
    assert "README.md" in stat and "new.txt" in stat and "src/app.py" in stat
    fsck_clean(repo)
    git(repo, "gc", "--prune=now", "-q")
    assert g.references.get(f"refs/oxide/checkpoints/manual/{cp.id}") is not None
    assert git(repo, "cat-file", "-t", cp.id).strip() == "commit"
    fsck_clean(repo)


def test_unchanged_worktree_checkpoint_is_head_tree(repo: Path) -> None:
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    assert cp.tree == git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert cp.files_changed == 0


def test_checkpoint_in_unborn_repository(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    ctx = make_ctx(root)
    cp = checkpoint(ctx)
    commit = ctx.repo.git[cp.id]
    assert commit.parent_ids == []
    assert tree_files(ctx.repo.git, commit.tree) == {"a.txt": (0o100644, b"a\n")}
    # an empty unborn repository still gets a (empty-tree) checkpoint
    (root / "a.txt").unlink()
    cp2 = checkpoint(make_ctx(root))
    assert len(ctx.repo.git[cp2.id].tree) == 0


def test_linked_worktree_subdirectory_and_detached_head(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(wt))
    (wt / "src" / "app.py").write_text("print('wt')\n")
    (repo / "README.md").write_text("main changed\n")
    ctx = make_ctx(wt / "src")
    assert ctx.repo.workdir == wt
    assert ctx.repo.worktree_id == "wt"
    before_main, before_wt = user_state(repo), user_state(wt)
    cp = checkpoint(ctx)
    assert user_state(repo) == before_main and user_state(wt) == before_wt
    assert cp.worktree == "wt" and cp.branch == "(detached)"
    files = tree_files(ctx.repo.git, ctx.repo.git[cp.id].tree)
    assert files["src/app.py"][1] == b"print('wt')\n"
    assert files["README.md"][1] == b"hello\n"  # the main worktree's edit is not in this one
    main_cp = checkpoint(make_ctx(repo))
    assert tree_files(ctx.repo.git, ctx.repo.git[main_cp.id].tree)["README.md"][1] == b"main changed\n"
    assert (ctx.repo.oxide_dir / "worktrees" / "wt").is_dir()
    assert (ctx.repo.oxide_dir / "worktrees" / "main").is_dir()
    fsck_clean(repo)


def test_large_untracked_file_is_skipped_and_recorded(repo: Path) -> None:
    git(repo, "config", "oxide.maxFileSize", "1k")
    (repo / "big.bin").write_bytes(b"x" * 5000)
    (repo / "small.txt").write_text("s")
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    files = tree_files(ctx.repo.git, ctx.repo.git[cp.id].tree)
    assert "big.bin" not in files and "small.txt" in files
    assert cp.skipped and cp.skipped[0]["path"] == "big.bin"
    assert 'Oxide-Skipped: {"path": "big.bin"' in ctx.repo.git[cp.id].message


def test_core_hooks_path_and_renames(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    git(repo, "mv", "README.md", "READ.md")
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    files = tree_files(ctx.repo.git, ctx.repo.git[cp.id].tree)
    assert "READ.md" in files and "README.md" not in files


def test_statcache_reuses_hashes_but_sees_changes(repo: Path) -> None:
    ctx = make_ctx(repo)
    p = repo / "README.md"
    p.write_text("v1\n")
    os.utime(p, ns=(1_000_000_000, 1_000_000_000))
    cp1 = take(ctx.repo, kind="manual", now_ms=ctx.now_ms)
    p.write_text("v2\n")
    os.utime(p, ns=(2_000_000_000, 2_000_000_000))
    cp2 = take(ctx.repo, kind="manual", now_ms=ctx.now_ms + 1000)
    g = ctx.repo.git
    assert tree_files(g, g[cp1.id].tree)["README.md"][1] == b"v1\n"
    assert tree_files(g, g[cp2.id].tree)["README.md"][1] == b"v2\n"


def test_not_a_repository_and_bare(tmp_path: Path) -> None:
    with pytest.raises(NotInGitRepository):
        find_repo(tmp_path)
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(BareRepository):
        find_repo(bare)


def test_crowded_untracked_folder_is_left_out_and_said(repo: Path) -> None:
    git(repo, "config", "oxide.maxUntrackedFiles", "50")
    nm = repo / "node_modules" / "pkg"
    nm.mkdir(parents=True)
    for i in range(60):
        (nm / f"f{i}.js").write_text("x")
    (repo / "src" / "mine.py").write_text("keep me\n")
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    files = tree_files(ctx.repo.git, ctx.repo.git[cp.id].tree)
    assert "src/mine.py" in files and not any(p.startswith("node_modules") for p in files)
    assert {"path": "node_modules/", "reason": "untracked folder with 60 files (over 50)"} in cp.skipped


def test_attribute_filters_still_apply(repo: Path) -> None:
    """With a .gitattributes asking for LF, a CRLF file is stored as git add would store it;
    without one, bytes are stored as they are."""
    (repo / "sub").mkdir()
    (repo / "sub" / ".gitattributes").write_text("*.txt text eol=lf\n")
    (repo / "sub" / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    (repo / "raw.txt").write_bytes(b"a\r\nb\r\n")
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    files = tree_files(ctx.repo.git, ctx.repo.git[cp.id].tree)
    assert files["sub/crlf.txt"][1] == b"a\nb\n"
    assert files["raw.txt"][1] == b"a\r\nb\r\n"
    git(repo, "add", "-A")
    assert git(repo, "write-tree").strip() == str(ctx.repo.git[cp.id].tree_id)
