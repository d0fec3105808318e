"""A commit object's content: written as git writes it, its headers read back (its tree, its
parents, who wrote it and when). ``Objects.write_commit`` and ``rewrite_commit`` store them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from oxide_git.core.errors import OxideError


def commit_tree(data: bytes) -> bytes:
    """The raw id of a commit's tree."""
    if not data.startswith(b"tree ") or len(data) < 45:
        raise OxideError("a commit object has no tree")
    return bytes.fromhex(data[5:45].decode("ascii"))


def signature(name: str, email: str, when_s: int) -> bytes:
    """An author or committer line's value, in UTC, as git writes it."""
    return f"{name} <{email}> {when_s} +0000".encode()


def commit_content(tree: bytes, parents: Iterable[bytes], author: bytes, committer: bytes,
                   message: str) -> bytes:
    lines = [b"tree " + tree.hex().encode()]
    lines += [b"parent " + p.hex().encode() for p in parents]
    lines += [b"author " + author, b"committer " + committer]
    return b"\n".join(lines) + b"\n\n" + message.encode("utf-8", "surrogateescape")


class Commit(NamedTuple):
    """What git oxide reads of a commit object."""

    tree: bytes  # raw ids
    parents: tuple[bytes, ...]
    time: int  # the committer's, in seconds
    author: bytes = b""  # the lines' values, as written
    committer: bytes = b""


def parse_commit(data: bytes) -> Commit:
    """A commit object's tree, parents and committer time (its headers, up to the first blank line)."""
    tree = author = committer = b""
    parents: list[bytes] = []
    when = 0
    for line in data.split(b"\n"):
        if not line:
            break
        try:
            if line.startswith(b"tree "):
                tree = bytes.fromhex(line[5:].decode("ascii"))
            elif line.startswith(b"parent "):
                parents.append(bytes.fromhex(line[7:].decode("ascii")))
            elif line.startswith(b"author "):
                author = line[7:]
            elif line.startswith(b"committer "):
                committer = line[10:]
                when = int(line.rsplit(b" ", 2)[-2])
        except (ValueError, IndexError, UnicodeDecodeError):
            continue
    if len(tree) != 20:
        raise OxideError("a commit object has no tree")
    return Commit(tree, tuple(parents), when, author, committer)
