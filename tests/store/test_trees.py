"""A tree with changed paths (``store.trees``) is the tree git itself writes for the same files:
checked against `git write-tree` on a real repository."""

from __future__ import annotations

import os
from pathlib import Path

from oxide_git.git.objects import BLOB, TREE
from oxide_git.store import trees
from tests.conftest import git, make_ctx


def _git_tree(repo: Path) -> str:
    git(repo, "add", "-A")
    return git(repo, "write-tree").strip()


def test_changes_give_the_tree_git_writes(repo: Path) -> None:
    objects = make_ctx(repo).repo.objects
    head = bytes.fromhex(git(repo, "rev-parse", "HEAD^{tree}").strip())
    (repo / "src" / "app.py").write_text("print('changed')\n")
    (repo / "docs" / "deep").mkdir(parents=True)
    (repo / "docs" / "deep" / "new.md").write_text("new\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(repo / "run.sh", 0o755)
    os.symlink("src/app.py", repo / "link")
    (repo / "README.md").unlink()
    changes: dict[str, trees.Entry] = {
        "src/app.py": (objects.write(BLOB, b"print('changed')\n"), trees.FILE_MODE),
        "docs/deep/new.md": (objects.write(BLOB, b"new\n"), trees.FILE_MODE),
        "run.sh": (objects.write(BLOB, b"#!/bin/sh\n"), trees.EXEC_MODE),
        "link": (objects.write(BLOB, b"src/app.py"), trees.LINK_MODE),
        "README.md": None,
    }
    ours = trees.apply_changes(objects, head, changes)
    assert ours is not None and ours.hex() == _git_tree(repo)
    git(repo, "fsck", "--strict", "--no-dangling")


def test_an_emptied_folder_goes_and_a_file_becomes_a_folder(repo: Path) -> None:
    objects = make_ctx(repo).repo.objects
    head = bytes.fromhex(git(repo, "rev-parse", "HEAD^{tree}").strip())
    (repo / "src" / "app.py").unlink()
    (repo / "src").rmdir()
    (repo / "README.md").unlink()
    (repo / "README.md").mkdir()
    (repo / "README.md" / "index.md").write_text("hello\n")
    ours = trees.apply_changes(objects, head, {
        "src/app.py": None,
        "README.md": None,
        "README.md/index.md": (objects.write(BLOB, b"hello\n"), trees.FILE_MODE),
    })
    assert ours is not None and ours.hex() == _git_tree(repo)


def test_nothing_left_is_none_and_the_empty_tree_is_gits(repo: Path) -> None:
    objects = make_ctx(repo).repo.objects
    head = bytes.fromhex(git(repo, "rev-parse", "HEAD^{tree}").strip())
    everything = {p: None for p in git(repo, "ls-files").split()}
    assert trees.apply_changes(objects, head, everything) is None
    assert trees.empty_tree(objects).hex() == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    assert objects.read_kind(trees.empty_tree(objects), TREE) == b""
