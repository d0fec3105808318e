"""The plain-Python object and ref access of the session-log write path, against real git."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.core import log_layout
from oxide_git.core.errors import LockTimeout, OxideError
from oxide_git.core.model import Message, Part, Session
from oxide_git.git import objects as gitobjects
from oxide_git.git import refs
from oxide_git.git.commits import commit_tree, signature
from oxide_git.store import logread, logwrite, sessionlog
from oxide_git.store import writes as store
from tests.conftest import git, make_ctx


def _session(sid: str = "0" * 12 + "c" * 20) -> Session:
    return Session(id=sid, agent="claude", created_at=1, updated_at=1)


def _msg(i: int) -> Message:
    return Message(role="user" if i % 2 == 0 else "assistant", parts=(Part.text(f"message {i} " * 20),),
                   created_at=1000 + i)


def test_objects_round_trip_with_git(repo: Path) -> None:
    objects = gitobjects.Objects(repo / ".git" / "objects")
    blob = objects.write(gitobjects.BLOB, b"hello\n")
    (repo / "hello.txt").write_text("hello\n")
    assert blob.hex() == git(repo, "hash-object", "hello.txt").strip()
    assert git(repo, "cat-file", "-p", blob.hex()) == "hello\n"
    tree = objects.write(gitobjects.TREE, gitobjects.format_tree({
        b"b.txt": (gitobjects.BLOB_MODE, blob), b"a": (gitobjects.TREE_MODE, _git_tree(repo)), b"a.txt": (gitobjects.BLOB_MODE, blob)}))
    # git's order: "a.txt" < "a/" (a subtree sorts as if its name ended with "/")
    assert [ln.split("\t")[1] for ln in git(repo, "ls-tree", tree.hex()).splitlines()] == ["a.txt", "a", "b.txt"]
    commit = objects.write_commit(tree, [], "m\n", signature("x", "x@y", 5))
    loose = repo / ".git" / "objects" / blob.hex()[:2] / blob.hex()[2:]
    os.utime(loose, (1_000_000, 1_000_000))
    assert objects.write(gitobjects.BLOB, b"hello\n") == blob
    assert loose.stat().st_mtime > 1_000_000  # freshened, as git does, against a concurrent prune
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo, check=True, capture_output=True)
    assert commit_tree(objects.read_kind(commit, gitobjects.COMMIT)) == tree
    assert gitobjects.parse_tree(objects.read_kind(tree, gitobjects.TREE))[0][1] == b"a.txt"


def _git_tree(repo: Path) -> bytes:
    return bytes.fromhex(git(repo, "rev-parse", "HEAD^{tree}").strip())


def test_reads_deltas_after_an_aggressive_gc_and_through_alternates(repo: Path, tmp_path: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    for i in range(0, 600, 100):  # many versions of similar trees: gc stores them as deltas
        store.append(ctx, s, [_msg(q) for q in range(i, i + 100)])
    git(repo, "pack-refs", "--all")
    git(repo, "gc", "-q", "--aggressive", "--prune=now")
    assert not any((repo / ".git" / "objects").glob("??/*"))
    verify = git(repo, "verify-pack", "-v", *map(str, (repo / ".git" / "objects" / "pack").glob("*.idx")))
    assert any(len(ln.split()) == 7 for ln in verify.splitlines())  # "... depth base": a delta
    fresh = make_ctx(repo)
    for commit in git(repo, "rev-list", refs.session_ref(s.id)).split():
        # older versions of a tree are stored as deltas against the newer ones: every version
        # reads as pygit2 reads it (tree, session, each message's bytes), not only as many
        old = logread.tip_at(fresh.repo.objects, bytes.fromhex(commit))
        theirs = sessionlog.load_commit(fresh.repo, pygit2.Oid(hex=commit))
        assert old.count == theirs.count and old.tree == theirs.commit.tree_id.raw
        assert old.session == theirs.session
        ours = dict(logread.blobs_at(fresh.repo.objects, old.tree, range(old.count)))
        assert sorted(ours) == list(range(old.count))
        g = fresh.repo.git
        for seq in (0, old.count // 2, old.count - 1):
            entry = theirs.commit.tree[f"{log_layout.MESSAGES_DIR}/{logwrite.bucket_name(seq)}/{logwrite.entry_name(seq)}"]
            assert ours[seq] == g[entry.id].data  # type: ignore[attr-defined]
    tip = logread.tip(fresh.repo.objects, fresh.repo.common_dir, s.id)
    assert tip is not None and tip.count == 600
    assert dict(logread.blobs_at(fresh.repo.objects, tip.tree, [5, 599]))[599]
    store.append(fresh, s, [_msg(600)])  # on a packed ref and packed, deltified trees
    assert logread.tip(fresh.repo.objects, fresh.repo.common_dir, s.id).count == 601  # type: ignore[union-attr]
    # a clone that borrows the objects (alternates) reads them there
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(clone)], check=True)
    git(clone, "fetch", "-q", "origin", "refs/oxide/*:refs/oxide/*")
    other = make_ctx(clone)
    assert logread.tip(other.repo.objects, other.repo.common_dir, s.id).count == 601  # type: ignore[union-attr]
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo, check=True, capture_output=True)


def test_damaged_objects_are_errors_not_answers(repo: Path) -> None:
    objects = gitobjects.Objects(repo / ".git" / "objects")
    blob = objects.write(gitobjects.BLOB, b"precious\n")
    path = repo / ".git" / "objects" / blob.hex()[:2] / blob.hex()[2:]
    os.chmod(path, 0o644)
    import zlib

    path.write_bytes(zlib.compress(b"blob 9\0tampered\n"))
    with pytest.raises(OxideError, match="damaged"):
        gitobjects.Objects(repo / ".git" / "objects").read(blob)
    path.write_bytes(b"not zlib")
    with pytest.raises(OxideError):
        gitobjects.Objects(repo / ".git" / "objects").read(blob)
    with pytest.raises(gitobjects.ObjectMissing):
        objects.read(b"\x01" * 20)
    with pytest.raises(OxideError):
        gitobjects.parse_tree(b"100644 name-without-nul")


def test_ref_swap_is_compare_and_swap_under_gits_lock(repo: Path) -> None:
    common = repo / ".git"
    head = bytes.fromhex(git(repo, "rev-parse", "HEAD").strip())
    name = "refs/oxide/test/one"
    refs.swap(common, name, None, head)
    assert git(repo, "rev-parse", name).strip() == head.hex()
    with pytest.raises(refs.RefMoved):
        refs.swap(common, name, None, head)
    git(repo, "pack-refs", "--all")
    assert not (common / name).exists() and refs.read_raw(common, name) == head
    tree = _git_tree(repo)
    refs.swap(common, name, head, tree)  # a packed ref is updated by a loose one, as git does
    assert git(repo, "rev-parse", name).strip() == tree.hex()
    lock = common / f"{name}.lock"
    lock.write_text("")  # held by a live process
    with pytest.raises(LockTimeout):
        refs.swap(common, name, tree, head, budget_s=0.05)
    old = time.time() - refs.STALE_LOCK_S - 5
    os.utime(lock, (old, old))  # left by a dead one
    refs.swap(common, name, tree, head, budget_s=0.05)
    assert not lock.exists() and refs.read_raw(common, name) == head


def test_packed_refs_are_read_as_git_reads_them(repo: Path) -> None:
    """Each ref of many in packed-refs (as `git gc` leaves a store), and none that only ends or
    starts like one; the whole file read once agrees with git."""
    common = repo / ".git"
    head = git(repo, "rev-parse", "HEAD").strip()
    tag_target = git(repo, "rev-parse", "HEAD^{tree}").strip()
    git(repo, "tag", "-a", "-m", "t", "annotated")  # a peeled line (^...) follows it
    for i in range(300):
        git(repo, "update-ref", f"refs/oxide/sessions/s{i:03d}", head if i % 2 else tag_target)
    git(repo, "update-ref", "refs/heads/refs/oxide/sessions/s001", head)
    git(repo, "pack-refs", "--all")
    listed = dict(reversed(line.split()) for line in
                  git(repo, "for-each-ref", "--format=%(objectname) %(refname)").splitlines())
    assert {n: v.hex() for n, v in refs.packed_refs(common).items()} == listed
    for name, oid in listed.items():
        assert refs.read_raw(common, name) == bytes.fromhex(oid), name
    for missing in ("refs/oxide/sessions/s3", "oxide/sessions/s001", "refs/oxide/sessions/s0011"):
        assert refs.read_raw(common, missing) is None, missing


_NAME = st.text(alphabet=st.sampled_from("ab.-_/0 é\t~"), min_size=1, max_size=6).filter(
    lambda n: "/" not in n and n not in (".", ".."))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(_NAME, st.booleans(), min_size=1, max_size=8))
def test_trees_are_in_gits_order(repo: Path, names: dict[str, bool]) -> None:
    """Whatever the names (a tree from a remote may hold anything), a tree written here is the
    tree git writes: same entries, same order (a subtree sorts as if its name ended in "/")."""
    objects = gitobjects.Objects(repo / ".git" / "objects")
    blob = objects.write(gitobjects.BLOB, b"x\n")
    sub = _git_tree(repo)
    entries = {n.encode(): (gitobjects.TREE_MODE, sub) if is_tree else (gitobjects.BLOB_MODE, blob)
               for n, is_tree in names.items()}
    tree = objects.write(gitobjects.TREE, gitobjects.format_tree(entries))
    listing = git(repo, "ls-tree", "-z", tree.hex())
    mktree = subprocess.run(["git", "mktree", "-z"], cwd=repo, input=listing.encode(), capture_output=True,
                            check=True).stdout.decode().strip()
    assert mktree == tree.hex()  # git sorts the same entries into the same object
    assert {ln.split("\t", 1)[1] for ln in listing.split("\0") if ln} == set(names)


def test_an_object_in_a_pack_gc_removed_is_written_again(repo: Path) -> None:
    """A long-lived process (watch) holds packs open; after `git gc` deleted one, an object that
    was only there is written again instead of being taken as stored."""
    from oxide_git.git import packwriter

    objects_dir = repo / ".git" / "objects"
    data = b"only in a pack\n" * 100
    (oid,) = packwriter.write_pack(objects_dir, [(gitobjects.BLOB, data)])
    objects = gitobjects.Objects(objects_dir)
    assert objects.has(oid)  # the pack is open now
    for f in (objects_dir / "pack").glob("pack-*"):
        f.unlink()  # what a prune of unreachable objects does
    assert objects.write(gitobjects.BLOB, data) == oid
    assert git(repo, "cat-file", "-p", oid.hex()) == data.decode()
