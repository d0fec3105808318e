"""Files that are secrets by their name, whatever they hold: they stay on this machine.

``SECRET_FILES`` plus ``git config oxide.secretFiles`` (glob patterns; several values, or one
comma- or space-separated; ``!pattern`` exempts a name, e.g. ``!.env.example``). A pattern without
``/`` matches a file's name in any folder, one with ``/`` the path from the repository's top.
Local checkpoints keep such files (a rewind here brings them back); a push of checkpoints withholds
them (``checkpoint_screen``) and the MCP server does not show their lines (``mcp_views``).
"""

from __future__ import annotations

import fnmatch
import re
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
        self._any, self._no = _compile(self.patterns), _compile(self.exempt)  # one match a path

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
        if not _matches(self._any, path) or _matches(self._no, path):
            return None
        return next(p for p in self.patterns if _matches(_compile([p]), path))


Compiled = tuple["re.Pattern[str] | None", "re.Pattern[str] | None"]


def _compile(patterns: list[str]) -> Compiled:
    """One regex for the patterns matched against a file's name, one for those against its path."""
    names = [fnmatch.translate(p) for p in patterns if "/" not in p]
    paths = [fnmatch.translate(p.lstrip("/")) for p in patterns if "/" in p]
    return (re.compile("|".join(names)) if names else None, re.compile("|".join(paths)) if paths else None)


def _matches(rx: Compiled, path: str) -> bool:
    names, paths = rx
    return bool((names is not None and names.match(path.rsplit("/", 1)[-1]))
                or (paths is not None and paths.match(path)))
