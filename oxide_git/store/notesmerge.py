"""Merging two notes trees of ``refs/notes/oxide`` (on pull): a union per annotated commit.

What a note holds and how it is read is ``notes.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from oxide_git.git.objects import BLOB, BLOB_MODE, TREE, TREE_MODE, Objects, format_tree, parse_tree
from oxide_git.store.notes import merge_notes as merge_note_dicts
from oxide_git.store.notes import parse_note


def merge_texts(*texts: str) -> str:
    """Two (or more) note texts as one JSON note: the union, first-seen order."""
    return json.dumps(merge_note_dicts(*(parse_note(t) for t in texts)), sort_keys=True) + "\n"


def flatten(objects: Objects, tree: bytes) -> dict[str, bytes]:
    """{annotated object hex: note blob's raw id} of a notes tree, whatever its fan-out (git's
    fan-out is at most 19 levels for SHA-1: a deeper tree is not a notes tree, and its depth stops
    here). A tree entry naming what is not a tree is skipped, never read as one."""
    out: dict[str, bytes] = {}
    todo = [(objects.read_kind(tree, TREE), "")]
    while todo:
        data, prefix = todo.pop()
        for mode, name_b, entry in parse_tree(data):
            name = prefix + name_b.decode("utf-8", "replace")
            if mode != TREE_MODE:
                out[name] = entry
            elif len(name) < 64:
                kind, sub = objects.read(entry)
                if kind == TREE:
                    todo.append((sub, name))
    return out


def merge_notes(objects: Objects, ours: bytes, theirs: bytes, *, union: bool = True) -> bytes:
    """The tree of the union of two notes trees; a commit annotated on both sides gets one note
    holding the union of both (as JSON), or ours (not ``union``: notes other tools read).
    Written with a two-character fan-out, as git does."""
    mine, other = flatten(objects, ours), flatten(objects, theirs)
    merged = dict(mine)
    for obj, blob in other.items():
        if obj not in merged:
            merged[obj] = blob
        elif merged[obj] != blob and union:
            a = objects.read_kind(merged[obj], BLOB).decode("utf-8", "replace")
            b = objects.read_kind(blob, BLOB).decode("utf-8", "replace")
            merged[obj] = objects.write(BLOB, merge_texts(a, b).encode())
    return _write(objects, merged.items())


def _write(objects: Objects, items: Iterable[tuple[str, bytes]]) -> bytes:
    fan: dict[str, dict[bytes, tuple[bytes, bytes]]] = {}
    for obj, blob in items:
        fan.setdefault(obj[:2], {})[obj[2:].encode()] = (BLOB_MODE, blob)
    root = {head.encode(): (TREE_MODE, objects.write(TREE, format_tree(entries)))
            for head, entries in sorted(fan.items())}
    return objects.write(TREE, format_tree(root))
