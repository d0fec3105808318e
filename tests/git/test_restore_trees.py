"""restore's checks of a checkpoint tree before a byte is written: unsafe paths, objects that are
not trees, malformed and duplicate-entry trees (as a hostile remote could push), submodules."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from oxide_git.core.errors import UntrustedTree
from oxide_git.git import restore
from tests.conftest import git


@pytest.mark.parametrize("path", ["/etc/passwd", "a\\b", "a\0b", "C:/x", "", "a/../b", "./a", "a//b",
                                  ".git/config", "x/.GIT/y", "git~1/x"])
def test_unsafe_paths_are_refused(path: str) -> None:
    with pytest.raises(UntrustedTree):
        restore.check_path(path)


@pytest.mark.parametrize("path", ["a", "a/b.txt", "dir/.gitignore", "x/.github/ci.yml", "ab:c", "x/a:b"])
def test_ordinary_paths_pass(path: str) -> None:
    restore.check_path(path)


def _raw_tree(repo: Path, data: bytes) -> pygit2.Oid:
    out = subprocess.run(["git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin"], cwd=repo,
                         input=data, capture_output=True, check=True).stdout.decode().strip()
    return pygit2.Oid(hex=out)


def _tree_with(g: pygit2.Repository, name: str, oid: pygit2.Oid) -> pygit2.Tree:
    head = g.head.peel(pygit2.Tree)
    tb = g.TreeBuilder(head)
    tb.insert(name, oid, pygit2.enums.FileMode.TREE)
    t = g[tb.write()]
    assert isinstance(t, pygit2.Tree)
    return t


def test_an_entry_that_is_no_tree_malformed_and_duplicate_trees_are_refused(repo: Path) -> None:
    g = pygit2.Repository(str(repo))
    head = g.head.peel(pygit2.Tree)
    blob = g.create_blob(b"x")
    good = g[blob].id
    dup = b"100644 f\0" + good.raw + b"100644 f\0" + good.raw
    for data, words in ((b"garbage that is no tree", "malformed"), (dup, "duplicate entries")):
        bad = _raw_tree(repo, data)
        with pytest.raises(UntrustedTree) as e:
            restore.plan(g, head, _tree_with(g, "d", bad))
        assert words in e.value.message and "under d" in e.value.message
    # a "folder" entry whose object is a blob (written with a mode git mktree would refuse)
    root = _raw_tree(repo, b"40000 d\0" + good.raw)
    t = g[root]
    assert isinstance(t, pygit2.Tree)
    with pytest.raises(UntrustedTree) as e:
        restore.plan(g, head, t)
    assert e.value.message == "refusing d/: not a tree"


def test_a_submodule_in_the_target_is_left_alone(repo: Path) -> None:
    g = pygit2.Repository(str(repo))
    head_commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head_commit},sub")
    tree = g[pygit2.Oid(hex=git(repo, "write-tree").strip())]
    assert isinstance(tree, pygit2.Tree)
    fp = restore.plan(g, g.head.peel(pygit2.Tree), tree)
    assert "sub" not in fp.writes and fp.added == [] and fp.deleted == []
