"""Writing a checkpoint back into a worktree (rewind --code): what is in the way, symlinked
folders, temp files a killed restore left; each through a real rewind of a real repository."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from oxide_git.core.errors import Refused, UntrustedTree
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.rewind import rewind
from tests.conftest import NOW_MS, make_ctx


def test_a_file_where_the_checkpoint_has_a_folder_becomes_the_folder(repo: Path) -> None:
    (repo / "d").mkdir()
    (repo / "d" / "f.txt").write_text("in the folder\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    shutil.rmtree(repo / "d")
    (repo / "d").write_text("now a file\n")
    rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert (repo / "d" / "f.txt").read_text() == "in the folder\n"


def test_an_empty_folder_where_the_checkpoint_has_a_file_gives_way(repo: Path) -> None:
    (repo / "x").write_text("a file\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    (repo / "x").unlink()
    (repo / "x").mkdir()
    rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert (repo / "x").read_text() == "a file\n"


def test_a_folder_with_files_in_the_way_is_refused_and_kept(repo: Path) -> None:
    (repo / "x").write_text("a file\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    (repo / "x").unlink()
    (repo / "x").mkdir()
    (repo / "x" / "ignored.log").write_text("the user's, not in any checkpoint\n")  # *.log is ignored
    with pytest.raises(Refused) as e:
        rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert e.value.message == "cannot restore x: a folder with other files is in the way"
    assert (repo / "x" / "ignored.log").read_text() == "the user's, not in any checkpoint\n"


def test_a_symlinked_folder_is_never_written_through(repo: Path, tmp_path: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")  # has src/app.py
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("outside the worktree\n")
    shutil.rmtree(repo / "src")
    os.symlink(outside, repo / "src")
    with pytest.raises(UntrustedTree) as e:
        rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert "src is a symlink" in e.value.message
    assert (outside / "app.py").read_text() == "outside the worktree\n"
    assert (repo / "README.md").read_text() == "hello\n"


def test_temp_files_of_a_killed_restore_are_swept_ours_are_not_left(repo: Path) -> None:
    (repo / "src" / "app.py").write_text("checkpointed\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    (repo / "src" / "app.py").write_text("edited\n")
    stale = repo / "src" / ".oxide-tmp-999999-app.log"  # ignored (*.log): in no snapshot, only the sweep removes it
    stale.write_text("half-written by a restore that was killed\n")
    rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert (repo / "src" / "app.py").read_text() == "checkpointed\n"
    assert not stale.exists()
    assert not [p for p in (repo / "src").iterdir() if p.name.startswith(".oxide-tmp-")]
