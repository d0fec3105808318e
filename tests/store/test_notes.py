"""Commit notes: parsing every form a note takes, the union of two, and the notes-tree merge of a pull."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from oxide_git.store import notes, notesmerge
from oxide_git.store.reindex import reindex
from tests.conftest import NOW_MS, git, make_ctx

CP = "a" * 40
CP256 = "b" * 64
SID = "019c18a520e8aaaabbbbccccddddeeee"


def test_parse_json_note_keeps_order_drops_duplicates_and_non_strings() -> None:
    got = notes.parse_note(json.dumps({"oxide": 1, "sessions": ["s2-xxxxx", "s1-xxxxx", "s2-xxxxx", 7],
                                       "checkpoints": [CP, CP], "worktree": "wt"}))
    assert got == {"sessions": ["s2-xxxxx", "s1-xxxxx"], "checkpoints": [CP], "oxide": 1, "worktree": "wt"}


def test_parse_json_with_null_lists_and_non_dict_documents() -> None:
    assert notes.parse_note('{"sessions": null, "checkpoints": null}') == {"sessions": [], "checkpoints": []}
    assert notes.parse_note("[1, 2]") == {"sessions": [], "checkpoints": []}
    assert notes.parse_note("") == {"sessions": [], "checkpoints": []}


def test_parse_several_json_documents_a_union_merge_leaves() -> None:
    text = json.dumps({"sessions": ["s1-xxxxx"], "checkpoints": [], "branch": "a"}) + "\n\n" + json.dumps(
        {"sessions": ["s2-xxxxx", "s1-xxxxx"], "checkpoints": [CP], "branch": "b"}) + "\n"
    got = notes.parse_note(text)
    assert got["sessions"] == ["s1-xxxxx", "s2-xxxxx"] and got["checkpoints"] == [CP]
    assert got["branch"] == "b"  # the later document's field


def test_parse_plain_ids_one_per_line_or_separated() -> None:
    text = f"session:{SID}\ncheckpoint:{CP}, {CP256}\n  s-other-1 , s-other-1\nab\n{SID}\n"
    got = notes.parse_note(text)
    assert got == {"sessions": [SID, "s-other-1"], "checkpoints": [CP, CP256]}
    assert notes.parse_note("x" * 129) == {"sessions": [], "checkpoints": []}  # too long for an id
    assert notes.parse_note("has/slash") == {"sessions": [], "checkpoints": []}
    assert notes.parse_note("A" * 40)["sessions"] == ["A" * 40]  # upper case hex is no object id
    assert notes.parse_note("abcdef")["sessions"] == ["abcdef"]  # six characters is the shortest id
    assert notes.parse_note("abcde") == {"sessions": [], "checkpoints": []}


def test_merge_notes_is_an_ordered_union_later_fields_win() -> None:
    a = {"sessions": ["s1-xxxxx"], "checkpoints": [CP], "branch": "a", "worktree": "main"}
    b = {"sessions": ["s2-xxxxx", "s1-xxxxx", ""], "checkpoints": [CP256], "branch": "b"}
    got = notes.merge_notes(a, b)
    assert got == {"oxide": 1, "sessions": ["s1-xxxxx", "s2-xxxxx"], "checkpoints": [CP, CP256],
                   "branch": "b", "worktree": "main"}
    assert notes.merge_notes() == {"oxide": 1, "sessions": [], "checkpoints": []}
    assert notes.merge_notes({"checkpoints": [CP]}) == {"oxide": 1, "sessions": [], "checkpoints": [CP]}


def test_merge_texts_is_json_sorted_with_a_newline() -> None:
    out = notesmerge.merge_texts('{"sessions": ["s1-xxxxx"]}', f"session:s2-xxxxx\n{CP}")
    assert out.endswith("}\n") and json.loads(out) == {"oxide": 1, "sessions": ["s1-xxxxx", "s2-xxxxx"],
                                                        "checkpoints": [CP]}
    assert out == json.dumps(json.loads(out), sort_keys=True) + "\n"


def _notes_tree(g: pygit2.Repository, entries: dict[str, str], fanout: bool) -> pygit2.Tree:
    root = g.TreeBuilder()
    sub: dict[str, pygit2.TreeBuilder] = {}
    for obj, text in entries.items():
        blob = g.create_blob(text.encode())
        if fanout:
            sub.setdefault(obj[:2], g.TreeBuilder()).insert(obj[2:], blob, pygit2.enums.FileMode.BLOB)
        else:
            root.insert(obj, blob, pygit2.enums.FileMode.BLOB)
    for head, tb in sub.items():
        root.insert(head, tb.write(), pygit2.enums.FileMode.TREE)
    t = g[root.write()]
    assert isinstance(t, pygit2.Tree)
    return t


def _flat(g: pygit2.Repository, tree_id: pygit2.Oid) -> dict[str, str]:
    out = {}
    t = g[tree_id]
    assert isinstance(t, pygit2.Tree)
    for e in t:
        assert e.type_str == "tree" and len(e.name or "") == 2  # git's two-character fan-out
        for x in g[e.id]:  # type: ignore[attr-defined]
            out[(e.name or "") + x.name] = g[x.id].data.decode()  # type: ignore[attr-defined]
    return out


def test_merge_notes_trees_union_per_commit_whatever_the_fanout(repo: Path) -> None:
    g = pygit2.Repository(str(repo))
    c1, c2, c3 = "1" * 40, "2" * 40, "3" * 40
    same = json.dumps({"sessions": ["s0-xxxxx"]})
    ours = _notes_tree(g, {c1: json.dumps({"sessions": ["s1-xxxxx"]}), c3: same}, fanout=False)
    theirs = _notes_tree(g, {c1: json.dumps({"sessions": ["s2-xxxxx"]}), c2: "s-theirs", c3: same},
                         fanout=True)
    objects = make_ctx(repo).repo.objects
    got = _flat(g, pygit2.Oid(raw=notesmerge.merge_notes(objects, ours.id.raw, theirs.id.raw)))
    assert set(got) == {c1, c2, c3}
    assert json.loads(got[c1])["sessions"] == ["s1-xxxxx", "s2-xxxxx"]  # ours first
    assert got[c2] == "s-theirs" and got[c3] == same  # only theirs: as it was; same blob: kept


def test_rebuild_links_refills_the_index_from_the_notes(repo: Path) -> None:
    ctx = make_ctx(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert notes.rebuild_links(ctx) == 0  # no notes ref yet
    git(repo, "notes", "--ref", "oxide", "add", "-m", json.dumps({"sessions": [SID], "checkpoints": [CP]}))
    assert notes.rebuild_links(ctx) == 1
    rows = ctx.index.query("SELECT * FROM links")
    assert [tuple(r) for r in rows] == [(head, SID, CP)]
    reindex(make_ctx(repo), full=True)
    assert [tuple(r) for r in make_ctx(repo).index.query("SELECT * FROM links")] == [(head, SID, CP)]


def test_a_note_libgit2_cannot_read_is_skipped_and_the_others_are_linked(repo: Path) -> None:
    """A notes tree from elsewhere may name a blob this repository lacks: the links of the notes
    it can read are rebuilt, the other is skipped (reindex would otherwise stop on a traceback)."""
    import subprocess

    ctx = make_ctx(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "notes", "--ref", "oxide", "add", "-m", json.dumps({"sessions": [SID], "checkpoints": [CP]}))
    good = git(repo, "ls-tree", "refs/notes/oxide").split()
    other = "0" * 39 + "1"  # a commit it annotates (first in the tree), by a blob that is not here
    tree = subprocess.run(["git", "mktree", "--missing"], cwd=repo, check=True, capture_output=True, text=True,
                          input=f"100644 blob {'d' * 40}\t{other}\n{good[0]} {good[1]} {good[2]}\t{good[3]}\n"
                          ).stdout.strip()
    commit = git(repo, "commit-tree", tree, "-m", "notes from elsewhere").strip()
    git(repo, "update-ref", "refs/notes/oxide", commit)
    assert notes.rebuild_links(ctx) == 1
    assert [tuple(r) for r in ctx.index.query("SELECT * FROM links")] == [(head, SID, CP)]


def test_write_note_merges_into_the_existing_note(repo: Path) -> None:
    ctx = make_ctx(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert notes.read_note(ctx.repo.git, head) == {}
    notes.write_note(ctx, head, {"sessions": [SID], "checkpoints": []})
    merged = notes.write_note(ctx, head, {"sessions": ["s-second"], "checkpoints": [CP], "branch": "main"})
    assert merged["sessions"] == [SID, "s-second"] and merged["branch"] == "main"
    assert json.loads(git(repo, "notes", "--ref", "oxide", "show", head)) == merged
    # byte for byte the same note for the same content (a pull compares notes by blob id)
    assert git(repo, "notes", "--ref", "oxide", "show", head) == json.dumps(merged, sort_keys=True) + "\n"
    assert git(repo, "log", "-1", "--format=%ct", "refs/notes/oxide").strip() == str(NOW_MS // 1000)
    rows = {tuple(r) for r in make_ctx(repo).index.query("SELECT * FROM links")}
    assert (head, SID, "") in rows and (head, SID, CP) in rows and (head, "s-second", CP) in rows
    # an empty note writes nothing
    other = git(repo, "commit-tree", "-m", "x", f"{head}^{{tree}}").strip()
    assert notes.write_note(ctx, other, {"sessions": [], "checkpoints": []})["sessions"] == []
    assert git(repo, "notes", "--ref", "oxide", "show", other, check=False) == ""


def test_a_note_waits_for_a_live_lock_and_breaks_a_stale_one(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed `git gc` leaves refs/notes/oxide.lock: the hooks' notes were lost while it stayed."""
    import os
    import time

    from oxide_git.core.errors import LockTimeout
    from oxide_git.git import refs

    ctx = make_ctx(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    notes.write_note(ctx, head, {"sessions": [SID], "checkpoints": []})  # the ref exists
    lock = repo / ".git" / "refs" / "notes" / "oxide.lock"
    lock.write_text("")  # a live writer's
    monkeypatch.setattr(notes, "NOTE_LOCK_BUDGET_S", 0.2)
    with pytest.raises(LockTimeout):
        notes.write_note(ctx, head, {"sessions": ["s-second"], "checkpoints": []})
    assert lock.exists() and notes.read_note(ctx.repo.git, head)["sessions"] == [SID]
    old = time.time() - refs.STALE_LOCK_S - 5
    os.utime(lock, (old, old))  # left by a process that died
    merged = notes.write_note(ctx, head, {"sessions": ["s-second"], "checkpoints": []})
    assert not lock.exists() and merged["sessions"] == [SID, "s-second"]
    assert json.loads(git(repo, "notes", "--ref", "oxide", "show", head)) == merged


def _raw_tree(git: pygit2.Repository, entries: list[tuple[str, str, pygit2.Oid]]) -> pygit2.Oid:
    """A tree object written byte for byte, unchecked (as a hostile remote can send one)."""
    raw = b"".join(f"{mode} {name}".encode() + b"\0" + oid.raw for mode, name, oid in entries)
    return git.odb.write(pygit2.GIT_OBJECT_TREE, raw)


def test_flatten_stops_at_the_deepest_fanout_a_notes_tree_can_have(repo: Path) -> None:
    """A notes tree from elsewhere is read only as deep as a notes tree goes: a folder whose path
    already spells 64 characters is not entered, one at 62 is; a tree entry that names a blob is
    skipped, never iterated."""
    git = pygit2.Repository(str(repo))
    blob = git.create_blob(b'{"sessions": []}\n')
    inner = _raw_tree(git, [("100644", "cd", blob)])
    deep, shallow = inner, inner
    for _ in range(31):  # with the top one, 32 folders of 2 characters: the innermost at 64, not entered
        deep = _raw_tree(git, [("40000", "ab", deep)])
    for _ in range(30):  # 31 folders: the innermost at 62 characters, entered, its note read
        shallow = _raw_tree(git, [("40000", "ef", shallow)])
    top = _raw_tree(git, [("40000", "ab", deep), ("40000", "ef", shallow), ("40000", "zz", blob)])
    flat = notesmerge.flatten(make_ctx(repo).repo.objects, top.raw)
    assert flat == {"ef" * 31 + "cd": blob.raw}
