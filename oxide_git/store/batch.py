"""Many small files imported as one batch: their objects stored as one pack, their refs and index
rows after it.

A user's first import is mostly small sessions (1,500 Claude sessions of 100 KB each make some
51,000 objects), and an object written loose is a file created, written and renamed: 37% of such
an import went there. In a batch the writes are held in memory (``FileBatch`` is the object store as
the write path sees it: what it wrote is readable, the refs it moved read as moved) until
``BATCH_BYTES`` of objects are held or the files run out; then, in the order a single write keeps:

1. the objects, as one pack (a few, loose);
2. each ref, compare-and-swapped from what it was when the batch first wrote it;
3. the index rows of each write whose ref moved, then the cursors of the files read.

A crash before 2 leaves an unreferenced pack (what `git gc` prunes) and no cursor: the next import
reads those files again. A ref another writer moved meanwhile (`watch` importing the same file) is
not forced: the files whose writes it held are imported again, alone, on the new tip
(``redo``). A new session whose history may be copied from one the batch holds (an agent's
resume-by-copy: ``links_into``) has the batch stored first, so that the index can tell.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oxide_git.core.errors import OxideError
from oxide_git.git import packwriter, refs
from oxide_git.git.objects import KIND_NAMES, Objects, object_id

if TYPE_CHECKING:
    from oxide_git.store.index_queue import IndexQueue

BATCH_BYTES = 16 * 1024 * 1024  # of objects held in memory before they are stored
BATCH_MIN_FILES = 4  # an import of fewer files writes as it goes
PACK_MIN = 64  # objects from which a batch is a pack (fewer are written loose)
SWAP_ALL_FROM = 32  # refs from which a batch moves them in one `git update-ref` (refs.swap_all)

Put = Callable[[Any], None]  # an index write, given the Index


@contextmanager
def held(ctx: Any, wanted: bool) -> Iterator[FileBatch | None]:
    """A batch that every write of ``ctx`` goes through (its repository's ``objects``) until the
    block ends, and is then stored; None when not ``wanted``. An error in the block stores
    nothing of it: those files' cursors were not saved either, so the next import reads them."""
    if not wanted:
        yield None
        return
    repo = ctx.repo
    own = repo.objects
    batch = FileBatch(Path(own.dir), repo.common_dir, ctx.index.path)
    batch.began_empty = not ctx.index.query("SELECT 1 FROM sessions LIMIT 1")
    repo.__dict__["objects"] = batch  # the cached property, for the block's length
    try:
        yield batch
        batch.settle()
    finally:
        repo.__dict__["objects"] = own
        if batch.queue is not None:
            batch.queue.close(raise_error=False)
        batch.close()


class FileBatch(Objects):
    """The object store with the writes of a batch of files held back (see the module's text)."""

    batched = True  # the session-log writer (logwrite) asks this rather than importing this class

    def __init__(self, objects_dir: Path, common_dir: Path, index_path: Path) -> None:
        super().__init__(objects_dir)
        self.common = common_dir
        self.index_path = index_path
        self.queue: IndexQueue | None = None  # the index writes, on a thread of their own, in order
        self.held: dict[bytes, tuple[int, bytes]] = {}
        self.held_bytes = 0
        self._loose: dict[str, set[str]] = {}  # the loose objects' names, by folder, as first listed
        self._refs: dict[str, tuple[bytes | None, bytes, Any, list[Put]]] = {}
        self._last_ref: str | None = None
        # refs read from disk since the last flush: a write reads its session's ref, then moves it
        # (a stale value only makes ``flush``'s compare-and-swap fail: the file is read again)
        self._read: dict[str, bytes | None] = {}
        self._ref_names: dict[str, set[str]] = {}  # the loose refs' names, by folder, as listed
        self._packed: dict[str, bytes] | None = None  # packed-refs, as read
        self._files: list[tuple[Any, Put]] = []
        # The native ids of the sessions (any agent) and messages (by agent) written so far: the
        # index may not have them yet (held, or queued).
        self._session_ids: set[str] = set()
        self._message_ids: set[tuple[str, str]] = set()
        # The index held no session when the batch began (a first import): a session can then only
        # copy one of the batch's, and the index need not be asked.
        self.began_empty = False
        self.file: Any = None  # the file being read, as the caller names it (for ``redo``)
        self.redo: list[Any] = []  # files whose writes did not land: a ref moved under them

    # -- the object store, with what is held --------------------------------------------
    def read(self, oid: bytes) -> tuple[int, bytes]:
        got = self.held.get(oid)
        return got if got is not None else super().read(oid)

    def read_kind(self, oid: bytes, kind: int) -> bytes:
        got = self.held.get(oid)
        if got is None:
            return super().read_kind(oid, kind)
        if got[0] != kind:
            raise OxideError(f"object {oid.hex()} is a {KIND_NAMES[got[0]].decode()}, "
                             f"not a {KIND_NAMES[kind].decode()}")
        return got[1]

    def has(self, oid: bytes) -> bool:
        """Held, or stored. A loose object is looked for in its folder's listing, read once per
        batch (a failed lookup per new object: about 5% of a bulk import): one written there since
        is taken as missing and packed again, which costs space, never an object."""
        if oid in self.held:
            return True
        hexid = oid.hex()
        names = self._loose.get(hexid[:2])
        if names is None:
            try:
                names = set(os.listdir(os.path.join(self.dir, hexid[:2])))
            except OSError:
                names = set()
            self._loose[hexid[:2]] = names
        return super().has(oid) if hexid[2:] in names else self.has_packed(oid)

    def write(self, kind: int, data: bytes) -> bytes:
        return self.write_known(kind, data, object_id(kind, data))

    def write_known(self, kind: int, data: bytes, oid: bytes) -> bytes:
        """``write``, its id worked out already (by an import's parser process)."""
        if not self.has(oid):
            self.held[oid] = (kind, data)
            self.held_bytes += len(data)
        return oid

    # -- refs and index rows, held --------------------------------------------------------
    def ref(self, name: str) -> bytes | None:
        held = self._refs.get(name)
        return held[1] if held is not None else self._on_disk(name)

    def _on_disk(self, name: str) -> bytes | None:
        """A ref as stored, read once per batch: looked for in its folder's listing and in
        ``packed-refs``, each read once per batch (a first import's 1,500 new sessions were 3,000
        failed opens), and read from its file when listed."""
        if name not in self._read:
            folder, _, leaf = name.rpartition("/")
            names = self._ref_names.get(folder)
            if names is None:
                try:
                    names = set(os.listdir(self.common / folder))
                except OSError:
                    names = set()
                self._ref_names[folder] = names
            if leaf in names:
                self._read[name] = refs.read_raw(self.common, name)
            else:
                if self._packed is None:
                    self._packed = refs.packed_refs(self.common)
                self._read[name] = self._packed.get(name)
        return self._read[name]

    def move_ref(self, name: str, expected: bytes | None, new: bytes) -> None:
        """``refs.swap`` as the batch sees it: RefMoved when the ref is not at ``expected``."""
        held = self._refs.get(name)
        if (held[1] if held is not None else self._on_disk(name)) != expected:
            raise refs.RefMoved(name)
        self._refs[name] = (held[0] if held is not None else expected, new, self.file,
                            held[3] if held is not None else [])
        self._last_ref = name

    def later(self, put: Put) -> None:
        """The index rows of the write that just moved a ref: written once that ref has moved."""
        if self._last_ref is None:
            raise OxideError("index rows held by an import batch before any write")
        self._refs[self._last_ref][3].append(put)

    def after_all(self, put: Put) -> None:
        """A file's cursor: written once every write of the batch landed (not if its own did not)."""
        self._files.append((self.file, put))

    def remember(self, agent: str, native_id: str | None, message_ids: list[str | None]) -> None:
        if native_id:
            self._session_ids.add(native_id)
        self._message_ids.update((agent, n) for n in message_ids if n)

    def links_into(self, agent: str, hint: Any, first: str | None) -> bool:
        """May a new session be a copy of one written in the batch (so that the index must have
        the batch before it is asked)?"""
        return ((bool(hint) and str(hint) in self._session_ids)
                or (bool(first) and (agent, first) in self._message_ids))

    # -- storing it -------------------------------------------------------------------------
    def flush(self, wait: bool = False) -> None:
        """Store what is held: objects, then refs; then, on the index thread, the rows of the
        writes whose ref moved and the cursors of the files read (``wait``: written when it returns)."""
        held, self.held, self.held_bytes = self.held, {}, 0
        if len(held) >= PACK_MIN:
            packwriter.write_pack(Path(self.dir), list(held.values()), ids=list(held))
        else:
            for oid, (kind, data) in held.items():
                super().write(kind, data)
                hexid = oid.hex()
                if hexid[:2] in self._loose:  # not listed yet: the listing will have it
                    self._loose[hexid[:2]].add(hexid[2:])
        moved, self._refs, self._last_ref, self._read = self._refs, {}, None, {}
        self._ref_names, self._packed = {}, None
        files, self._files = self._files, []
        puts: list[Put] = []
        together = len(moved) >= SWAP_ALL_FROM and refs.swap_all(
            self.common, [(name, expected, new) for name, (expected, new, _f, _w) in moved.items()])
        for name, (expected, new, file, writes) in moved.items():
            if not together:
                try:
                    refs.swap(self.common, name, expected, new)
                except refs.RefMoved:
                    if file not in self.redo:
                        self.redo.append(file)
                    continue
            puts += writes
        puts += [put for file, put in files if file not in self.redo]
        if puts:
            def job(index: Any) -> None:
                with index.write():  # the rows of every file of the batch in one commit
                    for put in puts:
                        put(index)

            if self.queue is None:
                from oxide_git.store.index_queue import IndexQueue

                self.queue = IndexQueue(self.index_path)
            self.queue.submit(job)
        if wait and self.queue is not None:
            self.queue.drain()

    def settle(self) -> None:
        """Store what is held and wait for its index writes, with no thread left running (a big
        file next is parsed in a forked child, which a thread forbids)."""
        self.flush()
        queue, self.queue = self.queue, None
        if queue is not None:
            queue.close()
