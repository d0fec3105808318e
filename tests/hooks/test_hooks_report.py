"""What `git oxide hooks install|uninstall|status` do and say, exactly: the on-demand hook with
oxide.trailers on and off, a hooks folder that does not exist yet, oxide turned off, a hook the
user put over ours in the middle of the list, a dangling link where our shim was, and the shim's
own version mark (how an upgrade tells its shims from older ones) and mode."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from oxide_git.git.repo import find_repo
from oxide_git.hooks import install as hooks
from tests.conftest import git, oxide

ALL = list(hooks.HOOK_TYPES)
ALWAYS = [h for h in ALL if h not in hooks.ON_DEMAND]


def _install(repo: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(oxide(repo, "hooks", "install", "--json").stdout)


def _states(repo: Path) -> dict[str, str]:
    return {h["hook"]: h["state"] for h in json.loads(oxide(repo, "hooks", "status", "--json").stdout)["hooks"]}


def test_install_says_what_it_did_with_trailers_off_and_on(repo: Path) -> None:
    off = _install(repo)
    assert off["actions"] == [
        "prepare-commit-msg is not needed while oxide.trailers is off (the first commit after "
        "`git config oxide.trailers true` installs it)"] + [f"installed {h}" for h in ALWAYS]
    assert (off["enabled"], off["initialised"]) == (True, True)
    git(repo, "config", "oxide.trailers", "true")
    on = _install(repo)
    assert on["actions"] == [f"installed {h}" for h in ALL]  # nothing removed, nothing "not needed"
    assert _states(repo)["prepare-commit-msg"] == "installed"
    assert _install(repo)["actions"] == [f"installed {h}" for h in ALL]  # again: the same
    git(repo, "config", "oxide.trailers", "false")
    assert _install(repo)["actions"][0] == "removed prepare-commit-msg (needed only with oxide.trailers true)"
    assert _states(repo)["prepare-commit-msg"] == "not needed"


def test_a_hooks_folder_several_levels_deep_is_made(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".config/git/hooks")
    (repo / ".git" / "info").mkdir(exist_ok=True)  # ignored: this clone's own (else the team's)
    (repo / ".git" / "info" / "exclude").write_text(".config/\n")
    _install(repo)
    assert all((repo / ".config" / "git" / "hooks" / h).is_file() for h in ALWAYS)


def test_status_says_when_oxide_is_turned_off(repo: Path) -> None:
    oxide(repo, "init")
    git(repo, "config", "oxide.enabled", "false")
    st = json.loads(oxide(repo, "hooks", "status", "--json").stdout)
    assert st["enabled"] is False
    assert "oxide: disabled (oxide.enabled=false)" in oxide(repo, "hooks", "status").stdout


def test_uninstall_goes_on_past_a_hook_the_user_put_over_ours(repo: Path) -> None:
    d = repo / ".git" / "hooks"
    d.mkdir(parents=True, exist_ok=True)
    (d / "pre-commit").write_text("#!/bin/sh\necho original\n")
    _install(repo)
    (d / "pre-commit").write_text("#!/bin/sh\necho the user's, over ours\n")  # the first of the list
    out = json.loads(oxide(repo, "hooks", "uninstall", "--json").stdout)
    assert out["actions"] == ["left pre-commit (not git oxide's) and pre-commit.pre-oxide in place"] + [
        f"removed {h}" for h in ALWAYS if h != "pre-commit"]
    assert not [h for h in ALWAYS if h != "pre-commit" and (d / h).exists()]


def test_a_dangling_link_where_our_shim_was_keeps_the_chained_hook_beside_it(repo: Path) -> None:
    d = repo / ".git" / "hooks"
    d.mkdir(parents=True, exist_ok=True)
    (d / "post-commit").write_text("#!/bin/sh\necho original\n")
    r = find_repo(repo)
    hooks.install(r, types=("post-commit",))
    (d / "post-commit").unlink()
    os.symlink(d / "nowhere", d / "post-commit")  # the user's link, to a file not there (yet)
    assert hooks.uninstall(r, ("post-commit",)).actions == []
    assert os.readlink(d / "post-commit") == str(d / "nowhere")
    assert (d / "post-commit.pre-oxide").read_text() == "#!/bin/sh\necho original\n"


def test_a_shim_carries_the_sixteen_character_mark_of_its_template(repo: Path) -> None:
    _install(repo)
    mark = hashlib.sha256(hooks.template().encode()).hexdigest()[:16]
    path = repo / ".git" / "hooks" / "post-commit"
    shim = path.read_text()
    assert shim.splitlines()[1] == f"{hooks.MARKER} {mark}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o755  # as git's own sample hooks
    (repo / ".git" / "hooks" / "post-commit").write_text(shim.replace(mark, "0" * 16))  # an older release's
    assert _states(repo)["post-commit"] == "outdated"
