"""Read many blobs straight from the repository's pack files (the read side of packwriter).

An import stores a batch of message blobs as one undeltified pack, in sequence order. Reading a
50,000-message session through libgit2's object database cost ~9 µs a blob (a lookup across every
pack, its cache, a copy into a Python object); here each pack's index and data are mapped once and
an entry is found by a search of its index's fan-out range, then inflated in place, starting with
the pack that held the previous blob (consecutive messages are neighbours in one pack).

This reader only answers for whole blobs in packs with a version-2 index and returns None for
anything else: loose objects, deltas (after a user's `git gc` or `git repack`), objects in
alternates, packs added after it was opened. The caller then reads the object through the odb, so
a reader that knows nothing is merely slower. Each blob's id is checked against its content, as
libgit2 does, so a damaged pack or index cannot hand back the wrong message.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

_IDX_MAGIC = b"\377tOc\x00\x00\x00\x02"
_FANOUT = 8
_NAMES = _FANOUT + 256 * 4
_BLOB = 3
_GIVE_UP = 64  # misses beyond the hits by this many: the objects are elsewhere, stop searching


class _Pack:
    __slots__ = ("count", "data", "end", "fanout", "idx", "large", "offsets")

    def __init__(self, idx_path: Path) -> None:
        with open(idx_path, "rb") as fi, open(idx_path.with_suffix(".pack"), "rb") as fp:
            self.idx = mmap.mmap(fi.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                self.data = mmap.mmap(fp.fileno(), 0, access=mmap.ACCESS_READ)
            except BaseException:
                self.idx.close()
                raise
        try:
            if self.idx[:8] != _IDX_MAGIC or self.data[:4] != b"PACK":
                raise ValueError("not a version-2 pack index")
            self.end = len(self.data) - 20  # the pack's own checksum follows the last entry
            self.fanout = struct.unpack_from(">256I", self.idx, _FANOUT)
            self.count = self.fanout[255]
            self.offsets = _NAMES + self.count * 24  # after the names (20 bytes) and CRCs (4)
            self.large = self.offsets + self.count * 4
            if len(self.idx) < self.large + 40:
                raise ValueError("pack index is truncated")
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.idx.close()
        self.data.close()

    def offset(self, oid: bytes) -> int | None:
        b = oid[0]
        lo = _NAMES + 20 * (self.fanout[b - 1] if b else 0)
        hi = _NAMES + 20 * self.fanout[b]
        i = self.idx.find(oid, lo, hi)
        while i != -1 and (i - _NAMES) % 20:  # a match straddling two names
            i = self.idx.find(oid, i + 1, hi)
        if i == -1:
            return None
        (off,) = struct.unpack_from(">I", self.idx, self.offsets + (i - _NAMES) // 5)
        if off & 0x80000000:
            (off,) = struct.unpack_from(">Q", self.idx, self.large + 8 * (off & 0x7FFFFFFF))
        return int(off)

    def entry(self, off: int) -> tuple[bytes | None, int]:
        """The blob at ``off`` and where the next entry starts; None for anything else (a delta,
        a tree, a damaged entry)."""
        end = self.end
        if not 12 <= off < end:  # after the pack header, before its trailing checksum
            return None, -1
        head = self.data[off:off + 16]
        c = head[0]
        if (c >> 4) & 7 != _BLOB:
            return None, -1  # a delta (6, 7), a commit, tree or tag: the odb knows
        size = c & 15
        shift = 4
        pos = 1
        while c & 0x80:
            if pos >= len(head):
                return None, -1
            c = head[pos]
            pos += 1
            size |= (c & 0x7F) << shift
            shift += 7
        pos += off
        # Room for what deflate can add to data it cannot shrink: fixed-code literals take up to
        # 9 bits (ISA-L's fast levels use them), stored blocks 5 bytes a block. A stream longer
        # than this is only read through the odb.
        stop = pos + size + (size >> 2) + 64
        chunk = self.data[pos:stop if stop < end else end]
        z = zlib.decompressobj()
        try:
            out = z.decompress(chunk, size + 1)
        except zlib.error:
            return None, -1
        if not z.eof or len(out) != size:
            return None, -1
        return out, pos + len(chunk) - len(z.unused_data)


class PackReader:
    """Blobs by raw id from ``objects_dir/pack``; None means "read it through the odb"."""

    def __init__(self, objects_dir: Path) -> None:
        self._dir = objects_dir / "pack"
        self._packs: list[_Pack] | None = None
        self._hits = 0
        self._misses = 0
        self._wrong_guesses = 0

    def _open(self) -> list[_Pack]:
        def newest_first(p: Path) -> float:
            try:
                return -p.stat().st_mtime
            except OSError:
                return 0.0

        packs = []
        try:
            paths = sorted(self._dir.glob("pack-*.idx"), key=newest_first)
        except OSError:
            paths = []
        for p in paths:
            try:
                packs.append(_Pack(p))
            except (OSError, ValueError):
                continue  # removed meanwhile (gc), unreadable, or a format we do not read
        return packs

    def blobs(self, oids: Iterable[bytes]) -> Iterator[bytes | None]:
        """Each blob's content in order, None for those to read through the odb."""
        packs = self._packs
        if packs is None:
            packs = self._packs = self._open()
        sha1 = hashlib.sha1
        pack: _Pack | None = None
        nxt = 0  # where the entry after the last one read starts: most often the next blob
        for oid in oids:
            if pack is not None and self._wrong_guesses <= self._hits + _GIVE_UP:
                data, after = pack.entry(nxt)
                if data is not None and sha1(b"blob %d\0%b" % (len(data), data)).digest() == oid:
                    self._hits += 1
                    nxt = after
                    yield data
                    continue
                self._wrong_guesses += 1  # a repacked pack: objects in another order, deltas
            data = None
            if self._misses <= self._hits + _GIVE_UP:
                for n, p in enumerate(packs):
                    off = p.offset(oid)
                    if off is None:
                        continue
                    if n:
                        packs.insert(0, packs.pop(n))  # search the latest pack first
                    data, after = p.entry(off)
                    if data is not None and sha1(b"blob %d\0%b" % (len(data), data)).digest() == oid:
                        pack, nxt = p, after
                    else:
                        data = None
                    break
            if data is None:
                self._misses += 1
                pack = None
            else:
                self._hits += 1
            yield data

    def close(self) -> None:
        for pack in self._packs or []:
            pack.close()
        self._packs = None

    def __enter__(self) -> PackReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
