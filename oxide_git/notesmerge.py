"""Commit notes on ``refs/notes/oxide``: read them tolerantly and merge two notes trees.

A note is JSON ``{"oxide": 1, "sessions": [...], "checkpoints": [...], ...}`` (written by the
hooks); older or hand-written notes may hold one id per line, and both are accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import pygit2

_HEX = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
_ID = re.compile(r"^[A-Za-z0-9_-]{6,128}$")


def parse_note(text: str) -> dict[str, Any]:
    """A note as ``{"sessions": [...], "checkpoints": [...], ...}`` from JSON, several JSON
    documents (a line-wise union merge of two notes) or one id per line."""
    out: dict[str, Any] = {"sessions": [], "checkpoints": []}
    docs: list[Any] = []
    try:
        docs = [json.loads(text)]
    except ValueError:
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                docs.append(json.loads(line))
            except ValueError:
                docs.append(line)
    for d in docs:
        if isinstance(d, dict):
            for key in ("sessions", "checkpoints"):
                for v in d.get(key) or []:
                    if isinstance(v, str) and v not in out[key]:
                        out[key].append(v)
            out.update({k: v for k, v in d.items() if k not in ("sessions", "checkpoints")})
        elif isinstance(d, str):
            for word in re.split(r"[\s,]+", d):
                word = word.strip().removeprefix("session:").removeprefix("checkpoint:")
                key = "checkpoints" if _HEX.match(word) else "sessions"
                if _ID.match(word) and word not in out[key]:
                    out[key].append(word)
    return out


def merge_texts(*texts: str) -> str:
    merged: dict[str, Any] = {"oxide": 1, "sessions": [], "checkpoints": []}
    for t in texts:
        n = parse_note(t)
        for key in ("sessions", "checkpoints"):
            merged[key] += [v for v in n[key] if v not in merged[key]]
        merged.update({k: v for k, v in n.items() if k not in ("sessions", "checkpoints")})
    return json.dumps(merged, sort_keys=True) + "\n"


def _flatten(git: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> dict[str, pygit2.Oid]:
    """{annotated object hex: note blob} of a notes tree, whatever its fan-out."""
    out: dict[str, pygit2.Oid] = {}
    for e in tree:
        name = prefix + (e.name or "")
        if e.type_str == "tree":
            sub = git[e.id]
            if isinstance(sub, pygit2.Tree):
                out.update(_flatten(git, sub, name))
        else:
            out[name] = e.id
    return out


def merge_notes(git: pygit2.Repository, ours: pygit2.Tree, theirs: pygit2.Tree) -> pygit2.Oid:
    """The tree of the union of two notes trees; a commit annotated on both sides gets one note
    holding the union of both (as JSON). Written with a two-character fan-out, as git does."""
    mine, other = _flatten(git, ours), _flatten(git, theirs)
    merged = dict(mine)
    for obj, blob in other.items():
        if obj not in merged:
            merged[obj] = blob
        elif merged[obj] != blob:
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


def notes_for(git: pygit2.Repository, commits: Iterable[str], ref: str = "refs/notes/oxide"
              ) -> dict[str, dict[str, Any]]:
    """The parsed note of each of ``commits`` that has one."""
    out: dict[str, dict[str, Any]] = {}
    for c in commits:
        try:
            note = git.lookup_note(c, ref)
        except (KeyError, ValueError, pygit2.GitError):
            continue
        out[c] = parse_note(note.message)
    return out
