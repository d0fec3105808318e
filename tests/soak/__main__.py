"""`make soak`: one repository, everything at once, for ``SOAK_MINUTES`` (default 30).

    SOAK_MINUTES=2 python -m tests.soak      # the short form CI can afford
    SOAK_SEED=7 SOAK_KEEP=1 ...              # another seed; keep the folders to look at

Four agents write transcripts while the `watch` daemon imports them, commits are made with the
hooks installed, a second worktree checkpoints, rewinds and undoes, gc runs every minute, sessions
are pushed through a bare remote and pulled into a clone, and processes are SIGKILLed at random
(``chaos``). Every ``SOAK_CHECK_MINUTES`` (default 5) and at the end the loops pause and the store
is checked (``checks``). One table is printed; the exit status is 1 when anything was lost.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from . import chaos, checks, writers
from .world import World


def setup(w: World) -> None:
    w.repo.mkdir()
    w.git(w.repo, "init", "-q", "-b", "main")
    (w.repo / ".gitignore").write_text(".aider*\nbuild/\n")
    for i in range(200):
        d = w.repo / "src" / f"d{i % 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.py").write_text(f"x = {i}\n")
    w.git(w.repo, "add", "-A")
    w.git(w.repo, "commit", "-q", "-m", "initial")
    w.git(w.repo, "config", "gc.auto", "300")  # so that `git gc --auto` repacks within minutes
    w.git(w.repo, "config", "gc.autoPackLimit", "8")
    r = w.ox(w.repo, "init", "--hooks")
    if r.returncode != 0:
        raise SystemExit(f"git oxide init --hooks: {r.stderr}")
    w.git(w.repo, "worktree", "add", "-q", "-b", "side", str(w.wt2))
    w.run(["git", "init", "-q", "--bare", str(w.bare)], w.base)
    w.git(w.repo, "remote", "add", "origin", str(w.bare))
    w.git(w.repo, "push", "-q", "origin", "main")
    w.run(["git", "clone", "-q", str(w.bare), str(w.clone)], w.base)
    w.ox(w.clone, "init")


def table(w: World, ws: list[writers.Writer], acked: chaos.Acked, keeper: chaos.WatchKeeper,
          left: list[str]) -> str:
    t = w.tally
    ops = ", ".join(f"{k} {n}" for k, n in sorted(t.ops.items()) if not k.startswith("kill attempts"))
    tried = sum(n for k, n in t.ops.items() if k.startswith("kill attempts"))
    kills = ", ".join(f"{k} {n}" for k, n in sorted(t.kills.items())) or "none"
    msgs = ", ".join(f"{x.name} {x.records}" for x in ws)
    mem = t.memory
    shown = [mem[i] for i in range(0, len(mem), max(1, len(mem) // 8))][:8] + mem[-1:]
    memline = " · ".join(f"{m:.1f} min {r:.1f} MB" for m, r in shown) or "no sample"
    rows = [
        ("duration", f"{w.minute():.1f} min (SOAK_MINUTES={w.minutes:g})"),
        ("operations", ops),
        ("kills (SIGKILL)", f"{sum(t.kills.values())} landed mid-run ({tried} tried; watch always): {kills}"),
        ("records written", f"{sum(x.records for x in ws)}: {msgs}"),
        ("checkpoints", f"{len(acked.checkpoints)} acknowledged, each checked against the disk"),
        ("commits checked", f"{len(acked.commits)} (every one on the branch has its note)"),
        ("sessions pushed", f"{len(acked.pushed)} (each found in the clone)"),
        ("checks", " · ".join(f"{m:.1f} min {s}" for m, s in t.checks)),
        ("watch daemon RSS", memline),
        ("watch RSS growth", f"{keeper.growth:.1f} MB after its first minute (must be < 20)"),
        ("processes left", str(len(left))),
        ("problems", str(len(t.problems))),
        ("LOSSES", str(len(t.losses))),
    ]
    width = max(len(k) for k, _ in rows)
    lines = ["git oxide soak", "-" * 72] + [f"{k:<{width}}  {v}" for k, v in rows]
    lines += [f"  loss: {x}" for x in t.losses] + [f"  problem: {x}" for x in t.problems[:20]]
    lines += [f"  left running: {x}" for x in left]
    return "\n".join(lines)


def main() -> int:
    minutes = float(os.environ.get("SOAK_MINUTES", "30"))
    every = float(os.environ.get("SOAK_CHECK_MINUTES", "5"))
    w = World(minutes, int(os.environ.get("SOAK_SEED", "17")))
    print(f"soak: {minutes:g} min in {w.base}", flush=True)
    setup(w)
    ws = writers.all_writers(w)
    acked = chaos.Acked()
    keeper = chaos.WatchKeeper(w)
    threads = [threading.Thread(target=x.loop, name=x.name, daemon=True) for x in ws]
    threads.append(threading.Thread(target=keeper.loop, name="watch", daemon=True))
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120  # the hooks link commits to the current session: wait for one
    while time.monotonic() < deadline and not any((w.repo / ".git" / "oxide" / "worktrees").glob("*/current-session")):
        time.sleep(1)
    loops = [lambda: chaos.commits(w, acked), lambda: chaos.worktree2(w, acked), lambda: chaos.maintenance(w),
             lambda: chaos.share(w, acked), lambda: chaos.imports(w)]
    more = [threading.Thread(target=f, name=f"loop{i}", daemon=True) for i, f in enumerate(loops)]
    for t in more:
        t.start()
    threads += more
    end = w.started + minutes * 60
    next_check = time.monotonic() + every * 60
    while time.monotonic() < end:
        time.sleep(min(5.0, max(0.0, end - time.monotonic())))
        if time.monotonic() >= next_check and end - time.monotonic() > 60:
            w.quiesce()
            checks.check(w, ws, acked)
            w.resume()
            next_check = time.monotonic() + every * 60
    w.quiesce()
    checks.check(w, ws, acked, final=True)
    w.stop.set()
    for t in threads:
        t.join(timeout=120)
    keeper.stop()
    left = checks.no_process_left(w)
    print(table(w, ws, acked, keeper, left), flush=True)
    bad = bool(w.tally.losses) or keeper.growth >= 20 or bool(left)
    if not os.environ.get("SOAK_KEEP") and not bad:
        w.cleanup()
    else:
        print(f"kept: {w.base}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
