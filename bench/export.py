"""Export benchmarks: a 10,000-message session to HTML (< 2 s) and `--range` over 1,000 commits with
notes (< 1 s), each with a git baseline reading the same data, as `git oxide` subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .common import Contender, error_row, git, interleaved, median, oxide_cmd, row

NOW_MS = 1_767_225_600_000


def _repo(where: Path) -> Path:
    root = where / "repo"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("print('hi')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    (root / ".git" / "oxide").mkdir()
    return root


def _session(root: Path, n: int, sid: str) -> None:
    """A session of ``n`` messages: prompts, answers with a tool call, tool results."""
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.git.repo import find_repo
    from oxide_git.store import writes as store
    from oxide_git.store.context import Context

    ctx = Context(find_repo(root), NOW_MS, dict(os.environ))
    s = Session(sid, "claude", title="benchmark session", created_at=NOW_MS)
    batch: dict[int, Message] = {}
    for q in range(n):
        t = NOW_MS + q * 1000
        if q % 3 == 0:
            text = f"Prompt {q}: please refactor module {q % 97} and run the tests."
            m = Message("user", (Part.text(text),), created_at=t)
        elif q % 3 == 1:
            call = Part.tool_call(f"c{q}", "Bash", {"command": f"pytest -q tests/t{q}.py"})
            m = Message("assistant", (Part.text(f"Answer {q}: " + "I changed the loop. " * 20), call),
                        created_at=t)
        else:
            m = Message("user", (Part.tool_result(f"c{q - 1}", "." * 60 + f"\n{q} passed in 0.5s\n" * 8),),
                        created_at=t)
        batch[q] = m
        if len(batch) == 500:
            store.save(ctx, s, batch, summary="bench")
            batch = {}
    if batch:
        store.save(ctx, s, batch, summary="bench")
    ctx.close()


def _commits_with_notes(root: Path, n: int, sid: str) -> tuple[str, str]:
    """``n`` commits on main, each with an oxide note naming ``sid`` (one fast-import stream)."""
    base = git(root, "rev-parse", "HEAD").decode().strip()
    lines = []
    for i in range(n):
        msg = f"change {i}".encode()
        body = f"line {i}\n".encode()
        lines.append(b"commit refs/heads/main\nmark :%d\ncommitter b <b@b> %d +0000\ndata %d\n%s\n"
                     % (i + 1, 1767225600 + i, len(msg), msg))
        if i == 0:
            lines.append(b"from %s\n" % base.encode())
        lines.append(b"M 100644 inline f.txt\ndata %d\n%s\n" % (len(body), body))
    for i in range(n):
        note = json.dumps({"oxide": 1, "sessions": [sid], "checkpoints": []}).encode()
        when = 1767225600 + i
        lines.append(b"commit refs/notes/oxide\ncommitter b <b@b> %d +0000\ndata 4\nnote\n" % when)
        lines.append(b"N inline :%d\ndata %d\n%s\n" % (i + 1, len(note), note))
    git(root, "fast-import", "--quiet", stdin=b"".join(lines))
    git(root, "reset", "-q", "--hard", "main")
    return base, git(root, "rev-parse", "HEAD").decode().strip()


def run(quick: bool) -> list[dict[str, Any]]:
    n_msgs, n_commits, reps = (2_000, 200, 3) if quick else (10_000, 1_000, 5)
    tmp = Path(tempfile.mkdtemp(prefix="oxide-bench-export-"))
    rows: list[dict[str, Any]] = []
    try:
        root = _repo(tmp)
        big, small = "0" * 12 + "b" * 20, "0" * 12 + "5" * 20
        _session(root, n_msgs, big)
        _session(root, 10, small)
        out = tmp / "out.html"
        label = f"{n_msgs:,} messages"
        try:
            t = interleaved([
                Contender("export", [oxide_cmd("export", big, "--format", "html", "-o", str(out))]),
                Contender("git", [["git", "cat-file", "--batch-all-objects", "--batch"]]),
            ], root, reps)
            rows += [row(f"git cat-file --batch-all-objects ({label})", median(t["git"]), "baseline",
                         met=None, samples=t["git"]),
                     row(f"export --format html ({label}, {out.stat().st_size / 1e6:.1f} MB)",
                         median(t["export"]), "< 2 s", baseline_s=median(t["git"]), samples=t["export"],
                         met=median(t["export"]) < 2)]
        except Exception as e:  # a crash is a failed row, not a failed run
            rows.append(error_row(f"export --format html ({label})", "< 2 s", e))
        try:
            base, head = _commits_with_notes(root, n_commits, small)
            rng = f"{base}..{head}"
            t = interleaved([
                Contender("export", [oxide_cmd("export", "--range", rng, "--format", "markdown")]),
                Contender("git", [["git", "log", "--notes=refs/notes/oxide", "--format=%H %N", rng]]),
            ], root, reps)
            rows += [row(f"git log --notes ({n_commits:,} commits)", median(t["git"]), "baseline",
                         met=None, samples=t["git"]),
                     row(f"export --range ({n_commits:,} commits with notes)", median(t["export"]), "< 1 s",
                         baseline_s=median(t["git"]), samples=t["export"], met=median(t["export"]) < 1)]
        except Exception as e:
            rows.append(error_row(f"export --range ({n_commits:,} commits)", "< 1 s", e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


if __name__ == "__main__":
    import sys

    for r in run("--quick" in sys.argv):
        print(r["name"], r["median_s"], r.get("baseline_s"), r.get("error", ""))
