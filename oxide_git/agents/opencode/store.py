"""Where OpenCode keeps its data, and the reading of its JSON objects that the reader, the database
reader and the exporter share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oxide_git.agents import (
    AgentEnv,
    jsonline,
)

ROW_KEY = "oxide_row"  # db row times and JSON key order of a message or part (opencode_db._row_meta)


def data_home(env: AgentEnv) -> Path:
    """``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``)."""
    xdg = env.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else env.home / ".local" / "share") / "opencode"


def load_json(path: Path) -> Any:
    try:
        return loads_json(path.read_bytes())
    except OSError:
        return None


def loads_json(raw: Any) -> Any:
    if not isinstance(raw, bytes | str):
        return None
    try:
        return jsonline.loads(raw)
    except (ValueError, RecursionError):
        return None


def as_dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def as_str(x: Any) -> str | None:
    return x if isinstance(x, str) else None


def as_int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x == x and abs(x) < 2**62:
        return int(x)
    return None


name = "opencode"
