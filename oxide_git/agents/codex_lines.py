"""What one Codex rollout line holds, decoded: JSON (fast path), times, texts, error outputs."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from ..model import from_iso
from . import jsonline

_EXIT = re.compile(r"(?:^Exit code: |Process exited with code )(-?\d+)", re.M)



def loads(raw: bytes) -> Any:
    try:
        return jsonline.loads(raw)
    except (ValueError, RecursionError):
        return None


def iso_ms(ts: Any) -> int | None:
    if isinstance(ts, str) and len(ts) == 24 and ts[-1] == "Z":
        try:
            return int(datetime.fromisoformat(ts).timestamp() * 1000)
        except ValueError:
            return None
    return from_iso(ts)


def texts(content: Any, kinds: tuple[str, ...]) -> list[str]:
    if not isinstance(content, list):
        return []
    return [c["text"] for c in content if isinstance(c, dict) and c.get("type") in kinds
            and isinstance(c.get("text"), str)]


def is_error(output: Any) -> bool:
    if isinstance(output, dict):
        return output.get("success") is False
    if not isinstance(output, str):
        return False
    if output.startswith("{") and '"exit_code"' in output:
        try:
            meta = json.loads(output).get("metadata") or {}
            return bool(meta.get("exit_code"))
        except (ValueError, AttributeError):
            return False
    m = _EXIT.search(output[:400])
    return bool(m and int(m.group(1)) != 0)
