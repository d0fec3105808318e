"""The one exception base of git oxide: an error the user can act on, shown without a traceback."""

from __future__ import annotations


class OxideError(Exception):
    """An error the user can act on: a one-line message and an optional hint."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class NotInGitRepository(OxideError):
    pass


class BareRepository(OxideError):
    pass


class NotInitialised(OxideError):
    pass


class NotFound(OxideError):
    """An id that matches nothing (session, checkpoint, message)."""


class Ambiguous(OxideError):
    """An id prefix that matches more than one object."""


class LockTimeout(OxideError):
    """A ref or file lock held by another process beyond the wait budget."""


class CorruptIndex(OxideError):
    pass


class UnsupportedPayload(OxideError):
    """A msgpack payload of a schema version this build does not know, or not a payload at all."""


class UnsupportedFormat(OxideError):
    """A file that is not of the agent format it was given as."""


class DiskFull(OxideError):
    """No space left on the device (or quota) a command writes to, in ``folder``."""

    def __init__(self, folder: object, *, hint: str = "free some space and run the command again") -> None:
        super().__init__(f"no space left on device writing {folder}", hint=hint)

    @staticmethod
    def on(folder: object) -> bool:
        """Whether the device ``folder`` is on has no byte left (SQLite says "disk I/O error")."""
        import os

        try:
            return os.statvfs(str(folder)).f_bavail == 0
        except OSError:
            return False


class Refused(OxideError):
    """A destructive operation refused for safety; the hint names the override."""


class UntrustedTree(OxideError):
    """A tree that would write outside the worktree (path traversal, .git, symlink escape)."""
