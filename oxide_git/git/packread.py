"""A pack file and its version-2 index, read in place: the packed half of ``objects``.

Each pack's index and data are mapped once; an entry is found by a search of its index's fan-out
range, then inflated in place, deltas resolved (offset deltas within the pack, reference deltas
through the caller's reader: a thin pack completed by git). An entry's size is read from its header
first, so an object over ``MAX_OBJECT`` is refused before any of it is inflated. ``Pack.entry``
hands back a whole entry and where the next begins: a log's messages, written as one pack in
sequence order, are read one after the other that way (``Objects.blobs``).
"""

from __future__ import annotations

import mmap
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

_IDX_MAGIC = b"\377tOc\x00\x00\x00\x02"
_FANOUT = 8
_NAMES = _FANOUT + 256 * 4
_BLOB = 3
_OFS_DELTA, _REF_DELTA = 6, 7
# The largest object inflated here (codec.MAX_PAYLOAD, the largest payload decoded): the size in
# an entry's header is read first, and a bigger object is refused before any of it is inflated.
MAX_OBJECT = 256 * 1024 * 1024


class TooLarge(ValueError):
    """An entry over ``MAX_OBJECT``, refused from its header (``size``: what the header says)."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes, larger than the {MAX_OBJECT} git oxide reads")
        self.size = size
_MAX_DELTA_CHAIN = 100  # misses beyond the hits by this many: the objects are elsewhere, stop searching


class Pack:
    __slots__ = ("count", "data", "end", "fanout", "idx", "large", "offsets", "path")

    def __init__(self, idx_path: Path) -> None:
        self.path = str(idx_path)
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

    def ids_with_prefix(self, prefix: bytes, nibbles: int, limit: int = 2) -> list[bytes]:
        """Up to ``limit`` ids of this pack whose first ``nibbles`` hex digits are ``prefix``'s."""
        b = prefix[0]
        lo, hi = (self.fanout[b - 1] if b else 0), self.fanout[b]
        whole = nibbles // 2
        key = prefix[:whole] + (bytes([prefix[whole] & 0xF0]) if nibbles % 2 else b"")
        top = hi
        while lo < hi:  # the first name not below the prefix
            mid = (lo + hi) // 2
            if self.idx[_NAMES + 20 * mid:_NAMES + 20 * mid + 20] < key:
                lo = mid + 1
            else:
                hi = mid
        out = []
        for i in range(lo, top):
            name = bytes(self.idx[_NAMES + 20 * i:_NAMES + 20 * i + 20])
            if name[:whole] != prefix[:whole] or (nibbles % 2 and name[whole] >> 4 != prefix[whole] >> 4):
                break
            out.append(name)
            if len(out) >= limit:
                break
        return out

    def entry(self, off: int) -> tuple[bytes | None, int]:
        """The blob at ``off`` and where the next entry starts; None for anything else (a delta,
        a tree, a damaged entry)."""
        head = self._header(off)
        if head is None or head[0] != _BLOB or head[1] > MAX_OBJECT:
            return None, -1  # a delta (6, 7), a commit, tree or tag, one too big: the odb says
        found = self._inflate(head[2], head[1])
        return (None, -1) if found is None else found

    def _header(self, off: int) -> tuple[int, int, int] | None:
        """(type, size, where the data starts) of the entry at ``off``."""
        if not 12 <= off < self.end:  # after the pack header, before its trailing checksum
            return None
        head = self.data[off:off + 16]
        c = head[0]
        kind, size, shift, pos = (c >> 4) & 7, c & 15, 4, 1
        while c & 0x80:
            if pos >= len(head):
                return None
            c = head[pos]
            pos += 1
            size |= (c & 0x7F) << shift
            shift += 7
        return kind, size, off + pos

    def _inflate(self, pos: int, size: int) -> tuple[bytes, int] | None:
        """``size`` bytes inflated from ``pos``, and where their stream ends."""
        # Room for what deflate can add to data it cannot shrink: fixed-code literals take up to
        # 9 bits (ISA-L's fast levels use them), stored blocks 5 bytes a block. A longer stream is
        # not one a deflater wrote: the entry is damaged.
        end = self.end
        stop = pos + size + (size >> 2) + 64
        chunk = self.data[pos:stop if stop < end else end]
        z = zlib.decompressobj()
        try:
            out = z.decompress(chunk, size + 1)
        except zlib.error:
            return None
        if not z.eof or len(out) != size:
            return None
        return out, pos + len(chunk) - len(z.unused_data)

    def read(self, oid: bytes, find_base: Callable[[bytes], tuple[int, bytes] | None]
             ) -> tuple[int, bytes] | None:
        """(type, content) of any object in this pack, deltas resolved (``find_base`` reads the
        base of a delta that names it by id); None when the pack does not hold it."""
        off = self.offset(oid)
        return None if off is None else self._object(off, find_base, 0)

    def _object(self, off: int, find_base: Callable[[bytes], tuple[int, bytes] | None],
                depth: int) -> tuple[int, bytes]:
        head = self._header(off)
        if head is None or depth > _MAX_DELTA_CHAIN:
            raise ValueError(f"damaged pack entry at {off}")
        kind, size, pos = head
        if size > MAX_OBJECT:
            raise TooLarge(size)
        if kind == _OFS_DELTA:
            c = self.data[pos]
            pos += 1
            back = c & 0x7F
            while c & 0x80:
                c = self.data[pos]
                pos += 1
                back = ((back + 1) << 7) | (c & 0x7F)
            base: tuple[int, bytes] | None = self._object(off - back, find_base, depth + 1)
        elif kind == _REF_DELTA:
            base = find_base(bytes(self.data[pos:pos + 20]))
            pos += 20
        else:
            base = None
        found = self._inflate(pos, size)
        if found is None or (kind in (_OFS_DELTA, _REF_DELTA) and base is None):
            raise ValueError(f"damaged pack entry at {off}")
        if base is None:
            return kind, found[0]
        return base[0], apply_delta(base[1], found[0])


def _size(delta: bytes, pos: int) -> tuple[int, int]:
    size = shift = 0
    while True:
        c = delta[pos]
        pos += 1
        size |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return size, pos


def apply_delta(base: bytes, delta: bytes) -> bytes:
    """Git's delta format: the target's bytes as copies from ``base`` and literal inserts."""
    try:
        src_size, pos = _size(delta, 0)
        dst_size, pos = _size(delta, pos)
        if src_size != len(base):
            raise ValueError("delta base has the wrong size")
        out = bytearray()
        n = len(delta)
        while pos < n:
            c = delta[pos]
            pos += 1
            if c & 0x80:
                start = size = 0
                for i in range(4):
                    if c & (1 << i):
                        start |= delta[pos] << (8 * i)
                        pos += 1
                for i in range(3):
                    if c & (0x10 << i):
                        size |= delta[pos] << (8 * i)
                        pos += 1
                size = size or 0x10000
                if start + size > len(base):
                    raise ValueError("delta copies past its base")
                out += base[start:start + size]
            elif c:
                out += delta[pos:pos + c]
                pos += c
            else:
                raise ValueError("delta has a reserved opcode")
    except IndexError:
        raise ValueError("delta is truncated") from None
    if len(out) != dst_size:
        raise ValueError("delta result has the wrong size")
    return bytes(out)


def open_packs(pack_dir: Path) -> list[Pack]:
    """Every pack under ``pack_dir`` this module reads, the newest first (where recently written
    objects are)."""
    def newest_first(p: Path) -> float:
        try:
            return -p.stat().st_mtime
        except OSError:
            return 0.0

    packs = []
    try:
        paths = sorted(pack_dir.glob("pack-*.idx"), key=newest_first)
    except OSError:
        paths = []
    for p in paths:
        try:
            packs.append(Pack(p))
        except (OSError, ValueError):
            continue  # removed meanwhile (gc), unreadable, or a format we do not read
    return packs
