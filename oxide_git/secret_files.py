"""Files that are secrets by their name, whatever they hold: they stay on this machine.

``SECRET_FILES`` plus ``git config oxide.secretFiles`` (glob patterns; several values, or one
comma- or space-separated; ``!pattern`` exempts a name, e.g. ``!.env.example``). A pattern without
``/`` matches a file's name in any folder, one with ``/`` the path from the repository's top.
Local checkpoints keep such files (a rewind here brings them back); a push of checkpoints withholds
them (``checkpoint_screen``) and the MCP server does not show their lines (``mcp_views``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any

SECRET_FILES = (".env*", "*.pem", "*.key", "id_rsa*", ".npmrc", ".pypirc", "credentials*.json")
CONFIG = "oxide.secretFiles"
WITHHELD = "[WITHHELD:secret_file]"  # what the MCP server shows instead of such a file's line


class SecretNames:
    """The patterns of one repository (the module's docstring says how they match)."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        words = [w.strip() for v in extra for w in v.replace(",", " ").split() if w.strip()]
        self.exempt = [w[1:] for w in words if w.startswith("!")]
        self.patterns = [p for p in (*SECRET_FILES, *(w for w in words if not w.startswith("!")))
                         if p not in self.exempt]

    @classmethod
    def of(cls, ctx: Any) -> SecretNames:
        """The repository's list (``ctx``: a ``Context``)."""
        import pygit2

        try:
            extra = list(ctx.repo.git.config.get_multivar(CONFIG))
        except (KeyError, ValueError, pygit2.GitError):
            extra = []
        return cls(extra)

    def match(self, path: str) -> str | None:
        """The pattern that makes ``path`` a secret file (None: it is not one)."""
        if any(_glob(path, p) for p in self.exempt):
            return None
        return next((p for p in self.patterns if _glob(path, p)), None)


def _glob(path: str, pattern: str) -> bool:
    target = path if "/" in pattern else path.rsplit("/", 1)[-1]
    return fnmatch.fnmatchcase(target, pattern.lstrip("/"))
