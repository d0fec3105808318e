"""`git oxide blame` of a 2,000-line file written by 200 agent turns, against `git blame` of the same
file over the same 200 versions as commits (issue 16: within 2x), as `git` subprocesses.

Two histories of the same file: each turn a prompt, one Edit tool call adding ten lines after a line
written earlier, and its result. In "committed" every turn is also a commit with the git hooks'
pre-commit checkpoint and note (400 checkpoints, 200 commits): `git oxide blame` runs `git blame`
and follows each commit's note. In "uncommitted" the turns are never committed (200 prompt
checkpoints): the lines come from the checkpoints alone, and the baseline is `git blame` of the
committed history (the same versions of the same file). Each is timed twice: as repeated (the
answer kept in the cache, ``oxide_git.blame_cache``) and cold (``OXIDE_BLAME_CACHE=0``: what the
first blame after a new checkpoint, commit or edit pays).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .common import Contender, cpu_seconds, env, error_row, git, interleaved, median, oxide_cmd, row

T0 = 1_767_225_600_000


def build(root: Path, turns: int, *, commit: bool, per_turn: int = 10) -> None:
    """A repository whose big.txt was written by ``turns`` turns of one Claude session."""
    import pygit2

    from oxide_git import snapshots, store
    from oxide_git import status as status_mod
    from oxide_git.context import Context
    from oxide_git.model import Message, Part, Session
    from oxide_git.notes import NOTES_REF
    from oxide_git.repo import find_repo
    from oxide_git.sessionlog import IDENTITY

    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    big = root / "big.txt"
    lines = ["start"]
    big.write_text("start\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "initial")
    (root / ".git" / "oxide").mkdir()
    ctx = Context(find_repo(root), T0, dict(os.environ))
    repo = ctx.repo
    sid = "0" * 12 + "d" * 20
    s = Session(sid, "claude", native_id="bench-blame", cwd=str(root), worktree="main", model="bench-model")
    rnd = random.Random(7)
    changed = status_mod.Status(changed={"big.txt"})
    for i in range(turns):
        t = T0 + i * 60_000
        ctx.now_ms = t
        [prompt] = store.append(ctx, s, [Message("user", (Part.text(f"turn {i}: add ten lines"),),
                                                 created_at=t)]).values()
        cp = snapshots.take(repo, kind="prompt", now_ms=t + 1, session_id=sid, message_id=prompt.id,
                            status=changed if i else status_mod.Status())
        store.record_checkpoint(ctx, cp)
        anchor = rnd.choice(lines)
        new = [f"turn {i} line {k}: " + "x" * rnd.randint(10, 60) for k in range(per_turn)]
        at = lines.index(anchor) + 1
        lines[at:at] = new
        old_s, new_s = anchor, "\n".join([anchor, *new])
        big.write_text("".join(x + "\n" for x in lines))
        store.append(ctx, s, [
            Message("assistant", (Part.tool_call(f"c{i}", "Edit", {"file_path": str(big), "old_string": old_s,
                                                                   "new_string": new_s}),),
                    created_at=t + 2, model="bench-model"),
            Message("user", (Part.tool_result(f"c{i}", "edited"),), created_at=t + 3)])
        if commit:
            pre = snapshots.take(repo, kind="pre-commit", now_ms=t + 4, session_id=sid, status=changed)
            store.record_checkpoint(ctx, pre)
            g = repo.git
            sig = pygit2.Signature("b", "b@b", (t + 5) // 1000, 0)
            oid = g.create_commit("refs/heads/main", sig, sig, f"turn {i}", pygit2.Oid(hex=pre.tree),
                                  [g.head.target])
            note = json.dumps({"oxide": 1, "sessions": [sid], "checkpoints": [pre.id]}) + "\n"
            who = pygit2.Signature(*IDENTITY, (t + 5) // 1000, 0)
            g.create_note(note, who, sig, str(oid), NOTES_REF, True)
    ctx.close()
    git(root, "reset", "-q")  # the index as HEAD (commits were made without it)


def _cpu_rows(path: Path, label: str, reps: int, baseline: Path | None = None) -> list[dict[str, Any]]:
    """CPU (user + system, its `git blame` included) of a cold blame against `git blame`'s
    (of ``baseline``, the committed history, when given): the figures the host's load does not
    inflate, interleaved, beside the wall-clock rows the target is about."""
    cold = {"OXIDE_BLAME_CACHE": "0"}
    ours, theirs = [], []
    for _ in range(reps):
        ours.append(cpu_seconds(oxide_cmd("blame", "big.txt"), path, extra_env=cold))
        theirs.append(cpu_seconds(["git", "blame", "--", "big.txt"], baseline or path))
    return [row(f"CPU of a cold blame, {label} (user + system, its git blame included)", median(ours),
                "info", baseline_s=median(theirs), samples=ours)]


def run(quick: bool) -> list[dict[str, Any]]:
    turns, reps = (50, 3) if quick else (200, 7)
    tmp = Path(tempfile.mkdtemp(prefix="oxide-bench-blame-"))
    rows: list[dict[str, Any]] = []
    try:
        committed, loose = tmp / "committed", tmp / "uncommitted"
        build(committed, turns, commit=True)
        build(loose, turns, commit=False)
        n = (committed / "big.txt").read_bytes().count(b"\n")
        label = f"{n:,}-line file, {turns} turns"
        blame_git = ["git", "blame", "--", "big.txt"]
        target = "≤ 2x git blame"

        def git_blame_committed() -> None:  # the baseline of the uncommitted history, same file
            subprocess.run(blame_git, cwd=committed, env=env(), stdout=subprocess.DEVNULL, check=True)

        cold = {"OXIDE_BLAME_CACHE": "0"}  # no kept answer: the first blame after a change
        try:
            t = interleaved([Contender("oxide", [oxide_cmd("blame", "big.txt")]),
                             Contender("cold", [oxide_cmd("blame", "big.txt")], cold),
                             Contender("git", [blame_git])], committed, reps)
            rows += [row(f"git blame ({label}, {turns} commits)", median(t["git"]), "baseline",
                         met=None, samples=t["git"]),
                     row(f"blame, committed ({label}: {turns} commits, {2 * turns} checkpoints)",
                         median(t["oxide"]), target, baseline_s=median(t["git"]), samples=t["oxide"],
                         met=median(t["oxide"]) <= 2 * median(t["git"])),
                     row("blame, committed, cold (no kept answer: the first after a change)",
                         median(t["cold"]), target, baseline_s=median(t["git"]), samples=t["cold"],
                         met=median(t["cold"]) <= 2 * median(t["git"]))]
            rows += _cpu_rows(committed, "committed", reps)
        except Exception as e:
            rows.append(error_row(f"blame, committed ({label})", target, e))
        try:
            t = interleaved([Contender("oxide", [oxide_cmd("blame", "big.txt")]),
                             Contender("cold", [oxide_cmd("blame", "big.txt")], cold),
                             Contender("git", [git_blame_committed])], loose, reps)
            rows.append(row(f"blame, uncommitted ({label}: {turns} checkpoints; baseline: git blame "
                            f"of the same {turns} versions as commits)", median(t["oxide"]), target,
                            baseline_s=median(t["git"]), samples=t["oxide"],
                            met=median(t["oxide"]) <= 2 * median(t["git"])))
            rows.append(row("blame, uncommitted, cold (no kept answer: the first after a change)",
                            median(t["cold"]), target, baseline_s=median(t["git"]), samples=t["cold"],
                            met=median(t["cold"]) <= 2 * median(t["git"])))
            rows += _cpu_rows(loose, "uncommitted", reps, baseline=committed)
        except Exception as e:
            rows.append(error_row(f"blame, uncommitted ({label})", target, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


if __name__ == "__main__":
    import sys

    for r in run("--quick" in sys.argv):
        print(r["name"], r["median_s"], r.get("baseline_s"), r.get("ratio"), r.get("error", ""))
