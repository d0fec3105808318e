"""Writing a checkpoint back (rewind --code), path by path: folders it empties go, folders still
holding something stay, files deep in new folders land where they belong, what is no ordinary
file (a link to a folder, a nested repository, an agent's own transcript) is handled as what it
is, every path after such a one is still restored, and a refused plan changes nothing at all."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pygit2
import pytest

from oxide_git.core.errors import UntrustedTree
from oxide_git.git import restore
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.rewind import rewind
from tests.conftest import NOW_MS, git, make_ctx


def _rewind(repo: Path, cp_id: str) -> dict:  # type: ignore[type-arg]
    return rewind(make_ctx(repo, NOW_MS + 1), cp_id, conversation=False).to_dict()["files"]


def test_folders_a_rewind_empties_are_removed_and_others_stay(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    (repo / "a" / "b").mkdir(parents=True)
    (repo / "a" / "b" / "new.txt").write_text("made after the checkpoint\n")
    (repo / "keep").mkdir()
    (repo / "keep" / "new.txt").write_text("made after the checkpoint\n")
    (repo / "keep" / "build.log").write_text("ignored, the user's\n")  # *.log: in no snapshot
    (repo / "src" / "extra.py").write_text("x = 1\n")  # src still holds app.py
    files = _rewind(repo, cp.id)
    assert sorted(files["deleted"]) == ["a/b/new.txt", "keep/new.txt", "src/extra.py"]
    assert not (repo / "a").exists()  # emptied up to the top
    assert sorted(p.name for p in (repo / "keep").iterdir()) == ["build.log"]
    assert sorted(p.name for p in (repo / "src").iterdir()) == ["app.py"]


def test_a_file_two_new_folders_deep_is_written_where_it_belongs(repo: Path) -> None:
    (repo / "x" / "y").mkdir(parents=True)
    (repo / "x" / "y" / "deep.txt").write_text("deep\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    shutil.rmtree(repo / "x")
    _rewind(repo, cp.id)
    assert (repo / "x" / "y" / "deep.txt").read_text() == "deep\n"
    assert sorted(p.relative_to(repo).as_posix() for p in (repo / "x").rglob("*")) == ["x/y", "x/y/deep.txt"]


def test_a_folder_with_files_where_the_checkpoint_has_a_file_becomes_the_file(repo: Path) -> None:
    (repo / "x").write_text("a file\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    (repo / "x").unlink()
    (repo / "x").mkdir()
    (repo / "x" / "inner.txt").write_text("in a folder now\n")
    files = _rewind(repo, cp.id)
    assert files["deleted"] == ["x/inner.txt"] and files["added"] == ["x"]
    assert (repo / "x").read_text() == "a file\n"


def test_a_link_to_a_folder_the_checkpoint_lacks_is_removed_not_what_it_points_to(repo: Path, tmp_path: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("not the worktree's\n")
    os.symlink(outside, repo / "linked")
    (repo / "zz.txt").write_text("after the link\n")
    files = _rewind(repo, cp.id)
    assert files["deleted"] == ["linked", "zz.txt"]
    assert not os.path.lexists(repo / "linked") and not (repo / "zz.txt").exists()
    assert (outside / "kept.txt").read_text() == "not the worktree's\n"


def test_a_nested_repository_the_checkpoint_lacks_is_left_alone(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    sub = repo / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    (sub / "f.txt").write_text("the nested repository's\n")
    git(sub, "add", "f.txt")
    git(sub, "commit", "-q", "-m", "nested")
    (repo / "zz.txt").write_text("after the nested repository\n")
    _rewind(repo, cp.id)
    assert (sub / "f.txt").read_text() == "the nested repository's\n" and (sub / ".git").is_dir()
    assert not (repo / "zz.txt").exists()


def test_an_agents_own_transcript_is_left_and_the_rest_restored(repo: Path) -> None:
    history = repo / ".aider.chat.history.md"
    history.write_text("# aider chat started at 2026-01-01\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    history.write_text("# aider chat started at 2026-01-01\n\n#### and the user went on\n")
    (repo / "README.md").write_text("edited\n")
    files = _rewind(repo, cp.id)
    assert files["left"] == [".aider.chat.history.md"] and files["modified"] == ["README.md"]
    assert "went on" in history.read_text() and (repo / "README.md").read_text() == "hello\n"


def test_a_refused_plan_changes_nothing_not_even_the_folders_on_its_way(repo: Path, tmp_path: Path) -> None:
    (repo / "d").mkdir()
    (repo / "d" / "f.txt").write_text("in the folder\n")
    (repo / "new").mkdir()
    (repo / "new" / "x.txt").write_text("x\n")
    cp = checkpoint(make_ctx(repo), kind="manual")
    shutil.rmtree(repo / "d")
    (repo / "d").write_text("the user's file where the folder was\n")
    shutil.rmtree(repo / "new")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(repo / "src")
    os.symlink(outside, repo / "src")  # sorts after d/ and new/: refused only when src is reached
    with pytest.raises(UntrustedTree):
        rewind(make_ctx(repo, NOW_MS + 1), cp.id, conversation=False)
    assert (repo / "d").read_text() == "the user's file where the folder was\n"
    assert not (repo / "new").exists() and list(outside.iterdir()) == []


def test_a_file_entry_whose_object_is_no_blob_is_refused(repo: Path) -> None:
    g = pygit2.Repository(str(repo))
    head = g.head.peel(pygit2.Tree)
    raw = g.odb.read(head.id)[1]  # the same entries, and a "file" that is a tree object
    bad = g[_raw_bytes(repo, raw + b"100644 notes.txt\0" + head.id.raw)]  # appended
    assert isinstance(bad, pygit2.Tree)
    fp = restore.plan(g, head, bad)
    assert fp.added == ["notes.txt"]
    with pytest.raises(UntrustedTree) as e:
        restore.apply(g, repo, fp)
    assert e.value.message.startswith("refusing notes.txt: not a blob")
    assert not (repo / "notes.txt").exists()


def _raw_tree(repo: Path, entries: list[tuple[bytes, bytes, bytes]]) -> pygit2.Oid:
    return _raw_bytes(repo, b"".join(mode + b" " + name + b"\0" + raw for mode, name, raw in entries))


def _raw_bytes(repo: Path, data: bytes) -> pygit2.Oid:
    out = subprocess.run(["git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin"], cwd=repo,
                         input=data, capture_output=True, check=True).stdout.decode().strip()
    return pygit2.Oid(hex=out)


def test_paths_after_a_submodule_or_a_mode_spelled_the_old_way_are_still_compared(repo: Path) -> None:
    g = pygit2.Repository(str(repo))
    one, two = g.create_blob(b"1\n"), g.create_blob(b"2\n")
    head = git(repo, "rev-parse", "HEAD").strip()
    old = _raw_tree(repo, [(b"100664", b"a", one.raw), (b"100644", b"z", one.raw)])
    new = _raw_tree(repo, [(b"100644", b"a", one.raw), (b"160000", b"m", bytes.fromhex(head)),
                           (b"100644", b"z", two.raw)])
    fp = restore.plan(g, g[old], g[new])  # type: ignore[arg-type]
    assert fp.modified == ["z"] and fp.added == [] and list(fp.writes) == ["z"]


def test_a_subtree_both_sides_share_is_never_read(repo: Path) -> None:
    # What makes a diff O(changed paths): a folder whose id is the same on both sides is not
    # opened, even when its object is missing here (a 100,000-file folder costs nothing).
    g = pygit2.Repository(str(repo))
    blob1, blob2 = g.create_blob(b"1\n"), g.create_blob(b"2\n")
    missing = bytes.fromhex("ab" * 20)  # no such object in this repository
    a = _raw_tree(repo, [(b"100644", b"f", blob1.raw), (b"40000", b"huge", missing)])
    b = _raw_tree(repo, [(b"100644", b"f", blob2.raw), (b"40000", b"huge", missing)])
    assert [p for p, _o, _n in restore.diff_trees(g, g[a], g[b])] == ["f"]  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["ab:c/x", "a.b:c", "x/c:", ":notes.txt"])
def test_a_colon_that_is_no_drive_letter_passes(path: str) -> None:
    restore.check_path(path)


def _nested(g: pygit2.Repository, depth: int) -> pygit2.Tree:
    """A tree whose one file lies ``depth`` folders deep."""
    tb = g.TreeBuilder()
    tb.insert("f", g.create_blob(b"deep\n"), pygit2.enums.FileMode.BLOB)
    oid = tb.write()
    for _ in range(depth):
        tb = g.TreeBuilder()
        tb.insert("d", oid, pygit2.enums.FileMode.TREE)
        oid = tb.write()
    t = g[oid]
    assert isinstance(t, pygit2.Tree)
    return t


def test_a_tree_nested_deeper_than_any_worktree_is_refused_at_its_limit(repo: Path) -> None:
    g = pygit2.Repository(str(repo))
    empty = g[g.TreeBuilder().write()]
    assert isinstance(empty, pygit2.Tree)
    at_limit = list(restore.diff_trees(g, empty, _nested(g, restore.MAX_DEPTH)))
    assert [p.count("/") for p, _o, _n in at_limit] == [restore.MAX_DEPTH]
    with pytest.raises(UntrustedTree) as e:
        list(restore.diff_trees(g, empty, _nested(g, restore.MAX_DEPTH + 1)))
    assert e.value.message == f"refusing a tree nested more than {restore.MAX_DEPTH} folders deep"
