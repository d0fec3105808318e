"""Where Codex keeps its rollouts, and reading one whatever its form (see docs/agents/codex.md).

- ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl``: live rollouts; since
  0.137 one idle for 7 days becomes ``rollout-….jsonl.zst`` (zstd) and the plain file is removed.
- ``$CODEX_HOME/archived_sessions/rollout-….jsonl[.zst]``: ``codex archive ID`` moves it there (flat).
- ``$CODEX_HOME/state_5.sqlite`` (table ``threads``: ``id``, ``rollout_path``, ``cwd``,
  ``archived``...) is Codex's thread store: every thread it lists, with its file.
- ``$CODEX_HOME/session_index.jsonl``: ``{"id","thread_name","updated_at"}`` per named thread (no
  path: every id in it is a rollout the walk finds).

Discovery takes every rollout under both folders (a plain file wins over its compressed twin,
``sessions/`` over ``archived_sessions/``), then every file the thread store names that the walk did
not see, so no session Codex lists is missed. The store is opened read-only and never written.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from oxide_git.agents import AgentEnv

_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


def codex_home(env: AgentEnv) -> Path:
    return Path(env.environ.get("CODEX_HOME") or env.home / ".codex")


def configured_provider(env: AgentEnv) -> str:
    """The ``model_provider`` the user's Codex runs with (``config.toml``, its active ``profile``
    first; Codex's default is ``openai``): Codex resumes a thread only under the provider it names."""
    return named_provider(env) or "openai"


def named_provider(env: AgentEnv) -> str | None:
    """The ``model_provider`` the user's ``config.toml`` names (its active ``profile`` first), or
    None: no config yet (Codex never ran here), or one that leaves the provider to Codex's default."""
    try:
        data = tomllib.loads((codex_home(env) / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeError, tomllib.TOMLDecodeError):
        return None
    profiles = data.get("profiles")
    prof = profiles.get(data.get("profile")) if isinstance(profiles, dict) else None
    for table in (prof, data):
        v = table.get("model_provider") if isinstance(table, dict) else None
        if isinstance(v, str) and v:
            return v
    return None


def plain_name(path: Path) -> str:
    """The rollout's name without a ``.zst``: the same session compressed or not."""
    return path.name[:-4] if path.name.endswith(".zst") else path.name


def open_rollout(path: Path, buffering: int = 1 << 20) -> IO[bytes]:
    """The rollout's bytes, decompressed when it is a ``.zst``."""
    if not path.name.endswith(".zst"):
        return path.open("rb", buffering=buffering)
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+

        return zstd.open(path, "rb")
    except ImportError:
        import zstandard

        raw = path.open("rb")
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=buffering)


def skip(f: IO[bytes], offset: int, path: Path) -> None:
    """Position ``f`` at ``offset`` (of the decompressed bytes for a ``.zst``)."""
    if not path.name.endswith(".zst"):
        f.seek(offset)
        return
    left = offset
    while left > 0:
        chunk = f.read(min(left, 1 << 20))
        if not chunk:
            break
        left -= len(chunk)


def thread_store(root: Path) -> Iterator[tuple[str, str, str]]:
    """(id, rollout_path, cwd) of every thread in Codex's state databases (newest schema first)."""
    for db in sorted(root.glob("state_*.sqlite"), reverse=True):
        try:
            conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
        except sqlite3.Error:
            continue
        try:
            rows = conn.execute("SELECT id, rollout_path, cwd FROM threads").fetchall()
        except sqlite3.Error:
            rows = []
        finally:
            conn.close()
        for tid, path, cwd in rows:
            if isinstance(path, str) and path:
                yield str(tid), path, str(cwd or "")


def discover(env: AgentEnv) -> list[Path]:
    root = codex_home(env)
    found: dict[str, Path] = {}
    for sub in ("sessions", "archived_sessions"):
        base = root / sub
        if base.is_dir():
            for p in sorted(base.rglob("rollout-*.json*")):
                if p.name.endswith((".jsonl", ".json", ".jsonl.zst")) and p.is_file():
                    found.setdefault(plain_name(p), p)  # sessions/, plain files, come first
    for _tid, path, cwd in thread_store(root):
        p = Path(path)
        if plain_name(p) not in found and env.belongs(cwd):
            for cand in (p, p.with_name(p.name + ".zst"), p.with_name(plain_name(p))):
                if cand.is_file():
                    found[plain_name(p)] = cand
                    break
    return [p for p in found.values() if env.belongs(peek_cwd(p))]


def peek_cwd(path: Path) -> str | None:
    """The session's cwd from the first lines (meta, or <cwd> in an environment_context)."""
    try:
        with open_rollout(path, buffering=1 << 16) as f:
            if path.suffix == ".json":
                head = f.read(1 << 20).decode("utf-8", "replace")
                m = _CWD.search(head)
                return m.group(1).strip() if m else None
            for i, line in enumerate(f):
                if i > 50:
                    break
                cwd = _line_cwd(line)
                if cwd is not None:
                    return cwd
    except (OSError, ValueError, EOFError):
        return None
    except Exception as e:  # zstandard.ZstdError: a damaged compressed file
        if type(e).__name__ == "ZstdError":
            return None
        raise
    return None


def _line_cwd(line: bytes) -> str | None:
    try:
        obj: Any = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    p = obj.get("payload") if obj.get("type") == "session_meta" else obj
    if isinstance(p, dict) and isinstance(p.get("cwd"), str):
        return str(p["cwd"])
    m = _CWD.search(line.decode("utf-8", "replace").replace("\\n", "\n"))
    return m.group(1).strip() if m else None
