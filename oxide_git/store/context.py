"""What every operation runs against: the repository, oxide's index, the time and the config.

The CLI builds one Context per command from the process environment; operations never read the
environment or the clock themselves, so tests can pin both.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from oxide_git.git.repo import Repo
from oxide_git.store.index import Index, open_index


class Context:
    """Not a dataclass: every command makes one, and ``dataclasses`` costs ~5 ms to import."""

    def __init__(self, repo: Repo, now_ms: int, environ: Mapping[str, str] | None = None,
                 _index: Index | None = None, _config: dict[str, str] | None = None) -> None:
        self.repo, self.now_ms = repo, now_ms
        self.environ: Mapping[str, str] = environ if environ is not None else {}
        self._index, self._config = _index, _config

    def __repr__(self) -> str:
        return f"Context(repo={self.repo!r}, now_ms={self.now_ms!r})"

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = open_index(self.repo.oxide_dir)
            if self._index.rebuilt:
                # The index is a cache: a missing one is rebuilt from git before it is used.
                from oxide_git.store.reindex import reindex

                reindex(self)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def config(self, key: str, default: str | None = None) -> str | None:
        """A git config value of this repository (``oxide.maxFileSize``...), or ``default``."""
        git = self.repo.opened_git()
        if git is not None:  # opened anyway (a checkpoint, a resume): no git process
            try:
                return str(git.config[key])
            except (KeyError, ValueError):
                return default
        if self._config is None:
            # One `git config` (2-5 ms) instead of loading pygit2 (~50 ms) to read a value.
            self._config = _read_config(self.repo)
        return self._config.get(_config_key(key), default)

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


def for_process() -> Context:
    """The context of this process: the repository from cwd, the clock (``OXIDE_NOW`` pins it
    for tests), the environment."""
    import os
    import time

    from oxide_git.git.repo import find_repo

    now = os.environ.get("OXIDE_NOW")
    now_ms = int(now) if now and now.isdigit() else int(time.time() * 1000)
    return Context(find_repo(Path.cwd()), now_ms, dict(os.environ))


def _config_key(key: str) -> str:
    # Section and variable names are case-insensitive (git prints them lower-cased), subsections not.
    first, _, rest = key.partition(".")
    middle, _, last = rest.rpartition(".")
    return f"{first.lower()}.{middle + '.' if middle else ''}{last.lower()}"


def _read_config(repo: Repo) -> dict[str, str]:
    import subprocess

    from oxide_git.git.repo import clean_git_env

    try:
        out = subprocess.run(["git", "config", "--list", "-z"], cwd=repo.workdir, capture_output=True,
                             env=clean_git_env({"GIT_DIR": str(repo.git_dir)})).stdout
    except OSError:
        return {}
    values: dict[str, str] = {}
    for item in out.decode("utf-8", "replace").split("\0"):
        key, nl, value = item.partition("\n")
        if key:
            values[_config_key(key)] = value if nl else "true"  # a bare `key` means true to git
    return values
