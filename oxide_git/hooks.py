"""Install, remove and inspect git oxide's git hook shims (``git oxide hooks ...``).

Shims go where git looks (``git rev-parse --git-path hooks``: core.hooksPath, Husky and linked
worktrees included). A hook already there is moved aside as ``<hook>.pre-oxide`` and chained.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from . import hook_queue
from .errors import OxideError, Refused
from .repo import Repo, clean_git_env

HOOK_TYPES = ("pre-commit", "prepare-commit-msg", "post-commit", "post-checkout", "post-rewrite",
              "pre-push")
# Installed only while `git config oxide.trailers` is true: every installed hook costs a commit a
# /bin/sh start (~1.5 ms) even with oxide disabled. The pre-commit shim installs it when it sees
# trailers turned on (before git looks for it), and `hooks install` removes it when they are off.
ON_DEMAND = {"prepare-commit-msg": "oxide.trailers"}
MARKER = "# oxide-managed:"
CHAIN_SUFFIX = ".pre-oxide"
PRIOR_HASHES: tuple[str, ...] = ()  # hashes of earlier shim templates (all are recognised by MARKER)


def template() -> str:
    return resources.files("oxide_git").joinpath("resources/hook-tmpl").read_text()


def template_hash() -> str:
    return hashlib.sha256(template().encode()).hexdigest()[:16]


def render(hook: str, python: str) -> str:
    if "'" in python:
        raise OxideError(f"cannot install hooks for a Python path with a quote: {python}")
    return (template().replace("__HASH__", template_hash()).replace("__HOOK__", hook)
            .replace("__PYTHON__", python))


def hooks_dir(repo: Repo) -> Path:
    """Where git runs hooks from for this worktree."""
    r = subprocess.run(["git", "rev-parse", "--git-path", "hooks"], cwd=repo.workdir,
                       capture_output=True, text=True, env=clean_git_env())
    if r.returncode != 0:
        raise OxideError(f"cannot find the hooks folder: {r.stderr.strip()}")
    p = Path(r.stdout.strip())
    return p if p.is_absolute() else (repo.workdir / p)


def is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return MARKER.encode() in f.read(200)
    except OSError:
        return False


@dataclass
class HookState:
    hook: str
    state: str  # installed, outdated, foreign, missing, "not needed" (on demand, setting off)
    chained: str | None = None  # the hook we run first, if any
    python: str | None = None


@dataclass
class HooksReport:
    hooks_dir: str
    hooks: list[HookState] = field(default_factory=list)
    enabled: bool = True
    initialised: bool = True
    pending_jobs: int = 0
    actions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"hooks_dir": self.hooks_dir, "enabled": self.enabled, "initialised": self.initialised,
                "pending_jobs": self.pending_jobs, "actions": self.actions,
                "hooks": [h.__dict__ for h in self.hooks]}


def _write_shim(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.oxide-tmp")
    tmp.write_text(text)
    tmp.chmod(0o755)
    os.replace(tmp, path)


def _config_true(repo: Repo, key: str) -> bool:
    r = subprocess.run(["git", "config", "--bool", key], cwd=repo.workdir, capture_output=True,
                       text=True, env=clean_git_env())
    return r.stdout.strip() == "true"


def needed(repo: Repo) -> tuple[str, ...]:
    """The hook types this repository needs now (``ON_DEMAND`` ones only when their setting is on)."""
    return tuple(h for h in HOOK_TYPES if h not in ON_DEMAND or _config_true(repo, ON_DEMAND[h]))


def install(repo: Repo, python: str | None = None, types: tuple[str, ...] | None = None) -> HooksReport:
    """Put a shim for each hook type; an existing foreign hook is moved aside and chained.

    Without ``types``: every hook this repository needs, and an on-demand shim that is no longer
    needed is removed (its chained hook put back).
    """
    python = python or sys.executable
    d = hooks_dir(repo)
    d.mkdir(parents=True, exist_ok=True)
    report = HooksReport(str(d))
    if types is None:
        types = needed(repo)
        unneeded = tuple(h for h in ON_DEMAND if h not in types and is_ours(d / h))
        for a in uninstall(repo, unneeded).actions:
            report.actions.append(f"{a} (needed only with {ON_DEMAND[unneeded[0]]} true)")
        for hook, key in ON_DEMAND.items():
            if hook not in types:
                report.actions.append(f"{hook} is not needed while {key} is off (the first commit "
                                      f"after `git config {key} true` installs it)")
    for hook in types:
        p, aside = d / hook, d / (hook + CHAIN_SUFFIX)
        if (p.exists() or p.is_symlink()) and not is_ours(p):
            if aside.exists() or aside.is_symlink():
                raise Refused(f"{p} is not git oxide's and {aside.name} already exists",
                              hint="move one of them away, then run `git oxide hooks install` again")
            os.rename(p, aside)
            report.actions.append(f"moved {hook} to {aside.name} (it runs first)")
        _write_shim(p, render(hook, python))
        report.actions.append(f"installed {hook}")
    return report


def uninstall(repo: Repo, types: tuple[str, ...] = HOOK_TYPES) -> HooksReport:
    """Remove our shims and put back the hooks they chained, exactly as they were."""
    d = hooks_dir(repo)
    report = HooksReport(str(d))
    for hook in types:
        p, aside = d / hook, d / (hook + CHAIN_SUFFIX)
        if is_ours(p):
            p.unlink()
            report.actions.append(f"removed {hook}")
        elif p.exists() and (aside.exists() or aside.is_symlink()):
            report.actions.append(f"left {hook} (not git oxide's) and {aside.name} in place")
            continue
        if (aside.exists() or aside.is_symlink()) and not (p.exists() or p.is_symlink()):
            os.rename(aside, p)
            report.actions.append(f"restored {hook} from {aside.name}")
    return report


def _python_of(path: Path) -> str | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith("PY='"):
                return line[4:-1]
    except OSError:
        return None
    return None


def status(repo: Repo) -> HooksReport:
    d = hooks_dir(repo)
    report = HooksReport(str(d), initialised=repo.initialised)
    r = subprocess.run(["git", "config", "--bool", "oxide.enabled"], cwd=repo.workdir,
                       capture_output=True, text=True, env=clean_git_env())
    report.enabled = r.stdout.strip() != "false"
    current = template_hash()
    for hook in HOOK_TYPES:
        p, aside = d / hook, d / (hook + CHAIN_SUFFIX)
        chained = aside.name if (aside.exists() or aside.is_symlink()) else None
        if is_ours(p):
            state = "installed" if current in p.read_text()[:200] else "outdated"
            report.hooks.append(HookState(hook, state, chained, _python_of(p)))
        elif p.exists():
            report.hooks.append(HookState(hook, "foreign", chained))
        elif hook in ON_DEMAND and not _config_true(repo, ON_DEMAND[hook]):
            report.hooks.append(HookState(hook, "not needed", chained))
        else:
            report.hooks.append(HookState(hook, "missing", chained))
    report.pending_jobs = hook_queue.pending(repo.oxide_dir)
    return report
