"""`make bench-large`, the import rows (issue 17).

- The first import of a user's whole history: 1,500 Claude Code sessions, about 147 MB, in the
  agent's own store (``$CLAUDE_CONFIG_DIR/projects/<this repository>/``), found by plain
  ``git oxide import`` as a user runs it, into a fresh repository each time. Baseline: ``git
  hash-object -w`` of the same files (git storing the same bytes).
- A 2 GB Codex rollout, plain and ``.jsonl.zst``: throughput and peak memory.

Generated once into ``.bench-cache/`` (``importing``'s generators: the same record shapes as
``make bench``'s 200 MB rows).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import common
from .common import median, row
from .importing import AGENTS, MB, _claude_lines, _fresh_repo, transcript

Log = Callable[[str], None]
SESSIONS = 1_500
HISTORY_BYTES = 147 * MB


def _log(msg: str) -> None:
    print(f"  [large-import] {msg}", flush=True)


def _slug(path: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(path))


def history(repo_path: Path, log: Log = _log) -> Path:
    """A Claude config folder holding ``SESSIONS`` sessions of this repository (cached)."""
    root = common.CACHE / f"claude-history-{SESSIONS}"
    ready = root / "bench-ready"
    project = root / "projects" / _slug(repo_path)
    if ready.exists() and project.is_dir():
        return root
    log(f"generating {SESSIONS:,} Claude sessions, {HISTORY_BYTES // MB} MB (one time)…")
    common.fresh_dir(root)
    project.mkdir(parents=True)
    per = HISTORY_BYTES // SESSIONS
    for i in range(SESSIONS):
        sid = f"7f3e2a10-{i:04x}-4d7e-8f90-a1b2c3d4e5f6"
        size = int(per * (0.2 + 1.6 * ((i * 7919) % 1000) / 1000))  # 20% to 180% of the mean
        written = 0
        with open(project / f"{sid}.jsonl", "w", encoding="utf-8") as f:
            for obj in _claude_lines(str(repo_path), sid, i, 1_771_850_000_000 + i * 3_600_000):
                line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
                f.write(line)
                written += len(line)
                if written >= size:
                    break
    ready.write_text("ok\n")
    return root


def bench_history(reps: int, log: Log = _log) -> list[dict[str, Any]]:
    repo = _fresh_repo("claude")
    root = history(repo, log)
    files = sorted((root / "projects").glob("*/*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / MB
    home = common.fresh_dir(common.CACHE / "run" / "empty-home")
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "xdg"), "XDG_CONFIG_HOME": str(home / "xdg-config"),
           "CODEX_HOME": str(home / "codex"), "CLAUDE_CONFIG_DIR": str(root)}
    imp, hashed, peaks, counts = [], [], [], []
    log(f"first import of {len(files):,} Claude sessions ({mb:.0f} MB), {reps} reps…")
    listing = common.CACHE / "run" / "claude-history-files.txt"
    listing.write_text("".join(f"{f}\n" for f in files))
    for _ in range(reps):
        repo = _fresh_repo("claude")
        t0 = time.perf_counter()
        common.run(["git", "hash-object", "-w", "--stdin-paths"], repo, stdin=listing.read_bytes())
        hashed.append(time.perf_counter() - t0)
        repo = _fresh_repo("claude")
        wall, peak = common.peak_rss_mb(common.oxide_cmd("import", "-q"), repo, extra_env=env)
        imp.append(wall)
        peaks.append(peak)
        listed = json.loads(common.run(common.oxide_cmd("list", "--json", "--all"), repo))
        counts.append(len(listed))
    shutil.rmtree(repo, ignore_errors=True)
    if min(counts) != len(files):
        raise RuntimeError(f"the import stored {min(counts)} sessions of {len(files)}")
    t = median(imp)
    return [
        row(f"git hash-object -w of the same {len(files):,} files ({mb:.0f} MB)", median(hashed), "baseline",
            samples=hashed),
        row(f"first import, {len(files):,} Claude sessions ({mb:.0f} MB, the agent's store)", t, "≤ 3 s",
            baseline_s=median(hashed), met=t <= 3.0, samples=imp,
            note=f"{mb / t:.0f} MB/s; peak memory {max(peaks):.0f} MB"),
    ]


def _zst(src: Path, log: Log) -> Path:
    out = src.with_name(src.name + ".zst")
    if out.exists():
        return out
    import zstandard

    log(f"compressing {src.name} to .zst (one time)…")
    tmp = out.with_suffix(".tmp")
    with open(src, "rb") as fi, open(tmp, "wb") as fo:
        zstandard.ZstdCompressor(level=3).copy_stream(fi, fo)
    tmp.replace(out)
    return out


def bench_rollout(size_mb: int, log: Log = _log) -> list[dict[str, Any]]:
    src = transcript("codex", size_mb * MB, log)
    mb = src.stat().st_size / MB
    rows = []
    files = common.CACHE / "run" / "import-files"
    for label, path in (("plain", src), (".jsonl.zst", _zst(src, log))):
        common.fresh_dir(files)
        name = AGENTS["codex"]["name"].format(sid=AGENTS["codex"]["sid"])
        f = files / (name + (".zst" if label != "plain" else ""))
        os.link(path, f)
        repo = _fresh_repo("codex")
        log(f"import of a {mb:,.0f} MB Codex rollout ({label})…")
        try:
            cmd = common.oxide_cmd("import", "--agent", "codex", str(f), "-q")
            wall, peak = common.peak_rss_mb(cmd, repo, timeout=1800)
        except common.TimedOut as e:
            rows.append(row(f"import, {mb:,.0f} MB Codex rollout ({label})", None, "≥ 50 MB/s", met=False,
                            value=f"< {mb / e.seconds:.1f} MB/s", note=f"stopped after {e.seconds:.0f} s"))
            continue
        rate = mb / wall
        rows.append(row(f"import, {mb:,.0f} MB Codex rollout ({label})", wall, "≥ 50 MB/s", met=rate >= 50,
                        value=f"{rate:.1f} MB/s", note=f"{wall:.1f} s"))
        rows.append(row(f"import peak memory, {mb:,.0f} MB Codex rollout ({label})", None, "< 300 MB",
                        value=f"{peak:.0f} MB", met=peak < 300))
    shutil.rmtree(files, ignore_errors=True)
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    size = int(os.environ.get("BENCH_LARGE_ROLLOUT_MB", "64" if quick else "2048"))
    rows: list[dict[str, Any]] = []
    for name, fn in (("history", lambda: bench_history(2 if quick else 3)),
                     ("rollout", lambda: bench_rollout(size))):
        try:
            rows += fn()
        except Exception as e:  # a report: one broken figure must not hide the others
            _log(f"{name} failed: {e}")
            rows.append(common.error_row(f"import {name}", "(failed)", e))
    return rows
