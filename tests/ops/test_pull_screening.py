"""What a pull refuses before anything of it is read (``incoming``): an object over
oxide.maxRemoteObjectSize, trees nested deeper than a worktree goes, a message that does not
decode. The ref is named and left alone; the other refs of the same pull come in."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.ops.incoming import MAX_DEPTH, size_text
from oxide_git.store import writes as store
from tests.conftest import git, make_ctx, oxide
from tests.ops.test_share_edges import clones  # noqa: F401  (a fixture)


def _session(root: Path, sid: str, text: str) -> None:
    store.append(make_ctx(root), Session(sid, "claude"), [Message("user", (Part.text(text),))])


def _pull(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(oxide(root, "pull", "--json").stdout)


@pytest.mark.parametrize(("n", "text"), [(0, "0 bytes"), (1023, "1023 bytes"), (1024, "1 KiB"), (1536, "1.5 KiB"),
                                         (5 << 20, "5 MiB"), (3 << 30, "3 GiB")])
def test_sizes_are_said_in_the_largest_unit_that_fits(n: int, text: str) -> None:
    assert size_text(n) == text


def test_an_object_over_the_limit_is_refused_and_the_other_refs_come_in(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, _bare = clones
    big = "0" * 12 + "b" * 20
    small = ["0" * 12 + c * 20 for c in "acdef"]
    _session(a, big, "x" * 4000)
    for sid in small:
        _session(a, sid, "short")
    oxide(a, "push")
    git(b, "config", "oxide.maxRemoteObjectSize", "1k")
    res = _pull(b)
    assert res["updated"] == {refs.session_ref(s): "new" for s in small}
    [problem] = res["problems"]
    assert problem.startswith(f"origin {refs.session_ref(big)}: blob ")
    assert problem.endswith(", over the 1 KiB git oxide takes from a remote (oxide.maxRemoteObjectSize); not read")
    assert git(b, "rev-parse", "--verify", "-q", refs.session_ref(big), check=False) == ""
    git(b, "config", "oxide.maxRemoteObjectSize", "1m")  # raised: the same pull takes it
    assert _pull(b)["updated"] == {refs.session_ref(big): "new"}


def test_trees_nested_deeper_than_a_worktree_goes_are_refused(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, bare = clones
    _session(a, "0" * 12 + "a" * 20, "fine")
    oxide(a, "push")
    g = pygit2.Repository(str(bare))
    tb = g.TreeBuilder()
    tb.insert("f", g.create_blob(b"deep\n"), pygit2.enums.FileMode.BLOB)
    oid = tb.write()
    for _ in range(MAX_DEPTH + 1):
        tb = g.TreeBuilder()
        tb.insert("d", oid, pygit2.enums.FileMode.TREE)
        oid = tb.write()
    sig = pygit2.Signature("x", "x@example.com", 1_767_225_600, 0)
    deep = "0" * 12 + "9" * 20
    g.create_commit(refs.session_ref(deep), sig, sig, "deep", oid, [])
    res = _pull(b)
    assert res["updated"] == {refs.session_ref("0" * 12 + "a" * 20): "new"}
    [problem] = res["problems"]
    assert problem.startswith(f"origin {refs.session_ref(deep)}: its trees are nested more than {MAX_DEPTH} deep")


def test_a_message_that_does_not_decode_is_refused_by_name(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, bare = clones
    sid = "0" * 12 + "a" * 20
    _session(a, sid, "fine")
    oxide(a, "push")
    _pull(b)
    _session(a, sid, "the next one")
    oxide(a, "push")
    # the remote's newest message blob replaced by bytes that are no message
    g = pygit2.Repository(str(bare))
    tip = g.references[refs.session_ref(sid)].peel(pygit2.Commit)
    msgs = tip.tree["messages"]
    bucket = g[msgs.id]
    first_bucket = g[bucket[0].id]
    last = sorted(e.name for e in first_bucket)[-1]
    tb = g.TreeBuilder(first_bucket)
    tb.insert(last, g.create_blob(b"\xc1 this is no msgpack"), pygit2.enums.FileMode.BLOB)
    mb = g.TreeBuilder(bucket)
    mb.insert(bucket[0].name, tb.write(), pygit2.enums.FileMode.TREE)
    rb = g.TreeBuilder(tip.tree)
    rb.insert("messages", mb.write(), pygit2.enums.FileMode.TREE)
    sig = pygit2.Signature("x", "x@example.com", 1_767_225_700, 0)
    g.create_commit(refs.session_ref(sid), sig, sig, "damaged", rb.write(), [tip.id])
    before = git(b, "rev-parse", refs.session_ref(sid)).strip()
    res = _pull(b)
    [problem] = res["problems"]
    assert problem.startswith(f"origin {refs.session_ref(sid)}: message 1: ")
    assert git(b, "rev-parse", refs.session_ref(sid)).strip() == before  # nothing of it taken
