"""Write many new objects as one git packfile (and its .idx) instead of one loose file each.

An import stores one blob per message; a loose object is a file of its own (create, write,
rename), which made bulk imports cost ~0.5 ms per message. A pack of the batch is one file pair.
Undeltified entries, index version 2, written under temporary names and renamed into place pack
first, index last, as git does, so readers never see half a pack. Entries are deflated by ISA-L
(``isal``) when it is installed: a standard zlib stream, two to six times faster than zlib's level 1
for packs about 15% larger (imports are bounded by this); stdlib zlib otherwise.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from oxide_git.git.objects import object_id

try:
    from isal import isal_zlib

    def _deflate(data: bytes) -> bytes:
        # ISA-L's level 0 is 2.5x faster than its level 1 but starts every stream with ~120 bytes
        # of tables: worth it from a kilobyte (the pack grows by about 15%).
        return isal_zlib.compress(data, 0 if len(data) >= 1024 else 1)
except ImportError:  # pragma: no cover - a dependency of the package
    def _deflate(data: bytes) -> bytes:
        return zlib.compress(data, 1)



def _entry_header(kind: int, size: int) -> bytes:
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def write_pack(objects_dir: Path, objects: Sequence[tuple[int, bytes]],
               ids: Sequence[bytes] | None = None) -> list[bytes]:
    """Store ``(type, data)`` objects in a new pack under ``objects_dir/pack``; return their ids
    (``ids``: already known, in the same order)."""
    ids = [object_id(kind, data) for kind, data in objects] if ids is None else list(ids)
    unique: dict[bytes, tuple[int, bytes]] = {}
    for oid, obj in zip(ids, objects, strict=True):
        unique.setdefault(oid, obj)
    pack_dir = objects_dir / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    tmp_pack = pack_dir / f"tmp_pack_oxide_{os.getpid()}"
    offsets: dict[bytes, tuple[int, int]] = {}
    head = b"PACK" + struct.pack(">II", 2, len(unique))
    chunks = [head]
    pos = len(head)
    for oid, (kind, data) in unique.items():
        chunk = _entry_header(kind, len(data)) + _deflate(data)
        chunks.append(chunk)
        offsets[oid] = (pos, zlib.crc32(chunk))
        pos += len(chunk)
    body = b"".join(chunks)
    del chunks
    trailer = hashlib.sha1(body).digest()
    with open(tmp_pack, "wb") as f:
        f.write(body)
        f.write(trailer)
        f.flush()
        os.fsync(f.fileno())
    names = sorted(unique)
    fanout = [0] * 256
    for oid in names:
        fanout[oid[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for oid in names:
        off = offsets[oid][0]
        if off < 0x80000000:
            small.append(off)
        else:
            small.append(0x80000000 | len(large))
            large.append(off)
    idx = bytearray(b"\377tOc" + struct.pack(">I", 2))
    idx += struct.pack(">256I", *fanout)
    idx += b"".join(names)
    idx += b"".join(struct.pack(">I", offsets[o][1]) for o in names)
    idx += b"".join(struct.pack(">I", o) for o in small)
    idx += b"".join(struct.pack(">Q", o) for o in large)
    idx += trailer
    idx += hashlib.sha1(idx).digest()
    tmp_idx = pack_dir / f"tmp_idx_oxide_{os.getpid()}"
    with open(tmp_idx, "wb") as f:
        f.write(idx)
        f.flush()
        os.fsync(f.fileno())
    base = pack_dir / f"pack-{trailer.hex()}"
    os.replace(tmp_pack, f"{base}.pack")
    os.replace(tmp_idx, f"{base}.idx")
    return ids
