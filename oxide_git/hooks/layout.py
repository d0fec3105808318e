"""Whose the hooks folder is, and what goes in a team's hooks.

Git runs hooks from one folder (``git rev-parse --git-path hooks``). It is this clone's own when
it lies in the git dir or outside the worktree, or in the worktree but ignored by git (Husky 9's
``.husky/_``): shims written there are never committed. It is the team's when it lies in the
worktree and is tracked, or not ignored (Husky 8's ``.husky``, a ``.githooks`` folder): what is
written there shows in `git status`, and the next `git add -A` commits it for everyone, so
`git oxide hooks install` changes nothing there unless told to (``--tracked``: portable shims,
which run `git oxide` from PATH, never this machine's Python). Instead it prints the line each of
the team's hooks needs (``team_lines``): Husky's scripts and a plain folder's files call
`git oxide hook HOOK "$@"` (``hook_entry``); lefthook keeps its commands in lefthook.yml.

Husky 9 points ``core.hooksPath`` at ``.husky/_``, ignored, which `husky` writes again on every
install: one script per hook there runs the team's ``.husky/<hook>`` by its own name, so a hook
moved aside and chained (``<hook>.pre-oxide``) would look for ``.husky/<hook>.pre-oxide`` and run
nothing. That folder is Husky's (case ``generated``): the lines go into the scripts in ``.husky``.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from oxide_git.git.repo import Repo, clean_git_env

# The hooks a team's hook manager calls git oxide from (pre-push with oxide.push, and
# prepare-commit-msg with oxide.trailers, only when those are turned on: each costs a commit a start).
TEAM_HOOKS = ("pre-commit", "post-commit", "post-checkout", "post-rewrite")
ON_SETTING = {"pre-push": "oxide.push", "prepare-commit-msg": "oxide.trailers"}
LEFTHOOK_FILES = ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml")
_STDIN = ("post-rewrite", "pre-push")  # hooks git gives input on stdin


@dataclass
class Layout:
    hooks_dir: Path
    case: str  # private (in the git dir or outside the worktree), ignored, tracked, generated (above)
    manager: str  # husky, lefthook or plain
    where: str  # the folder as the user names it: relative to the worktree when inside it
    top: Path  # the worktree
    tracked_files: list[str] = field(default_factory=list)
    scripts: str = ""  # where the team's hook scripts are (Husky 9: the folder above); "": ``where``

    @property
    def teams(self) -> bool:
        return self.case in ("tracked", "generated")

    @property
    def scripts_dir(self) -> Path:
        return self.top / self.scripts if self.scripts else self.hooks_dir

    def describe(self) -> str:
        kind = {"husky": "Husky's folder", "lefthook": "a folder, with lefthook.yml",
                "plain": "a folder"}[self.manager]
        if self.case == "private":
            return f"{self.where}: this clone's own (git never commits it)"
        if self.case == "generated":
            return (f"{self.where}: Husky 9's folder, written again by `husky` on each install; the team's "
                    f"hooks are the scripts in {self.scripts}")
        if self.case == "ignored":
            return f"{self.where}: {kind} in the worktree, ignored by git (never committed)"
        held = (f"{len(self.tracked_files)} tracked file(s)" if self.tracked_files
                else "not ignored: what is written there is committed by the next `git add -A`")
        return f"{self.where}: {kind} in the worktree, the team's ({held})"


def _git(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo.workdir, capture_output=True, text=True,
                          env=clean_git_env())


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def layout(repo: Repo, hooks_dir: Path) -> Layout:
    """Where ``hooks_dir`` lies for ``repo`` (see the module docstring)."""
    d = Path(hooks_dir).resolve()
    top = repo.workdir.resolve()
    manager = "plain"
    if any((top / f).is_file() for f in LEFTHOOK_FILES):
        manager = "lefthook"
    if not _inside(d, top) or _inside(d, repo.git_dir.resolve()) or _inside(d, repo.common_dir.resolve()):
        return Layout(d, "private", manager, str(hooks_dir), top)
    rel = d.relative_to(top).as_posix()
    if rel.split("/", 1)[0] == ".husky":
        manager = "husky"
    tracked = [f for f in _git(repo, "ls-files", "-z", "--", rel).stdout.split("\0") if f]
    if tracked:
        return Layout(d, "tracked", manager, rel, top, tracked)
    ignored = _git(repo, "check-ignore", "-q", "--", f"{rel}/pre-commit").returncode == 0
    if ignored and manager == "husky" and (d / "h").is_file() and d.parent != top:
        return Layout(d, "generated", manager, rel, top, scripts=d.parent.relative_to(top).as_posix())
    return Layout(d, "ignored" if ignored else "tracked", manager, rel, top)


def calls_oxide(lay: Layout, hook: str) -> bool:
    """Does the team's ``hook`` (its file, or lefthook.yml) run `git oxide hook HOOK`?"""
    files = [lay.top / n for n in LEFTHOOK_FILES] if lay.manager == "lefthook" else [lay.scripts_dir / hook]
    return any(f"git oxide hook {hook}" in _text(f) for f in files)


def _text(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(65536)
    except OSError:
        return ""


def team_lines(lay: Layout, skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """What to add to the team's hooks so that git oxide records for everyone who has it on PATH
    (``skip``: the hooks that run it already)."""
    hooks = [h for h in (*TEAM_HOOKS, *ON_SETTING) if h not in skip]
    if lay.manager == "lefthook":
        out = ["add to lefthook.yml (then `lefthook install`):"]
        for hook in hooks:
            when = f"  # with {ON_SETTING[hook]} true" if hook in ON_SETTING else ""
            out += [f"  {hook}:{when}", "    commands:", "      git-oxide:",
                    f"        run: git oxide hook {hook} {{0}}"]
            if hook in _STDIN:
                out.append("        use_stdin: true")
        return out
    where = lay.scripts or lay.where
    new = "a new file: `#!/bin/sh` first, executable" if lay.case != "generated" else "a new file will do"
    out = [f"add this line to each hook in {where} ({new}):"]
    width = max(len(h) for h in (*TEAM_HOOKS, *ON_SETTING)) + len(where) + 2
    for hook in hooks:
        when = f"  (with {ON_SETTING[hook]} true)" if hook in ON_SETTING else ""
        out.append(f"  {(where + '/' + hook):<{width}} git oxide hook {hook} \"$@\"{when}")
    return out
