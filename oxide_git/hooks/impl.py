"""What the git hook shims run: ``python -m oxide_git.hooks.impl drain|prepare-commit-msg|push|install-hook``.

Shims only append a line to ``<git-common-dir>/oxide/hooks.queue`` and start ``drain`` in the
background, which runs the queued jobs in order under a lock (``hook_queue``). Nothing here ever
fails git: every error is logged to ``<git-common-dir>/oxide/log``. Stdlib only at import time (hot path).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from oxide_git.core.oxide_log import log as log
from oxide_git.git.repo import clean_git_env
from oxide_git.hooks import queue as hook_queue
from oxide_git.store.notes import NOTES_REF, merge_notes, read_note, write_note

PENDING = "pre-commit.json"


def _clean_env() -> None:
    """Forget the variables git sets for hooks: jobs open the repository explicitly."""
    clean = clean_git_env()
    for k in [k for k in os.environ if k not in clean]:
        del os.environ[k]


def _ctx(worktree: str) -> Any:
    from oxide_git.git.repo import find_repo
    from oxide_git.store.context import Context

    return Context(find_repo(Path(worktree), environ={}), int(time.time() * 1000), dict(os.environ))


# jobs ----------------------------------------------------------------------------------------


def job_pre_commit(worktree: str, current: str, head: str = "", tree: str = "") -> None:
    """A checkpoint (kind pre-commit) of the worktree as it was when the hook ran, tied to the
    session that was current then, kept pending for post-commit. ``tree``: the tree being
    committed, which the shim wrote (`git write-tree`) and marked the moment of (the mtime of
    ``pre-commit.<tree>``): the checkpoint is built from it and dated then, and a file changed
    since keeps its version there (``snapshots.take``'s ``as_of``)."""
    from oxide_git.store import snapshots
    from oxide_git.store import writes as store

    ctx = _ctx(worktree)
    sessions = [current] if current else []
    pending = ctx.repo.worktree_dir / PENDING
    if not sessions:  # (the shim marks a tree only with a current session)
        pending.unlink(missing_ok=True)
        return
    moment = hook_moment(ctx.repo.worktree_dir, tree)
    sid = sessions[0]
    now_ms = moment // 1_000_000 if moment is not None else ctx.now_ms
    rows = ctx.index.query(
        "SELECT id FROM messages WHERE session_id=? ORDER BY created_at <= ? DESC, seq DESC LIMIT 1",
        (sid, now_ms))  # the last message then (one after it, if none was: a session without times)
    cp = snapshots.take(
        ctx.repo, kind="pre-commit", now_ms=now_ms, session_id=sid,
        message_id=rows[0][0] if rows else None, parent=head or None,
        max_file_size=ctx.config_size("oxide.maxFileSize", snapshots.DEFAULT_MAX_FILE_SIZE),
        as_of=(tree, moment) if moment is not None else None,
    )
    store.record_checkpoint(ctx, cp)
    pending.write_text(json.dumps({"head": head, "checkpoint": cp.id, "sessions": sessions}))
    if moment is not None:  # done: a job run again (killed before this) finds the moment still
        (ctx.repo.worktree_dir / f"pre-commit.{tree}").unlink(missing_ok=True)


def hook_moment(worktree_dir: Path, tree: str) -> int | None:
    """When the pre-commit shim wrote ``tree`` (ns: the mtime of its mark,
    ``pre-commit.<tree>``), if it marked it."""
    if not tree or not all(c in "0123456789abcdef" for c in tree):
        return None
    try:
        return (worktree_dir / f"pre-commit.{tree}").stat().st_mtime_ns
    except OSError:
        return None


def _parent(git: Any, oid: str) -> str | None:
    try:
        c = git.get(oid)
        return str(c.parent_ids[0]) if c is not None and c.parent_ids else None
    except ValueError:
        return None


def job_post_commit(worktree: str, current: str, commit: str, seq: str = "", source: str = "",
                    head_line: str = "") -> None:
    """Note the commit with the sessions and checkpoints that led to it. ``head_line`` is HEAD as
    the hook read it (the branch committed to: a checkout may come before this job runs)."""
    ctx = _ctx(worktree)
    git = ctx.repo.git
    branch = _branch_of(head_line) if head_line else ctx.repo.branch()
    note: dict[str, Any] = {"sessions": [current] if current else [], "checkpoints": [],
                            "worktree": ctx.repo.worktree_id, "branch": branch}
    pending = ctx.repo.worktree_dir / PENDING
    try:
        pend = json.loads(pending.read_text())
        pending.unlink()
    except (OSError, ValueError):
        pend = None
    if pend and not seq:
        parent, head = _parent(git, commit), pend.get("head") or None
        # a plain commit (head is its parent) or an amend (head shares its parent)
        if head == parent or (head and _parent(git, head) == parent):
            note["sessions"] = pend["sessions"] + note["sessions"]
            note["checkpoints"].append(pend["checkpoint"])
    if seq == "cherry-pick" and source:
        older = [read_note(git, source)]
    elif not seq:  # a cherry-pick that stopped on a conflict, committed since (git said nothing)
        from oxide_git.store.picked import picked_from

        older = [read_note(git, c) for c in picked_from(git, ctx.repo.git_dir, commit)]
    else:
        older = []
    write_note(ctx, commit, merge_notes(*older, note))
    if note["sessions"]:
        _remember_branch(ctx, branch, note["sessions"][0])
    if ctx.config("oxide.trace"):  # Agent Trace / Git AI notes (trace_notes), after oxide's own
        from oxide_git.ops.trace_notes import after_commit

        after_commit(ctx, commit)


def job_rewrite(worktree: str, kind: str, pairs: list[tuple[str, str]]) -> None:
    """Carry notes from rewritten commits to their rewrites (squash: the union)."""
    ctx = _ctx(worktree)
    git = ctx.repo.git
    by_new: dict[str, list[str]] = {}
    for old, new in pairs:
        by_new.setdefault(new, []).append(old)
    for new, olds in by_new.items():
        notes = [n for n in (read_note(git, o) for o in olds) if n]
        if notes:
            write_note(ctx, new, merge_notes(*notes, {"rewritten": kind}))
    if ctx.config("oxide.trace") or _trace_notes_exist(ctx):  # worked out again for the rewrites
        from oxide_git.ops.trace_notes import after_rewrite

        after_rewrite(ctx, by_new)


def _trace_notes_exist(ctx: Any) -> bool:
    from oxide_git.git.refs import TRACE_NOTES

    return any(_notes_exist(ctx.repo.common_dir, ctx.repo.oxide_dir, r) for r in TRACE_NOTES)


def _remember_branch(ctx: Any, branch: str, sid: str) -> None:
    path = ctx.repo.worktree_dir / "branch-sessions.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    if data.get(branch) != sid:
        data[branch] = sid
        path.write_text(json.dumps(data, sort_keys=True))


def _branch_of(head_line: str) -> str:
    """The branch a HEAD file's line names (``ref: refs/heads/x``), or ``(detached)``."""
    return head_line[5:].strip().removeprefix("refs/heads/") if head_line.startswith("ref:") else "(detached)"


def job_post_checkout(worktree: str, current: str, prev: str, new: str, head_line: str,
                      old_branch: str = "") -> None:
    """Record the branch switch; make the session last used on the new branch current."""
    from oxide_git.store import writes as store

    ctx = _ctx(worktree)
    wdir = ctx.repo.worktree_dir
    wdir.mkdir(parents=True, exist_ok=True)
    branch = _branch_of(head_line)
    if current and old_branch:
        _remember_branch(ctx, old_branch, current)
    try:
        target = json.loads((wdir / "branch-sessions.json").read_text()).get(branch)
    except (OSError, ValueError):
        target = None
    if target and target != current and ctx.index.query("SELECT 1 FROM sessions WHERE id=?", (target,)):
        store.set_current_session(ctx, target)
    with open(wdir / "checkouts.jsonl", "a") as f:
        f.write(json.dumps({"at": ctx.now_ms, "from": prev, "to": new, "from_branch": old_branch,
                            "branch": branch, "sessions": [current] if current else [],
                            "current": store.current_session(ctx)}) + "\n")


def run_jobs(lines: list[str], oxide_dir: Path) -> None:
    rewrites: dict[tuple[str, str], list[tuple[str, str]]] = {}

    def flush_rewrites() -> None:
        for (wt, kind), pairs in rewrites.items():
            job_rewrite(wt, kind, pairs)
        rewrites.clear()

    for line in lines:
        f = line.rstrip("\n").split("\t")
        try:
            if f[0] == "rewrite":
                rewrites.setdefault((f[1], f[2]), []).append((f[3], f[4]))
                continue
            flush_rewrites()
            if f[0] == "pre-commit":
                job_pre_commit(*f[1:5])
            elif f[0] == "post-commit":
                job_post_commit(*f[1:7])
            elif f[0] == "post-checkout":
                job_post_checkout(*f[1:7])
        except Exception:
            log(oxide_dir, f"hook job {line.strip()!r} failed:\n{traceback.format_exc()}")
    try:
        flush_rewrites()
    except Exception:
        log(oxide_dir, f"rewrite jobs failed:\n{traceback.format_exc()}")


def drain(common_dir: str) -> None:
    """Run every queued job, in order (``hook_queue``: one drainer at a time)."""
    oxide_dir = Path(common_dir) / "oxide"
    hook_queue.drain(oxide_dir, lambda lines: run_jobs(lines, oxide_dir))


# synchronous hooks ---------------------------------------------------------------------------


def prepare_commit_msg(worktree: str, msg_file: str, *_: str, index_file: str | None = None) -> None:
    """Add ``Oxide-Session:`` trailers for the worktree's current session, and ``Assisted-by:``
    ones for the agents and models whose turns wrote the staged files' lines (oxide.trailers)."""
    from oxide_git.git.repo import clean_git_env, find_repo

    repo = find_repo(Path(worktree), environ={})
    try:
        sid = (repo.worktree_dir / "current-session").read_text().strip()
    except OSError:
        return
    if not sid:
        return
    trailers = ["--trailer", f"Oxide-Session: {sid}"]
    try:
        from oxide_git.hooks.assisted_by import assisted_by, staged_paths

        ctx = _ctx(worktree)
        for who in assisted_by(ctx, staged_paths(worktree, index_file)):
            trailers += ["--trailer", f"Assisted-by: {who}"]
    except Exception:  # the session's trailer goes in whatever this says
        log(repo.oxide_dir, f"Assisted-by trailers left out:\n{traceback.format_exc()}")
    subprocess.run(["git", "interpret-trailers", "--in-place", "--if-exists", "addIfDifferent",
                    *trailers, msg_file], cwd=worktree, check=True, capture_output=True, env=clean_git_env())


def install_hook(hook: str, worktree: str) -> None:
    """Install an on-demand shim (``hooks.ON_DEMAND``) whose setting was turned on; its chained
    hook is kept as ``hooks install`` keeps it. Called by the pre-commit shim."""
    from oxide_git.git.repo import find_repo
    from oxide_git.hooks.install import ON_DEMAND, install

    if hook not in ON_DEMAND:
        raise ValueError(f"{hook} is not installed on demand")
    repo = find_repo(Path(worktree), environ={})
    for action in install(repo, python=sys.executable, types=(hook,)).actions:
        log(repo.oxide_dir, f"hooks: {action} ({ON_DEMAND[hook]} is true)")


def push(worktree: str, remote: str) -> None:
    """Push sessions and notes (and checkpoints with oxide.pushCheckpoints) within a budget."""
    from oxide_git.git.refs import TRACE_NOTES
    from oxide_git.git.repo import clean_git_env, find_repo
    from oxide_git.store.context import Context

    repo = find_repo(Path(worktree), environ={})
    ctx = Context(repo, int(time.time() * 1000), {})
    specs = ["refs/oxide/sessions/*:refs/oxide/sessions/*"]
    for ref in (NOTES_REF, *TRACE_NOTES):
        if _notes_exist(repo.common_dir, repo.oxide_dir, ref):
            specs.append(f"{ref}:{ref}")
    if ctx.config_bool("oxide.pushCheckpoints", False):  # never as they are: screened first
        from oxide_git.ops import checkpoint_screen

        screened = checkpoint_screen.screen_all(ctx)
        specs += checkpoint_screen.outgoing(ctx, screened)
        for line in checkpoint_screen.report_lines([s for s in screened if s.fresh], remote):
            log(repo.oxide_dir, f"background push to {remote}: {line}")
    budget = float(ctx.config("oxide.pushTimeout", "60") or 60)
    err_file = repo.oxide_dir / "push-error"
    try:
        r = subprocess.run(["git", "push", "--no-verify", "--quiet", remote, *specs], cwd=worktree,
                           capture_output=True, text=True, timeout=budget, env=clean_git_env())
        error = r.stderr.strip() if r.returncode else ""
    except subprocess.TimeoutExpired:
        error = f"git push {remote} took longer than {budget:g} s (oxide.pushTimeout)"
    if error:
        err_file.write_text(error + "\n")
        log(repo.oxide_dir, f"background push to {remote} failed: {error}")
    else:
        err_file.unlink(missing_ok=True)


def _notes_exist(common: Path, oxide_dir: Path, ref: str = NOTES_REF) -> bool:
    from oxide_git.core.errors import OxideError
    from oxide_git.git.refs import read_raw

    try:
        return read_raw(common, ref) is not None
    except OxideError as e:  # git would push a damaged ref as a deletion of the remote's notes
        log(oxide_dir, f"background push left {ref} out: {e.message} ({e.hint})")
        return False


def main(argv: list[str]) -> int:
    """Never raises, always 0: a hook must not fail the user's git command."""
    index_file = os.environ.get("GIT_INDEX_FILE")  # `commit -a` / `commit PATH`: a temporary index
    _clean_env()
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if cmd == "drain":
            os.nice(10)  # background work: the user's git command goes first
            drain(*args[:1])
        elif cmd == "prepare-commit-msg":
            prepare_commit_msg(*args, index_file=index_file)
        elif cmd == "push":
            push(*args[:2])
        elif cmd == "install-hook":
            install_hook(*args[:2])
        elif cmd == "--hook-type" and args:
            from oxide_git.hooks.entry import (
                run,  # the pre-commit framework's entry: git's values from its variables
            )

            run(args[0], None)
        else:
            raise ValueError(f"unknown hook command {cmd!r}")
    except Exception:
        where = Path(args[0]) if cmd == "drain" and args else None
        text = f"hook-impl {argv!r} failed:\n{traceback.format_exc()}"
        if where is not None:
            log(where / "oxide", text)
        else:
            sys.stderr.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
