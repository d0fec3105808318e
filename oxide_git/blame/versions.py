"""A file's versions as a blame reads them: a blob id, and the bytes behind it read only when a
diff or a replay first asks for them (most versions a walk passes are compared by id alone).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable


class Version:
    """One version of a file (its blob id, hex, and bytes, read when first asked for), or no file."""

    __slots__ = ("_load", "_obj", "_text", "oid")

    def __init__(self, oid: str | None, obj: bytes | None,
                 load: Callable[[], bytes] | None = None) -> None:
        self.oid, self._obj, self._load = oid, obj, load
        self._text: str | None = None

    @classmethod
    def of_bytes(cls, data: bytes) -> Version:
        return cls(blob_id(data), data)

    @property
    def obj(self) -> bytes | None:
        if self._obj is None and self._load is not None:
            self._obj, self._load = self._load(), None
        return self._obj

    def text(self) -> str | None:
        if self._text is None and self.obj is not None:
            self._text = self.obj.decode("utf-8", "surrogateescape")
        return self._text


def blob_id(data: bytes) -> str:
    """The id git gives ``data`` as a blob."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


NONE = Version(None, None)
