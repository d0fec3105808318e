"""The git object layer: every object git oxide reads or writes itself goes through ``Objects``.

Objects are read loose, from packs (deltas included, as `git gc` leaves them) and from alternates,
in git's own formats (``packread`` reads a pack's index and entries); new ones are written loose,
under a temporary name and renamed into place as git does, or many at once as a pack
(``packwriter``). Every object read by ``read`` is checked against its id, so a damaged store
raises instead of answering wrongly; ``read_unchecked`` and ``blobs`` read as git itself does
(blame reads every version of a file; resume every message of a log).

Session logs (``store.logread`` and ``store.logwrite``), the import, the blame and the
snapshots' trees read and write through this one interface. pygit2 (libgit2) stays behind
``Repo.git`` for what it does that is not reading or writing an object: the worktree's filters and
status, diffs, merges, checkouts, walks over history. It costs ~50 ms of a process's start, which
the commands that need none of that (an import of a few new lines, a hook's append, a blame) do not
pay.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from oxide_git.core.errors import OxideError
from oxide_git.git import packread
from oxide_git.git.commits import commit_content, parse_commit

COMMIT, TREE, BLOB, TAG = 1, 2, 3, 4
KIND_NAMES = {COMMIT: b"commit", TREE: b"tree", BLOB: b"blob", TAG: b"tag"}
_KIND_OF = {v: k for k, v in KIND_NAMES.items()}
TREE_MODE = b"40000"
GITLINK_MODE = b"160000"
_MAX_DEPTH = 64
_GIVE_UP = 32  # wrong guesses past the hits after which ``blobs`` stops guessing the next entry
BLOB_MODE = b"100644"


class ObjectMissing(OxideError):
    pass


class ObjectTooLarge(OxideError):
    """An object over ``packread.MAX_OBJECT``, refused from its header before it is inflated."""

    def __init__(self, oid: str, size: int) -> None:
        super().__init__(f"object {oid} is {size} bytes, larger than the {packread.MAX_OBJECT} "
                         "git oxide reads")
        self.oid, self.size = oid, size


def object_id(kind: int, data: bytes) -> bytes:
    import hashlib  # here: a blame reads without hashing (~2 ms to import)

    h = hashlib.sha1(b"%s %d\0" % (KIND_NAMES[kind], len(data)))
    h.update(data)
    return h.digest()


class Objects:
    """The object database under ``objects_dir`` (and its alternates)."""

    batched = False  # a batch of files' writes held back (store.batch.FileBatch) says True

    def __init__(self, objects_dir: Path) -> None:
        self.dir = str(objects_dir)
        self._packs: list[packread.Pack] | None = None
        self._alternates: list[Objects] | None = None

    # -- reading --------------------------------------------------------------------------
    def read(self, oid: bytes) -> tuple[int, bytes]:
        """(type, content) of the object; ObjectMissing if no store has it."""
        kind, data = self.read_unchecked(oid)
        if object_id(kind, data) != oid:
            raise OxideError(f"object {oid.hex()} is damaged (its content does not match its id)")
        return kind, data

    def read_unchecked(self, oid: bytes) -> tuple[int, bytes]:
        """``read`` without hashing the content again to check its name, as git reads (``blame``
        reads every version of a file)."""
        found = self._find(oid, depth=0)
        if found is None:
            raise ObjectMissing(f"object {oid.hex()} is missing from the object store")
        return found

    def read_kind(self, oid: bytes, kind: int) -> bytes:
        got, data = self.read(oid)
        if got != kind:
            raise OxideError(f"object {oid.hex()} is a {KIND_NAMES.get(got, b'?').decode()}, "
                             f"not a {KIND_NAMES[kind].decode()}")
        return data

    def entries(self, tree: bytes) -> dict[bytes, tuple[bytes, bytes]]:
        """A tree's entries by name: ``{name: (mode, raw id)}``."""
        return {name: (mode, oid) for mode, name, oid in parse_tree(self.read_kind(tree, TREE))}

    def blobs(self, oids: Iterable[bytes]) -> Iterator[bytes]:
        """Each blob's content, in order: what a log's reader asks for, message after message.

        The messages of a log were written together, so they mostly lie one after the other in
        one pack: the entry after the last one read is tried first, and kept when its content
        hashes to the id asked for (as ``read`` checks). Others are looked up as ``read_kind``
        looks them up."""
        from hashlib import sha1  # here: a blame reads packs without hashing (~2 ms to import)

        packs = self._open_packs()
        pack: packread.Pack | None = None
        nxt = hits = wrong = 0  # where the entry after the last one read starts: most often the next blob
        for oid in oids:
            data: bytes | None = None
            if pack is not None and wrong <= hits + _GIVE_UP:
                data, after = pack.entry(nxt)
                if data is not None and sha1(b"blob %d\0%b" % (len(data), data)).digest() == oid:
                    hits, nxt = hits + 1, after
                    yield data
                    continue
                wrong += 1  # a repacked pack: objects in another order, deltas
                data = None
            pack = None
            for p in packs:
                off = p.offset(oid)
                if off is not None:
                    data, after = p.entry(off)
                    if data is not None and sha1(b"blob %d\0%b" % (len(data), data)).digest() == oid:
                        pack, nxt = p, after
                        hits += 1
                    else:
                        data = None
                    break
            yield data if data is not None else self.read_kind(oid, BLOB)

    def _find(self, oid: bytes, depth: int) -> tuple[int, bytes] | None:
        hexid = oid.hex()
        if depth > _MAX_DEPTH:  # deltas on deltas by id, alternates of alternates: a cycle
            raise OxideError(f"object {hexid} cannot be read: its delta or alternates chain loops")
        try:
            with open(os.path.join(self.dir, hexid[:2], hexid[2:]), "rb") as f:
                return _read_loose(f, hexid)
        except FileNotFoundError:
            pass
        except (OSError, zlib.error) as e:
            raise OxideError(f"object {hexid} cannot be read: {e}") from None
        for fresh in (False, True):
            if fresh and not self._rescan_packs():
                break
            for pack in self._open_packs():
                try:
                    found = pack.read(oid, self._base_reader(depth))
                except packread.TooLarge as e:
                    raise ObjectTooLarge(hexid, e.size) from None
                except (ValueError, IndexError) as e:
                    raise OxideError(f"object {hexid} cannot be read: {e}") from None
                if found is not None:
                    return found
        if depth < 5:
            for alt in self._open_alternates():
                found = alt._find(oid, depth + 1)
                if found is not None:
                    return found
        return None

    def matching(self, prefix: bytes, nibbles: int, limit: int = 2, depth: int = 0) -> set[bytes]:
        """Up to ``limit`` (or a few more) ids of stored objects whose first ``nibbles`` hex digits
        are ``prefix``'s: loose, packed, in alternates (as libgit2 finds an abbreviated id)."""
        hexid = prefix.hex()[:nibbles]
        found: set[bytes] = set()
        try:
            names = os.listdir(os.path.join(self.dir, hexid[:2]))
        except OSError:
            names = []
        rest = hexid[2:]
        for n in names:
            if len(n) == 38 and n.startswith(rest):
                try:
                    found.add(bytes.fromhex(hexid[:2] + n))
                except ValueError:
                    continue
        for fresh in (False, True):
            if fresh and (found or not self._rescan_packs()):
                break
            for pack in self._open_packs():
                found.update(pack.ids_with_prefix(prefix, nibbles, limit))
        if len(found) < limit and depth < 5:
            for alt in self._open_alternates():
                found |= alt.matching(prefix, nibbles, limit, depth + 1)
        return found

    def _base_reader(self, depth: int) -> Callable[[bytes], tuple[int, bytes] | None]:
        # A REF_DELTA's base may be anywhere in the store (a thin pack completed by git).
        return lambda base: self._find(base, depth + 1)

    def _open_packs(self) -> list[packread.Pack]:
        if self._packs is None:
            self._packs = packread.open_packs(Path(self.dir, "pack"))
        return self._packs

    def _rescan_packs(self) -> bool:
        """Forget the packs seen so far if others appeared (one written since, a repack)."""
        try:
            now = {n for n in os.listdir(os.path.join(self.dir, "pack")) if n.endswith(".idx")}
        except OSError:
            return False
        seen = {os.path.basename(p.path) for p in self._packs or []}
        if now <= seen:
            return False
        for pack in self._packs or []:
            pack.close()
        self._packs = None
        return True

    def _open_alternates(self) -> list[Objects]:
        if self._alternates is None:
            self._alternates = []
            try:
                with open(os.path.join(self.dir, "info", "alternates"), encoding="utf-8") as f:
                    lines = [ln.strip() for ln in f]
            except OSError:
                lines = []
            for ln in lines:
                if ln and not ln.startswith("#"):
                    self._alternates.append(Objects(Path(os.path.join(self.dir, ln))))
        return self._alternates

    def close(self) -> None:
        for pack in self._packs or []:
            pack.close()
        self._packs = None
        for alt in self._alternates or []:
            alt.close()
        self._alternates = None

    # -- writing --------------------------------------------------------------------------
    def has(self, oid: bytes) -> bool:
        """Is the object stored? One found is freshened (its file's time set to now), as git and
        libgit2 do, so that a concurrent `git gc --prune` does not take it as long unreachable."""
        hexid = oid.hex()
        return _freshen(os.path.join(self.dir, hexid[:2], hexid[2:])) or self.has_packed(oid)

    def has_packed(self, oid: bytes) -> bool:
        """Is the object in a pack, or in an alternate store (that pack freshened)?"""
        for pack in self._open_packs():
            # a pack that `git gc` removed since it was opened no longer counts (its objects may be gone)
            if pack.offset(oid) is not None and _freshen(pack.path[:-4] + ".pack"):
                return True
        return any(alt.has(oid) for alt in self._open_alternates())

    def write(self, kind: int, data: bytes) -> bytes:
        """Store the object loose, unless the store has it already; its id."""
        oid = object_id(kind, data)
        if self.has(oid):
            return oid
        hexid = oid.hex()
        folder = os.path.join(self.dir, hexid[:2])
        path = os.path.join(folder, hexid[2:])
        body = zlib.compress(b"%s %d\0" % (KIND_NAMES[kind], len(data)) + data, 1)
        for attempt in range(5):  # a concurrent `git gc` may remove an empty fan-out folder
            try:
                os.makedirs(folder, exist_ok=True)
            except FileExistsError:  # it was there when mkdir tried, and gone (pruned) when checked
                continue
            tmp = os.path.join(folder, f"tmp_obj_oxide_{os.getpid()}_{attempt}")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            except FileNotFoundError:
                continue
            except FileExistsError:
                os.unlink(tmp)  # left by a dead process of ours with the same pid
                continue
            try:
                os.write(fd, body)
            finally:
                os.close(fd)
            try:
                os.replace(tmp, path)
                return oid
            except FileNotFoundError:
                continue
        raise OxideError(f"cannot write object {hexid} under {self.dir}")

    def write_commit(self, tree: bytes, parents: Iterable[bytes], message: str, who: bytes) -> bytes:
        """A commit of ``tree`` written by ``who`` (``signature``: author and committer)."""
        return self.write(COMMIT, commit_content(tree, parents, who, who, message))

    def rewrite_commit(self, commit: bytes, message: str, tree: bytes | None = None) -> bytes:
        """``commit`` again with another message (and tree): the same parents, author and
        committer, as written."""
        old = parse_commit(self.read_kind(commit, COMMIT))
        return self.write(COMMIT, commit_content(old.tree if tree is None else tree, old.parents,
                                                 old.author, old.committer, message))


def _freshen(path: str) -> bool:
    try:
        os.utime(path)
        return True
    except FileNotFoundError:
        return False
    except OSError:  # not ours to touch (a read-only alternate): it is there all the same
        return os.path.exists(path)


def _read_loose(f: BinaryIO, hexid: str) -> tuple[int, bytes]:
    """A loose object: its header inflated first, so one over ``packread.MAX_OBJECT`` is refused
    before the rest is inflated (1 GiB of zeros is a 1 MB file)."""
    z = zlib.decompressobj()
    raw = z.decompress(f.read(4096), 64)
    nul = raw.find(b"\0")
    head = raw[:nul].split(b" ")
    if nul < 0 or len(head) != 2 or head[0] not in _KIND_OF or not head[1].isdigit():
        raise OxideError(f"object {hexid} has no valid header")
    size = int(head[1])
    if size > packread.MAX_OBJECT:
        raise ObjectTooLarge(hexid, size)
    parts = [raw[nul + 1:]]
    got = len(parts[0])
    tail = z.unconsumed_tail + f.read()
    while got <= size and (tail or not z.eof):
        chunk = z.decompress(tail, size + 1 - got)
        tail = z.unconsumed_tail
        parts.append(chunk)
        got += len(chunk)
        if not chunk:
            break
    if got != size:
        raise OxideError(f"object {hexid} is truncated")
    return _KIND_OF[head[0]], b"".join(parts)


# -- trees and commits ------------------------------------------------------------------------
Entry = tuple[bytes, bytes, bytes]  # (mode, name, raw id)


def parse_tree(data: bytes) -> list[Entry]:
    out: list[Entry] = []
    pos, n = 0, len(data)
    while pos < n:
        sp = data.find(b" ", pos)
        nul = data.find(b"\0", sp)
        if sp < 0 or nul < 0 or nul + 21 > n:
            raise OxideError("a tree object is damaged")
        out.append((data[pos:sp], data[sp + 1:nul], data[nul + 1:nul + 21]))
        pos = nul + 21
    return out


def _sort_key(entry: Entry) -> bytes:
    # git orders a tree's entries by name, a subtree's name taken as if it ended with "/".
    return entry[1] + b"/" if entry[0] == TREE_MODE else entry[1]


def format_tree(entries: dict[bytes, tuple[bytes, bytes]]) -> bytes:
    """``{name: (mode, id)}`` as a tree object's content."""
    items = sorted(((mode, name, oid) for name, (mode, oid) in entries.items()), key=_sort_key)
    return b"".join(b"%s %s\0%s" % e for e in items)
