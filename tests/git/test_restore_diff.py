"""The restore plan's tree diff reads raw tree objects: it must agree with libgit2's own diff,
read modes as libgit2 does, and refuse trees git itself would reject."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from oxide_git.core.errors import UntrustedTree
from oxide_git.git import restore

FM = pygit2.enums.FileMode
OBJ_TREE = pygit2.enums.ObjectType.TREE


def _tree(git: pygit2.Repository, files: dict[str, tuple[bytes, int]]) -> pygit2.Tree:
    """A tree from {path: (content, mode)}; gitlink contents are commit ids in hex."""
    def build(items: dict[str, tuple[bytes, int]]) -> pygit2.Oid:
        tb = git.TreeBuilder()
        sub: dict[str, dict[str, tuple[bytes, int]]] = {}
        for path, (data, mode) in items.items():
            head, sep, rest = path.partition("/")
            if sep:
                sub.setdefault(head, {})[rest] = (data, mode)
            elif mode == FM.COMMIT:
                tb.insert(head, pygit2.Oid(hex=data.decode()), mode)
            else:
                tb.insert(head, git.create_blob(data), mode)
        for name, items2 in sub.items():
            tb.insert(name, build(items2), FM.TREE)
        return tb.write()

    return git[build(files)].peel(pygit2.Tree)


def _raw_tree(git: pygit2.Repository, entries: list[tuple[bytes, bytes, pygit2.Oid]]) -> pygit2.Tree:
    data = b"".join(mode + b" " + name + b"\0" + oid.raw for mode, name, oid in entries)
    return git[git.odb.write(OBJ_TREE, data)].peel(pygit2.Tree)


def test_the_plan_matches_libgit2s_diff(tmp_path: Path) -> None:
    git = pygit2.init_repository(str(tmp_path / "r"))
    sub = "a" * 40
    before = {
        "README.md": (b"hello\n", FM.BLOB),
        "src/app.py": (b"print(1)\n", FM.BLOB),
        "src/run.sh": (b"#!/bin/sh\n", FM.BLOB),
        "src/deep/x/y.txt": (b"y\n", FM.BLOB),
        "link": (b"README.md", FM.LINK),
        "gone/file.txt": (b"bye\n", FM.BLOB),
        "thing": (b"a file that becomes a folder\n", FM.BLOB),
        "vendor/lib": (sub.encode(), FM.COMMIT),
        "same/" + "é.txt": (b"unchanged\n", FM.BLOB),
    }
    after = dict(before)
    del after["gone/file.txt"], after["thing"]
    after["src/app.py"] = (b"print(2)\n", FM.BLOB)
    after["src/run.sh"] = (b"#!/bin/sh\n", FM.BLOB_EXECUTABLE)  # a mode change only
    after["src/deep/x/z.txt"] = (b"new\n", FM.BLOB)
    after["link"] = (b"src/app.py", FM.LINK)
    after["thing/inside.txt"] = (b"now a folder\n", FM.BLOB)
    a, b = _tree(git, before), _tree(git, after)

    got = {p: (o, n) for p, o, n in restore.diff_trees(git, a, b)}
    expected = {d.new_file.path or d.old_file.path for d in a.diff_to_tree(b).deltas}
    expected |= {d.old_file.path for d in a.diff_to_tree(b).deltas}
    assert set(got) == expected
    assert got["src/run.sh"][1] is not None and got["src/run.sh"][1][1] == FM.BLOB_EXECUTABLE
    assert got["gone/file.txt"][1] is None and got["thing/inside.txt"][0] is None
    fp = restore.plan(git, a, b)
    assert sorted(fp.deleted) == ["gone/file.txt", "thing"]
    assert sorted(fp.added) == ["src/deep/x/z.txt", "thing/inside.txt"]
    assert sorted(fp.modified) == ["link", "src/app.py", "src/run.sh"]
    assert fp.writes["link"][1] == FM.LINK and isinstance(fp.writes["link"][0], pygit2.Oid)
    assert list(restore.diff_trees(git, a, a)) == []


def test_legacy_modes_are_read_as_libgit2_reads_them(tmp_path: Path) -> None:
    git = pygit2.init_repository(str(tmp_path / "r"))
    blob = git.create_blob(b"x\n")
    old = _raw_tree(git, [(b"100664", b"f", blob), (b"100775", b"g", blob)])  # from ancient git
    new = _raw_tree(git, [(b"100644", b"f", blob), (b"100755", b"g", blob)])
    assert list(restore.diff_trees(git, old, new)) == []  # the same files: nothing is written


def test_duplicate_entries_are_refused(tmp_path: Path) -> None:
    git = pygit2.init_repository(str(tmp_path / "r"))
    blob = git.create_blob(b"x\n")
    bad = _raw_tree(git, [(b"100644", b"dup", blob), (b"100644", b"dup", blob)])
    good = _raw_tree(git, [(b"100644", b"other", blob)])
    with pytest.raises(UntrustedTree):
        list(restore.diff_trees(git, good, bad))
