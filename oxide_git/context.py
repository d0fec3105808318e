"""What every operation runs against: the repository, oxide's index, the time and the config.

The CLI builds one Context per command from the process environment; operations never read the
environment or the clock themselves, so tests can pin both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .index import Index, open_index
from .repo import Repo


@dataclass
class Context:
    repo: Repo
    now_ms: int
    environ: Mapping[str, str] = field(default_factory=dict)
    _index: Index | None = None

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = open_index(self.repo.oxide_dir)
            if self._index.rebuilt:
                # The index is a cache: a missing one is rebuilt from git before it is used.
                from .reindex import reindex

                reindex(self)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def config(self, key: str, default: str | None = None) -> str | None:
        """A git config value of this repository (``oxide.maxFileSize``...), or ``default``."""
        try:
            value = self.repo.git.config[key]
        except (KeyError, ValueError):
            return default
        return str(value)

    def config_bool(self, key: str, default: bool) -> bool:
        v = self.config(key)
        if v is None:
            return default
        return v.strip().lower() in ("1", "true", "yes", "on")

    def config_size(self, key: str, default: int) -> int:
        v = self.config(key)
        if v is None:
            return default
        v = v.strip().lower()
        mult = {"k": 1024, "m": 1024**2, "g": 1024**3}.get(v[-1:], 1)
        try:
            return int(float(v.rstrip("kmg")) * mult)
        except ValueError:
            return default

    @property
    def home(self) -> Path:
        return Path(self.environ.get("HOME") or Path.home())
