"""Install, remove and inspect git oxide's git hook shims (``git oxide hooks ...``).

Shims go where git looks (``git rev-parse --git-path hooks``: core.hooksPath, Husky and linked
worktrees included). A hook already there is moved aside as ``<hook>.pre-oxide`` and chained.
A folder that is the team's (in the worktree and tracked, ``hooks_layout``) is left as it is
unless ``tracked``: then the shims written there are portable (`git oxide` from PATH).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from oxide_git.core.errors import OxideError, Refused
from oxide_git.git.repo import Repo, clean_git_env
from oxide_git.hooks import queue as hook_queue
from oxide_git.hooks.layout import ON_SETTING, TEAM_HOOKS, Layout, calls_oxide, layout, team_lines

HOOK_TYPES = ("pre-commit", "prepare-commit-msg", "post-commit", "post-checkout", "post-rewrite",
              "pre-push")
# Installed only while `git config oxide.trailers` is true: every installed hook costs a commit a
# /bin/sh start (~1.5 ms) even with oxide disabled. The pre-commit shim installs it when it sees
# trailers turned on (before git looks for it), and `hooks install` removes it when they are off.
ON_DEMAND = {"prepare-commit-msg": "oxide.trailers"}
MARKER = "# oxide-managed:"
CHAIN_SUFFIX = ".pre-oxide"
PRIOR_HASHES: tuple[str, ...] = ()  # hashes of earlier shim templates (all are recognised by MARKER)
PORTABLE_NOTE = " (portable: runs `git oxide` from PATH)"


def template() -> str:
    return resources.files("oxide_git").joinpath("resources/hook-tmpl").read_text()


def template_hash() -> str:
    return hashlib.sha256(template().encode()).hexdigest()[:16]


# A portable shim runs `git oxide hook-impl` from PATH where the shim runs this machine's Python.
_PORTABLE = (("PY='__PYTHON__'\n", ""), ('[ -x "$PY" ] || PY=python3\n', ""),
             ('"$PY" -m oxide_git.hooks.impl', "git oxide hook-impl"))


def render(hook: str, python: str | None) -> str:
    """The shim for ``hook``: naming ``python``, or portable (None: no path of this machine)."""
    text = template().replace("__HASH__", template_hash()).replace("__HOOK__", hook)
    if python is None:
        for old, new in _PORTABLE:
            text = text.replace(old, new)
        return text
    if "'" in python:
        raise OxideError(f"cannot install hooks for a Python path with a quote: {python}")
    return text.replace("__PYTHON__", python)


def is_portable(path: Path) -> bool:
    """Is ``path`` a portable shim of ours (``hooks install --tracked``)?"""
    try:
        return is_ours(path) and "git oxide hook-impl" in path.read_text()
    except OSError:
        return False


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
    portable: bool = False  # runs `git oxide` from PATH (``install(tracked=True)``)


@dataclass
class HooksReport:
    hooks_dir: str
    hooks: list[HookState] = field(default_factory=list)
    enabled: bool = True
    initialised: bool = True
    pending_jobs: int = 0
    actions: list[str] = field(default_factory=list)
    folder: str = "private"  # whose the folder is: private, ignored, tracked (``hooks_layout``)
    manager: str = "plain"  # husky, lefthook, plain
    layout: str = ""  # the folder's case, said in words
    team_lines: list[str] = field(default_factory=list)  # for the team's hooks, when nothing was written
    written: bool = True  # did install write anything?

    def to_dict(self) -> dict[str, object]:
        return {"hooks_dir": self.hooks_dir, "enabled": self.enabled, "initialised": self.initialised,
                "pending_jobs": self.pending_jobs, "actions": self.actions, "folder": self.folder,
                "manager": self.manager, "layout": self.layout, "team_lines": self.team_lines,
                "hooks": [h.__dict__ for h in self.hooks]}


def _report(d: Path, lay: Layout, *, initialised: bool = True, written: bool = True) -> HooksReport:
    return HooksReport(str(d), initialised=initialised, folder=lay.case, manager=lay.manager,
                       layout=lay.describe(), written=written)


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


def install(repo: Repo, python: str | None = None, types: tuple[str, ...] | None = None,
            tracked: bool = False) -> HooksReport:
    """Put a shim for each hook type; an existing foreign hook is moved aside and chained.

    Without ``types``: every hook this repository needs, and an on-demand shim that is no longer
    needed is removed (its chained hook put back). A folder that is the team's is left as it is
    (the report says what to add to the team's hooks) unless ``tracked``, or unless its shims are
    portable already (an on-demand shim joins them): then every shim written is portable.
    """
    d = hooks_dir(repo)
    lay = layout(repo, d)
    portable = tracked or is_portable(d / "pre-commit")
    if (lay.teams and not portable) or lay.case == "generated":  # Husky 9's own: never ours to write
        return _left_alone(d, lay)
    shim_python = None if portable else (python or sys.executable)
    d.mkdir(parents=True, exist_ok=True)
    report = _report(d, lay)
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
        _write_shim(p, render(hook, shim_python))
        report.actions.append(f"installed {hook}{PORTABLE_NOTE if portable else ''}")
    if lay.manager == "lefthook" and not lay.teams:
        report.actions.append("lefthook.yml is here: `lefthook install` may replace these shims; "
                              "`git oxide hooks status` shows the lines to put in lefthook.yml instead")
    return report


def _left_alone(d: Path, lay: Layout) -> HooksReport:
    """The report of an install into the team's folder: nothing written, what to add instead."""
    report = _report(d, lay, written=False)
    report.team_lines = team_lines(lay)
    report.actions.append(f"changed nothing in {lay.describe()}")
    ours = [h for h in HOOK_TYPES if is_ours(d / h)]
    if ours:
        report.actions.append(f"git oxide's shims naming this machine's Python are there already "
                              f"({', '.join(ours)}): `git oxide hooks uninstall` takes them out")
    return report


def uninstall(repo: Repo, types: tuple[str, ...] = HOOK_TYPES) -> HooksReport:
    """Remove our shims and put back the hooks they chained, exactly as they were."""
    d = hooks_dir(repo)
    report = _report(d, layout(repo, d))
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
    lay = layout(repo, d)
    report = _report(d, lay, initialised=repo.initialised)
    r = subprocess.run(["git", "config", "--bool", "oxide.enabled"], cwd=repo.workdir,
                       capture_output=True, text=True, env=clean_git_env())
    report.enabled = r.stdout.strip() != "false"
    current = template_hash()
    for hook in HOOK_TYPES:
        p, aside = d / hook, d / (hook + CHAIN_SUFFIX)
        chained = aside.name if (aside.exists() or aside.is_symlink()) else None
        if is_ours(p):
            state = "installed" if current in p.read_text()[:200] else "outdated"
            report.hooks.append(HookState(hook, state, chained, _python_of(p), is_portable(p)))
        elif calls_oxide(lay, hook):
            report.hooks.append(HookState(hook, "team's hook runs git oxide", chained))
        elif p.exists():
            report.hooks.append(HookState(hook, "foreign", chained))
        elif hook in ON_DEMAND and not _config_true(repo, ON_DEMAND[hook]):
            report.hooks.append(HookState(hook, "not needed", chained))
        else:
            report.hooks.append(HookState(hook, "missing", chained))
    report.pending_jobs = hook_queue.pending(repo.oxide_dir)
    wired = {h.hook for h in report.hooks if h.state not in ("missing", "foreign")}
    if lay.manager == "lefthook":  # lefthook.yml is where the team's hooks belong, shims or not
        wired = {h.hook for h in report.hooks if h.state == "team's hook runs git oxide"}
    if (lay.teams or lay.manager == "lefthook") and not wired >= set(TEAM_HOOKS):
        report.team_lines = team_lines(lay, skip=wired)
    return report


def summary(repo: Repo) -> str:
    """The hooks in one line (``doctor``): whose folder it is, and how many hooks run git oxide."""
    try:
        st = status(repo)
    except OxideError as e:
        return f"unknown ({e.message})"
    runs = {h.hook for h in st.hooks if h.state not in ("missing", "foreign", "not needed")}
    shims = any(h.portable for h in st.hooks) or st.folder not in ("tracked", "generated")
    need = set(needed(repo)) if shims else (
        {*TEAM_HOOKS, *(h for h, key in ON_SETTING.items() if _config_true(repo, key))})
    told = "" if need <= runs else (" (`git oxide hooks install` adds them)" if shims else
                                    " (`git oxide hooks status` says what to add to the team's hooks)")
    return f"{st.layout}; {len(runs & need)} of the {len(need)} hooks run git oxide{told}"
