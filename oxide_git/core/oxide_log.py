"""The oxide log, ``<git-common-dir>/oxide/log``: a line for each failure nobody was there to see
(a hook's, a background job's, the watcher's). Stdlib only: hooks write it on their hot path."""

from __future__ import annotations

import os
import time
from pathlib import Path


def log(oxide_dir: Path, text: str) -> None:
    try:
        with open(oxide_dir / "log", "a") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {text.rstrip()}\n")
    except OSError:
        pass
