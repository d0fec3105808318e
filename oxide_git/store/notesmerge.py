"""Merging two notes trees of ``refs/notes/oxide`` (on pull): a union per annotated commit.

What a note holds and how it is read is ``notes.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import pygit2

from oxide_git.store.notes import merge_notes as merge_note_dicts
from oxide_git.store.notes import parse_note


def merge_texts(*texts: str) -> str:
    """Two (or more) note texts as one JSON note: the union, first-seen order."""
    return json.dumps(merge_note_dicts(*(parse_note(t) for t in texts)), sort_keys=True) + "\n"


def _flatten(git: pygit2.Repository, tree: pygit2.Tree) -> dict[str, pygit2.Oid]:
    """{annotated object hex: note blob} of a notes tree, whatever its fan-out (git's fan-out is
    at most 19 levels for SHA-1: a deeper tree is not a notes tree, and its depth stops here)."""
    out: dict[str, pygit2.Oid] = {}
    todo = [(tree, "")]
    while todo:
        t, prefix = todo.pop()
        for e in t:
            name = prefix + (e.name or "")
            if e.type_str == "tree":
                sub = git[e.id]
                if isinstance(sub, pygit2.Tree) and len(name) < 64:
                    todo.append((sub, name))
            else:
                out[name] = e.id
    return out


def merge_notes(git: pygit2.Repository, ours: pygit2.Tree, theirs: pygit2.Tree, *,
                union: bool = True) -> pygit2.Oid:
    """The tree of the union of two notes trees; a commit annotated on both sides gets one note
    holding the union of both (as JSON), or ours (not ``union``: notes other tools read).
    Written with a two-character fan-out, as git does."""
    mine, other = _flatten(git, ours), _flatten(git, theirs)
    merged = dict(mine)
    for obj, blob in other.items():
        if obj not in merged:
            merged[obj] = blob
        elif merged[obj] != blob and union:
            a = git[merged[obj]].data.decode("utf-8", "replace")  # type: ignore[attr-defined]
            b = git[blob].data.decode("utf-8", "replace")  # type: ignore[attr-defined]
            merged[obj] = git.create_blob(merge_texts(a, b).encode())
    return _write(git, merged.items())


def _write(git: pygit2.Repository, items: Iterable[tuple[str, pygit2.Oid]]) -> pygit2.Oid:
    fan: dict[str, dict[str, pygit2.Oid]] = {}
    for obj, blob in items:
        fan.setdefault(obj[:2], {})[obj[2:]] = blob
    root = git.TreeBuilder()
    for head, entries in sorted(fan.items()):
        tb = git.TreeBuilder()
        for rest, blob in sorted(entries.items()):
            tb.insert(rest, blob, pygit2.enums.FileMode.BLOB)
        root.insert(head, tb.write(), pygit2.enums.FileMode.TREE)
    return root.write()
