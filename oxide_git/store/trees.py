"""A tree of files with some paths changed: how a checkpoint, a checkpoint's redacted twin and the
memory write their trees, through ``git.objects``.

Only the trees on a changed path are read and written again; every other entry, and its mode as
git wrote it, is kept as it was. A tree left with no entry is dropped from its parent.
"""

from __future__ import annotations

from collections.abc import Mapping

from oxide_git.git.objects import TREE, TREE_MODE, Objects, format_tree

# the file modes git writes (a tree entry's mode, as an int; ``Entry``)
FILE_MODE, EXEC_MODE, LINK_MODE, DIR_MODE, GITLINK = 0o100644, 0o100755, 0o120000, 0o40000, 0o160000
Entry = tuple[bytes, int] | None  # (a blob's raw id, its mode) or None: absent


def apply_changes(objects: Objects, tree: bytes | None, changes: Mapping[str, Entry]) -> bytes | None:
    """The id of ``tree`` (None: empty) with ``changes`` (``{"a/b.txt": entry}``) applied; None
    when nothing is left in it."""
    entries = objects.entries(tree) if tree is not None else {}
    nested: dict[bytes, dict[str, Entry]] = {}
    for path, entry in changes.items():
        head, sep, rest = path.partition("/")
        name = head.encode("utf-8", "surrogateescape")
        if sep:
            nested.setdefault(name, {})[rest] = entry
        elif entry is None:
            entries.pop(name, None)
        else:
            entries[name] = (b"%o" % entry[1], entry[0])
    for name, sub in nested.items():
        existing = entries.get(name)
        below = existing[1] if existing is not None and existing[0] == TREE_MODE else None
        oid = apply_changes(objects, below, sub)
        if oid is None:
            entries.pop(name, None)
        else:
            entries[name] = (TREE_MODE, oid)
    return objects.write(TREE, format_tree(entries)) if entries else None


def empty_tree(objects: Objects) -> bytes:
    """The id of the tree with no entry (a checkpoint of an empty worktree)."""
    return objects.write(TREE, b"")
