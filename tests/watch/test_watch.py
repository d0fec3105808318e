"""Live capture: the pure plan, the journal fast path, and the real daemon on a real agent store."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from oxide_git.watch.capture_plan import Import, Journal, Plan
from tests.conftest import git, make_ctx, oxide, oxide_process, wait_for
from tests.hooks.test_hooks import SID_NATIVE, claude_line


def plan() -> Plan:
    return Plan({"/h/.claude/projects": "claude"}, {"/r": "main", "/r/wt": "wt"},
                {".aider.chat.history.md": "aider"}, debounce=0.1, max_wait=0.5)


def test_plan_classifies_and_journals() -> None:
    p = plan()
    out = p.feed(["/r/a.py", "/r/.git/index", "/r/wt/b.py", "/r/a.py", "/elsewhere/x",
                  "/r/.aider.chat.history.md", "/r/src/c.py"], now=0.0)
    assert sorted(out, key=lambda j: j.worktree) == [Journal("main", ("a.py", "src/c.py")),
                                                      Journal("wt", ("b.py",))]
    assert p.due(0.2) == [Import("aider", "/r/.aider.chat.history.md")]


def test_plan_debounces_and_caps_latency() -> None:
    p = plan()
    f = "/h/.claude/projects/x/s.jsonl"
    p.feed([f], now=0.0)
    assert p.due(0.05) == []
    p.feed([f], now=0.08)
    assert p.due(0.15) == []  # still changing
    assert p.due(0.2) == [Import("claude", f)]
    assert p.due(0.3) == []
    for t in (1.0, 1.09, 1.18, 1.27, 1.36, 1.45):  # a file that never goes quiet
        p.feed([f], now=t)
        assert p.due(t) == []
    p.feed([f], now=1.5)
    assert p.due(1.5) == [Import("claude", f)]


def test_plan_retries_a_locked_import_later_or_when_the_file_changes() -> None:
    p = plan()
    f = "/h/.claude/projects/x/s.jsonl"
    p.retry("claude", f, now=10.0, after=5.0)
    assert p.due(14.9) == [] and p.due(15.05) == []
    assert p.due(15.2) == [Import("claude", f)]
    assert p.due(30.0) == []  # once
    p.retry("claude", f, now=40.0, after=5.0)
    p.feed([f], now=41.0)  # it changed meanwhile: imported when quiet, not 5 s on
    assert p.due(41.2) == [Import("claude", f)]


def fake_watcher(repo: Path) -> None:
    """A journal written as a running watcher would (this process stands in for it)."""
    from oxide_git.git import status
    from oxide_git.git import watch_journal as journal

    r = make_ctx(repo).repo
    (r.oxide_dir).mkdir(parents=True, exist_ok=True)
    (r.oxide_dir / journal.PID_FILE).write_text(json.dumps({"pid": os.getpid(), "token": "t"}))
    journal.write_baseline(r, "t", status.run(repo).paths)


def test_journal_status_matches_git_status(repo: Path) -> None:
    from oxide_git.git import status
    from oxide_git.git import watch_journal as journal
    from oxide_git.store import snapshots

    (repo / "pre.txt").write_text("dirty before watch\n")
    fake_watcher(repo)
    r = make_ctx(repo).repo
    (repo / "README.md").write_text("changed\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("ignored\n")
    (repo / "x.log").write_text("ignored\n")
    (repo / "newdir" / "deep").mkdir(parents=True)
    (repo / "newdir" / "deep" / "n.txt").write_text("n\n")
    (repo / "src" / "app.py").unlink()
    (repo / "src").rmdir()
    journal.append(r, ["README.md", "build/out.bin", "x.log", "newdir", "src"])
    assert journal.active(r)
    fast = journal.status_from_journal(r)
    assert fast is not None
    full = status.run(repo)
    assert fast.untracked == full.untracked == {"pre.txt", "newdir/deep/n.txt"}
    assert fast.paths >= full.paths
    a = snapshots.take(r, kind="watch", now_ms=1, status=fast)
    b = snapshots.take(r, kind="watch", now_ms=1, status=full)
    assert a.tree == b.tree
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "move HEAD")
    assert not journal.active(r) and journal.status_from_journal(r) is None  # HEAD moved: full status


def test_journal_status_keeps_an_ignored_file_added_to_the_index(repo: Path) -> None:
    """check-ignore runs without the index (at 1M files reading it was most of a watch-assisted
    checkpoint), so a file that is ignored but added (`git add -f`, not committed) is found in the
    index's new paths and kept, as git status keeps it; adding another one is seen too."""
    from oxide_git.git import status
    from oxide_git.git import watch_journal as journal
    from oxide_git.store import snapshots

    fake_watcher(repo)
    r = make_ctx(repo).repo
    (repo / "forced.log").write_text("ignored, but added\n")
    (repo / "plain.log").write_text("ignored\n")
    git(repo, "add", "-f", "forced.log")
    journal.append(r, ["forced.log", "plain.log"])
    fast = journal.status_from_journal(r)
    full = status.run(repo)
    assert fast is not None and "forced.log" in full.paths and "plain.log" not in full.paths
    assert "forced.log" in fast.untracked | fast.changed and "plain.log" not in fast.paths
    assert snapshots.take(r, kind="watch", now_ms=1, status=fast, keep=False).tree == \
        snapshots.take(r, kind="watch", now_ms=2, status=full, keep=False).tree
    (repo / "later.log").write_text("added after the index was read\n")
    git(repo, "add", "-f", "later.log")  # a new index: read again
    journal.append(r, ["later.log"])
    again = journal.status_from_journal(r)
    assert again is not None and "later.log" in again.paths


@pytest.mark.parametrize("trees", ["inotify", "watchdog"])
@pytest.mark.process
def test_daemon_imports_checkpoints_prompts_and_stops(repo: Path, trees: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Worktrees watched by ``inotify_tree`` (Linux) or by watchdog (elsewhere), the same."""
    if trees == "watchdog":
        monkeypatch.setenv("OXIDE_WATCH_INOTIFY", "0")
    oxide(repo, "init")
    store = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p"
    res = json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)
    pid = res["pid"]
    try:
        store.mkdir(parents=True)  # the store appears after the watcher started
        transcript = store / f"{SID_NATIVE.format(7)}.jsonl"
        transcript.write_text(claude_line(repo, 7, "first prompt"))

        def session() -> tuple[str, int] | None:
            rows = make_ctx(repo).index.query("SELECT id, message_count FROM sessions")
            return (rows[0][0], rows[0][1]) if rows else None

        t0 = time.monotonic()
        sid, _ = wait_for(session)
        first_latency = time.monotonic() - t0
        (repo / "README.md").write_text("edited while watching\n")
        with transcript.open("a") as f:
            f.write(claude_line(repo, 7, "an answer", role="assistant"))
            f.write(claude_line(repo, 7, "second prompt"))
        t0 = time.monotonic()
        wait_for(lambda: (session() or ("", 0))[1] == 3)
        append_latency = time.monotonic() - t0
        cps = wait_for(lambda: [c for c in make_ctx(repo).index.checkpoint_rows(sid)
                                if c["message"] == "second prompt"])
        assert {c["kind"] for c in make_ctx(repo).index.checkpoint_rows(sid)} == {"prompt"}
        assert git(repo, "show", f"{cps[0]['id']}:README.md") == "edited while watching\n"
        assert (make_ctx(repo).repo.worktree_dir / "current-session").read_text().strip() == sid
        assert first_latency < 5 and append_latency < 3, (first_latency, append_latency)
        # a checkpoint now uses the journal, and sees the change
        from oxide_git.git import watch_journal as journal

        wait_for(lambda: journal.active(make_ctx(repo).repo))
        (repo / "late.txt").write_text("late\n")
        wait_for(lambda: "late.txt" in (journal.read(make_ctx(repo).repo) or ({}, set()))[1])
        cp = json.loads(oxide(repo, "checkpoint", "--json").stdout)
        assert git(repo, "show", f"{cp['id']}:late.txt") == "late\n"
        # a store that is deleted does not stop the watcher: it goes on importing what comes next
        import shutil

        shutil.rmtree(store.parent)
        log = make_ctx(repo).repo.oxide_dir / "log"
        wait_for(lambda: log.exists() and f"{store.parent} is gone" in log.read_text())
        again = store.parent / "q"
        again.mkdir(parents=True)
        (again / f"{SID_NATIVE.format(8)}.jsonl").write_text(claude_line(repo, 8, "after the store went"))
        wait_for(lambda: len(make_ctx(repo).index.query("SELECT id FROM sessions")) == 2)
        # deleted and made again at once (within one rescan): another folder, watched anew
        shutil.rmtree(store.parent)
        third = store.parent / "r"
        third.mkdir(parents=True)
        (third / f"{SID_NATIVE.format(9)}.jsonl").write_text(claude_line(repo, 9, "a store made again"))
        wait_for(lambda: len(make_ctx(repo).index.query("SELECT id FROM sessions")) == 3)
        with (third / f"{SID_NATIVE.format(9)}.jsonl").open("a") as f:  # and what it writes next
            f.write(claude_line(repo, 9, "an answer", role="assistant"))
        wait_for(lambda: [r for r in make_ctx(repo).index.query("SELECT message_count FROM sessions")
                          if r[0] == 2])
        os.kill(pid, 0)  # the same process, still running
        assert json.loads(oxide_process(repo, "watch", "--daemon", "--json").stdout)["started"] is False
    finally:
        out = json.loads(oxide(repo, "watch", "--stop", "--json").stdout)
    assert out["stopped"] and out["pid"] == pid
    assert not (make_ctx(repo).repo.oxide_dir / "watch.pid").exists()
    with pytest.raises(OSError):
        wait_for(lambda: os.kill(pid, 0), timeout=5)
    log = make_ctx(repo).repo.oxide_dir / "log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")


def test_lost_file_events_rebuild_the_journal(repo: Path) -> None:
    """When the kernel drops file events (watchdog only logs it), the journal may miss paths: it is
    rebuilt from git status before the next checkpoint is answered."""
    import logging
    import threading

    from oxide_git.git import watch_journal as journal
    from oxide_git.watch import watcher as watch

    ctx = make_ctx(repo)
    ctx.repo.oxide_dir.mkdir(parents=True, exist_ok=True)
    w = watch.Watcher(ctx, "tok")
    ready = threading.Event()
    t = threading.Thread(target=w.run, args=(ready,), daemon=True)
    t.start()  # the watcher's own loop, with the handler it installs on watchdog's logger
    try:
        assert ready.wait(20)
        wait_for(lambda: (journal.read(ctx.repo) or ({}, set()))[0].get("token") == "tok")
        journal.append(ctx.repo, ["missed-by-nobody"])
        assert "missed-by-nobody" in (journal.read(ctx.repo) or ({}, set()))[1]
        (repo / "missed.txt").write_text("its event was lost\n")
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost")
        wait_for(lambda: (journal.read(ctx.repo) or ({}, {""}))[1] == {"missed.txt"})
        log = (ctx.repo.oxide_dir / "log").read_text()
        assert "journals rebuilt from git status" in log
    finally:
        w.stop.set()
        t.join(10)
    assert not t.is_alive()
    assert not [h for h in logging.getLogger("watchdog").handlers if isinstance(h, watch._OverflowFlag)]


def test_a_killed_watcher_nobody_reaped_is_not_running(repo: Path) -> None:
    """A zombie still answers kill(pid, 0); a container's first process often reaps no orphans,
    so a killed daemon stays one, and `watch --daemon` must not say it is already running."""
    import subprocess
    import sys

    from oxide_git.git import watch_journal as journal

    r = make_ctx(repo).repo
    r.oxide_dir.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    wait_for(lambda: Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z")
    (r.oxide_dir / journal.PID_FILE).write_text(json.dumps({"pid": child.pid, "token": "t"}))
    try:
        assert journal.watcher(r) is None
        (r.oxide_dir / journal.PID_FILE).write_text(json.dumps({"pid": os.getpid(), "token": "t"}))
        assert journal.watcher(r) is not None  # a live one still counts
    finally:
        child.wait()


def test_checkpoints_the_watcher_serves_do_not_grow_its_memory(repo: Path) -> None:
    """pygit2 keeps the name of each lookup that misses, and an untracked path always misses: the
    journal's status, run for every checkpoint `watch` serves, leaked each one's paths."""
    import gc
    import tracemalloc

    from oxide_git.git import watch_journal as journal
    from oxide_git.git.objects import BLOB
    from oxide_git.store import trees

    fake_watcher(repo)
    r = make_ctx(repo).repo
    names = [f"new/d{i % 7}/untracked-{i}.txt" for i in range(300)]
    for n in names:
        (repo / n).parent.mkdir(parents=True, exist_ok=True)
        (repo / n).write_text("x\n")
    journal.append(r, names)
    git_ = r.git
    base = git_.head.peel().tree

    def once() -> None:
        st = journal.status_from_journal(r)
        assert st is not None and len(st.untracked) == 300
        changes = {p: (r.objects.write(BLOB, b"x\n"), 0o100644) for p in sorted(st.untracked)}
        trees.apply_changes(r.objects, base.id.raw, changes)

    once()
    gc.collect()
    tracemalloc.start(8)
    before = tracemalloc.take_snapshot()
    for _ in range(30):
        once()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    # (pathlib interns every path part once, and the interned table grows when it must: not ours)
    mine = [tracemalloc.Filter(False, "*/pathlib.py")]
    top = after.filter_traces(mine).compare_to(before.filter_traces(mine), "traceback")
    grown = sum(d.size_diff for d in top)
    where = "\n".join(f"{d.size_diff} B: " + " < ".join(d.traceback.format()[-2:]) for d in top[:3])
    assert grown < 200_000, f"{grown} bytes kept after 30 checkpoints' status and tree:\n{where}"


def test_a_prompt_checkpoint_holds_what_changed_while_its_session_was_imported(repo: Path) -> None:
    """Events that queued while the watcher was busy importing (a tool's write right after the
    prompt) are journaled before the prompt's checkpoint, so its tree is the worktree at its time."""
    from oxide_git.git import watch_journal as journal
    from oxide_git.imports import importing
    from oxide_git.watch import watcher as watch

    oxide(repo, "init")
    ctx = make_ctx(repo)
    w = watch.Watcher(ctx, "tok")  # its loop is not started: the test plays the events itself
    (ctx.repo.oxide_dir / journal.PID_FILE).write_text(json.dumps({"pid": os.getpid(), "token": "tok"}))
    w.rescan()  # watches the worktree and writes the journal's baseline
    try:
        assert journal.active(ctx.repo)
        store = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p"
        store.mkdir(parents=True)
        transcript = store / f"{SID_NATIVE.format(3)}.jsonl"
        transcript.write_text(claude_line(repo, 3, "make tool.txt"))
        sid = importing.import_file(ctx, "claude", transcript).sessions[0]
        (repo / "tool.txt").write_text("written by the agent's tool\n")
        w.events.put(str(repo / "tool.txt"))  # its event, queued while the import ran
        w.after_import(sid, 0, True)
        [cp] = make_ctx(repo).index.checkpoint_rows(sid)
        assert git(repo, "show", f"{cp['id']}:tool.txt") == "written by the agent's tool\n"
        assert w.events.empty()
    finally:
        w.obs.stop()
        (ctx.repo.oxide_dir / journal.PID_FILE).unlink()


@contextmanager
def _watching(repo: Path) -> Iterator[tuple[Any, Any]]:
    """A watcher of ``repo``'s worktrees in this process, its observers running: (ctx, watcher)."""
    from oxide_git.git import watch_journal as journal
    from oxide_git.watch import watcher as watch

    ctx = make_ctx(repo)
    w = watch.Watcher(ctx, "tok")
    (ctx.repo.oxide_dir / journal.PID_FILE).write_text(json.dumps({"pid": os.getpid(), "token": "tok"}))
    w.obs.start()
    try:
        w.rescan()
        yield ctx, w
    finally:
        w.obs.stop()
        (ctx.repo.oxide_dir / journal.PID_FILE).unlink()


def _no_barrier_left_or_late(ctx: Any) -> None:
    from oxide_git.watch import watcher as watch

    assert not [p for p in (ctx.repo.oxide_dir / "run").iterdir() if p.name.startswith(watch.BARRIER_PREFIX)]
    log = ctx.repo.oxide_dir / "log"
    assert not log.exists() or "no event for" not in log.read_text()


def test_the_worktrees_own_events_are_in_before_a_checkpoint(repo: Path) -> None:
    """A write made just before the checkpoint is journaled, though its event may not have reached
    the watcher yet: the barrier file's event comes through the same watch after it."""
    from oxide_git.git import watch_journal as journal

    oxide(repo, "init")
    with _watching(repo) as (ctx, w):
        [wrepo] = w.repos.values()
        for n in range(5):
            (repo / f"just-now-{n}.txt").write_text("written the moment before\n")
            w.journal_pending([wrepo])
            assert f"just-now-{n}.txt" in (journal.read(ctx.repo) or ({}, set()))[1]
        _no_barrier_left_or_late(ctx)


def test_a_linked_worktrees_events_are_in_before_its_checkpoint(repo: Path) -> None:
    """The same for a linked worktree, where nothing is ours to write: the barrier goes in the main
    worktree's gitdir, whose events come on the same inotify descriptor, after the linked one's."""
    from oxide_git.git import watch_journal as journal

    oxide(repo, "init")
    wt = repo.parent / "linked"
    git(repo, "worktree", "add", "-q", str(wt))
    with _watching(repo) as (ctx, w):
        [linked] = [r for r in w.repos.values() if r.workdir.resolve() == wt.resolve()]
        assert w.obs.trees is not None  # Linux: both trees on inotify_tree's one descriptor
        for n in range(5):
            before = w.barriers
            (wt / f"just-now-{n}.txt").write_text("written the moment before\n")
            w.journal_pending([linked])
            assert w.barriers == before + 1  # a barrier was written, in the main worktree's gitdir
            assert f"just-now-{n}.txt" in (journal.read(linked) or ({}, set()))[1]
        _no_barrier_left_or_late(ctx)
