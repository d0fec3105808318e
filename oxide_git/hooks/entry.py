"""The hooks' entry for a team's hook manager: `git oxide hook HOOK [ARGS...]`, a line in a Husky
script, a lefthook.yml command or a plain tracked hooks folder (``hooks_layout`` prints them), and
`git-oxide hook-impl --hook-type HOOK`, the pre-commit framework's entry (.pre-commit-hooks.yaml).

It does what the shim does (``resources/hook-tmpl``), from a command on PATH instead of this
machine's Python: checks that oxide is on, queues the hook's job in
``<git-common-dir>/oxide/hooks.queue`` and starts the drainer in the background; prepare-commit-msg
(with ``oxide.trailers``) runs at once and pre-push (with ``oxide.push``) starts the background
push. It never fails the git command: it always returns 0, errors go to the oxide log.

Git's arguments (and post-rewrite's stdin) are read from `git oxide hook`; the pre-commit
framework passes its config's ``args:`` instead, so its entry reads git's values from its
``PRE_COMMIT_*`` variables, takes pre-commit, post-commit and post-checkout only, and skips every
sequencing state (rebase, cherry-pick, merge) as it always did.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from oxide_git.git.repo import clean_git_env, find_repo

HOOKS = ("pre-commit", "prepare-commit-msg", "post-commit", "post-checkout", "post-rewrite", "pre-push")
_IMPL = (sys.executable, "-m", "oxide_git.hooks.impl")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, env=clean_git_env()).stdout.strip()


def _sequence(gd: Path) -> str:
    """The sequencing state the git command runs in, as the shim names it ("" for none)."""
    if (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists():
        return "rebase"
    for name, seq in (("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert"),
                      ("MERGE_HEAD", "merge")):
        if (gd / name).exists():
            return seq
    return ""


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _moved_from(gd: Path) -> str:
    """The branch the last checkout moved from, as HEAD's reflog says (the shim reads it so)."""
    try:
        with open(gd / "logs" / "HEAD", "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
            last = f.read().decode("utf-8", "replace").rstrip("\n").rsplit("\n", 1)[-1]
    except OSError:
        return ""
    mark = "\tcheckout: moving from "
    if mark not in last:
        return ""
    return last.split(mark, 1)[1].split(" to ", 1)[0]


def run(hook: str, args: list[str] | None) -> int:
    """Queue ``hook``'s job; ``args``: git's arguments (None: the pre-commit framework's entry)."""
    repo = find_repo(Path.cwd(), environ={})  # git runs hooks at the worktree's top
    if not repo.initialised or _git("config", "--bool", "oxide.enabled") == "false":
        return 0
    gd, oxide_dir = repo.git_dir, repo.oxide_dir
    seq = _sequence(gd)
    if args is None and (seq or hook not in ("pre-commit", "post-commit", "post-checkout")):
        return 0
    wt, cur = str(repo.workdir), _read(repo.worktree_dir / "current-session")
    lines: list[list[str]] = []
    if hook == "pre-commit" and not seq:
        lines.append(["pre-commit", wt, cur, _git("rev-parse", "-q", "--verify", "HEAD")])
    elif hook == "post-commit" and seq != "rebase":
        src = _read(gd / "CHERRY_PICK_HEAD") if seq == "cherry-pick" else ""
        lines.append(["post-commit", wt, cur, _git("rev-parse", "-q", "--verify", "HEAD"), seq, src,
                      _read(gd / "HEAD")])
    elif hook == "post-checkout":
        env = os.environ
        prev, new, flag = ([*args, "", "", ""][:3] if args is not None else
                           (env.get("PRE_COMMIT_FROM_REF", ""), env.get("PRE_COMMIT_TO_REF", ""),
                            env.get("PRE_COMMIT_CHECKOUT_TYPE", "1")))
        if flag == "1" and not seq:
            new = new or _git("rev-parse", "-q", "--verify", "HEAD")
            lines.append(["post-checkout", wt, cur, prev, new, _read(gd / "HEAD"), _moved_from(gd)])
    elif hook == "post-rewrite" and args is not None:
        for pair in sys.stdin.read().splitlines():
            old, _, rest = pair.partition(" ")
            new = rest.split(" ", 1)[0]
            if new:
                lines.append(["rewrite", wt, args[0] if args else "", old, new])
    elif hook == "prepare-commit-msg" and args and not seq:
        if _git("config", "--bool", "oxide.trailers") == "true":
            _impl(oxide_dir, ["prepare-commit-msg", wt, *args], wait=True)
        return 0
    elif hook == "pre-push" and args is not None:
        if _git("config", "--bool", "oxide.push") == "true":
            if _read(oxide_dir / "push-error"):
                sys.stderr.write("git oxide: the last background push of sessions failed "
                                 f"(details: {oxide_dir / 'push-error'})\n")
            _impl(oxide_dir, ["push", wt, next((a for a in args[:2] if a), "")], wait=False)
        return 0
    if not lines:
        return 0
    with open(oxide_dir / "hooks.queue", "a") as f:
        f.writelines("\t".join(line) + "\n" for line in lines)
    _impl(oxide_dir, ["drain", str(repo.common_dir)], wait=os.environ.get("OXIDE_HOOK_SYNC") == "1")
    return 0


def _impl(oxide_dir: Path, argv: list[str], *, wait: bool) -> None:
    """``python -m oxide_git.hooks.impl ARGV``, as the shim runs it: its errors to the oxide log."""
    with open(oxide_dir / "log", "a") as log_file:
        if wait:
            subprocess.run([*_IMPL, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=log_file, check=False)
        else:
            subprocess.Popen([*_IMPL, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=log_file, start_new_session=True)


def main(argv: list[str]) -> int:
    """`git oxide hook HOOK [ARGS...]`: never fails the git command (errors go to the oxide log)."""
    if not argv or argv[0] not in HOOKS:
        sys.stderr.write(f"git oxide hook: expected one of {', '.join(HOOKS)}\n")
        return 0
    try:
        return run(argv[0], argv[1:])
    except Exception:  # a hook must never fail the user's git command
        import traceback

        sys.stderr.write(f"git oxide hook {argv[0]} failed:\n{traceback.format_exc()}")
        return 0
