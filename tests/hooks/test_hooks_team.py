"""`hooks install` must not rewrite a team's tracked hooks (issue 38, item 4): a hooks folder the
team commits (Husky's .husky, a tracked .githooks, lefthook's) is left as it is, the line for each
hook is printed (`git oxide hook HOOK "$@"`, from PATH), and `--tracked` writes portable shims."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oxide_git.git.repo import find_repo
from oxide_git.hooks import install as hooks
from tests.conftest import git, oxide
from tests.hooks.test_hooks import idle, make_session, note

HUSKY_PRE_COMMIT = '#!/usr/bin/env sh\n. "$(dirname -- "$0")/_/husky.sh"\n\necho lint >> "$(git rev-parse --git-dir)/ran"\n'
HUSKY_SH = "#!/usr/bin/env sh\n# husky 8's helper\n"


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """git-oxide on PATH, as on a teammate's machine (the team's hooks name no path)."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])


def husky(repo: Path) -> Path:
    """Husky 8's layout: core.hooksPath=.husky, a tracked .husky/pre-commit sourcing _/husky.sh."""
    d = repo / ".husky"
    (d / "_").mkdir(parents=True)
    (d / "_" / ".gitignore").write_text("*\n")
    (d / "_" / "husky.sh").write_text(HUSKY_SH)
    (d / "pre-commit").write_text(HUSKY_PRE_COMMIT)
    (d / "pre-commit").chmod(0o755)
    git(repo, "add", ".husky")
    git(repo, "commit", "-q", "-m", "husky")
    git(repo, "config", "core.hooksPath", ".husky")
    return d


def folder_state(d: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(d)): (p.read_bytes(), p.stat().st_mode) for p in sorted(d.rglob("*")) if p.is_file()}


def test_husky_install_changes_nothing_and_prints_the_line_for_each_hook(repo: Path) -> None:
    """What the user did: `git oxide hooks install` in a repository that uses Husky."""
    d = husky(repo)
    before, status_before = folder_state(d), git(repo, "status", "--porcelain", "--untracked-files=all")
    r = oxide(repo, "hooks", "install")
    assert folder_state(d) == before  # not renamed, no shim beside it
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == status_before == ""
    assert "changed nothing in .husky: Husky's folder in the worktree, the team's (1 tracked file(s))" in r.stderr
    assert "--tracked" in r.stderr and "Installed git oxide hooks" not in r.stderr
    lines = r.stdout.splitlines()
    assert '  .husky/pre-commit          git oxide hook pre-commit "$@"' in lines
    assert '  .husky/post-rewrite        git oxide hook post-rewrite "$@"' in lines
    assert sys.executable not in r.stdout and str(repo) not in r.stdout  # nothing of this machine
    st = json.loads(oxide(repo, "hooks", "status", "--json").stdout)
    assert (st["folder"], st["manager"]) == ("tracked", "husky") and st["team_lines"]
    assert "the team's" in json.loads(oxide(repo, "doctor", "--json").stdout)["hooks"]
    out = json.loads(oxide(repo, "hooks", "install", "--json").stdout)
    assert out["folder"] == "tracked" and out["team_lines"] and out["hooks"] == []
    r = oxide(repo, "init", "--hooks")  # the same through init
    assert 'git oxide hook post-commit "$@"' in r.stdout and "changed nothing in .husky" in r.stderr
    assert folder_state(d) == before and git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_lines_husky_runs_record_commits_with_git_oxide_on_path(repo: Path, on_path: None) -> None:
    """The team adds the printed lines: a commit gets its checkpoint and note, an amend keeps it."""
    d = husky(repo)
    oxide(repo, "init")
    with open(d / "pre-commit", "a") as f:
        f.write('git oxide hook pre-commit "$@"\n')
    for hook in ("post-commit", "post-rewrite", "post-checkout"):
        (d / hook).write_text(f'#!/usr/bin/env sh\ngit oxide hook {hook} "$@"\n')
        (d / hook).chmod(0o755)
    sid = make_session(repo)
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "through husky")
    assert (repo / ".git" / "ran").read_text() == "lint\n"  # the team's hook ran as before
    first = note(repo)
    assert first["sessions"] == [sid] and len(first["checkpoints"]) == 1
    git(repo, "commit", "-q", "--amend", "-m", "amended")
    amended = note(repo)  # post-rewrite carried the first commit's note (and pre-commit took another)
    assert set(first["checkpoints"]) < set(amended["checkpoints"]) and amended["rewritten"] == "amend"
    git(repo, "checkout", "-q", "-b", "other")
    idle(repo)
    checkouts = (repo / ".git" / "oxide" / "worktrees" / "main" / "checkouts.jsonl").read_text()
    assert json.loads(checkouts.splitlines()[-1])["branch"] == "other"
    st = {h["hook"]: h["state"] for h in json.loads(oxide(repo, "hooks", "status", "--json").stdout)["hooks"]}
    assert st["pre-commit"] == st["post-rewrite"] == "team's hook runs git oxide"
    summary = json.loads(oxide(repo, "doctor", "--json").stdout)["hooks"]
    assert summary.endswith("; 4 of the 4 hooks run git oxide")
    git(repo, "config", "oxide.push", "true")
    assert json.loads(oxide(repo, "doctor", "--json").stdout)["hooks"].endswith(
        "; 4 of the 5 hooks run git oxide (`git oxide hooks status` says what to add to the team's hooks)")


# Husky 9's generated .husky/_/h (abridged): a hook runs the team's .husky/<its own name>.
HUSKY9_H = """#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
[ "${HUSKY-}" = "0" ] && exit 0
sh -e "$s" "$@"
c=$?
[ $c != 0 ] && echo "husky - $n script failed (code $c)"
exit $c
"""


def test_husky_9_its_generated_folder_is_left_and_the_lines_go_to_the_scripts(repo: Path, on_path: None) -> None:
    """core.hooksPath=.husky/_ (ignored, written again by `husky`): chaining there would make Husky
    look for .husky/pre-commit.pre-oxide and run none of the team's hooks."""
    d = repo / ".husky"
    (d / "_").mkdir(parents=True)
    (d / "_" / ".gitignore").write_text("*\n")
    (d / "_" / "h").write_text(HUSKY9_H)
    for hook in ("pre-commit", "post-commit", "post-checkout", "post-rewrite", "pre-push"):
        (d / "_" / hook).write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
        (d / "_" / hook).chmod(0o755)
    (d / "pre-commit").write_text('echo lint >> "$(git rev-parse --git-dir)/ran"\n')
    git(repo, "add", ".husky")
    git(repo, "commit", "-q", "-m", "husky 9")
    git(repo, "config", "core.hooksPath", ".husky/_")
    before = folder_state(d)
    for args in (("hooks", "install"), ("hooks", "install", "--tracked")):
        r = oxide(repo, *args)
        assert folder_state(d) == before and git(repo, "status", "--porcelain") == ""
    assert "changed nothing in .husky/_: Husky 9's folder" in r.stderr and "--tracked" not in r.stderr
    assert [ln.split() for ln in r.stdout.splitlines() if ln.startswith("  .husky/pre-commit ")] == [
        [".husky/pre-commit", "git", "oxide", "hook", "pre-commit", '"$@"']]
    oxide(repo, "init")
    with open(d / "pre-commit", "a") as f:
        f.write('git oxide hook pre-commit "$@"\n')
    (d / "post-commit").write_text('git oxide hook post-commit "$@"\n')
    sid = make_session(repo)
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "through husky 9")
    assert (repo / ".git" / "ran").read_text() == "lint\n"
    n = note(repo)
    assert n["sessions"] == [sid] and len(n["checkpoints"]) == 1
    st = json.loads(oxide(repo, "hooks", "status", "--json").stdout)
    assert st["folder"] == "generated" and {h["hook"]: h["state"] for h in st["hooks"]}["post-commit"] == (
        "team's hook runs git oxide")
    assert [ln.split()[0] for ln in st["team_lines"][1:]] == [  # what is still missing (trailers: off)
        ".husky/post-checkout", ".husky/post-rewrite", ".husky/pre-push"]


def test_a_plain_tracked_folder_is_left_and_tracked_writes_portable_shims(repo: Path, on_path: None) -> None:
    d = repo / ".githooks"
    d.mkdir()
    (d / "pre-commit").write_text('#!/bin/sh\necho team >> "$(git rev-parse --git-dir)/ran"\n')
    (d / "pre-commit").chmod(0o755)
    git(repo, "add", ".githooks")
    git(repo, "commit", "-q", "-m", "team hooks")
    git(repo, "config", "core.hooksPath", ".githooks")
    r = oxide(repo, "hooks", "install")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert [ln.split() for ln in r.stdout.splitlines() if ln.startswith("  .githooks/post-commit ")] == [
        [".githooks/post-commit", "git", "oxide", "hook", "post-commit", '"$@"']]
    r = oxide(repo, "hooks", "install", "--tracked")
    assert "installed post-commit (portable: runs `git oxide` from PATH)" in r.stderr
    for hook in ("pre-commit", "post-commit", "post-rewrite"):
        text = (d / hook).read_text()
        assert "git oxide hook-impl" in text and "oxide_git.hooks.impl" not in text
        assert sys.executable not in text and str(repo) not in text and "PY=" not in text
    assert (d / "pre-commit.pre-oxide").exists()  # the team's own hook, chained
    st = json.loads(oxide(repo, "hooks", "status", "--json").stdout)
    assert all(h["portable"] and h["python"] is None for h in st["hooks"] if h["state"] == "installed")
    assert st["team_lines"] == []
    sid = make_session(repo)
    (repo / "g.txt").write_text("g\n")
    git(repo, "add", "g.txt")
    git(repo, "commit", "-q", "-m", "through portable shims")
    assert (repo / ".git" / "ran").read_text() == "team\n"
    n = note(repo)
    assert n["sessions"] == [sid] and len(n["checkpoints"]) == 1
    # trailers turned on: the portable pre-commit shim adds prepare-commit-msg, portable too
    git(repo, "config", "oxide.trailers", "true")
    (repo / "h.txt").write_text("h\n")
    git(repo, "add", "h.txt")
    git(repo, "commit", "-q", "-m", "with a trailer")
    assert f"Oxide-Session: {sid}" in git(repo, "log", "-1", "--format=%B")
    assert hooks.is_portable(d / "prepare-commit-msg")


def test_a_folder_in_the_worktree_that_git_does_not_ignore_is_the_teams_too(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", "myhooks")
    r = find_repo(repo)
    rep = hooks.install(r)
    assert not rep.written and not (repo / "myhooks").exists() and rep.folder == "tracked"
    assert "not ignored: what is written there is committed by the next `git add -A`" in rep.layout
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("myhooks/\n")
    rep = hooks.install(r)  # ignored: never committed, so the shims go there
    assert rep.written and rep.folder == "ignored" and (repo / "myhooks" / "post-commit").is_file()
    assert "ignored by git (never committed)" in hooks.status(r).layout


def test_old_shims_in_a_team_folder_are_named_and_uninstall_takes_them_out(repo: Path) -> None:
    """A folder today's main wrote machine-path shims into: install says so, uninstall cleans."""
    d = husky(repo)
    r = find_repo(repo)
    git(repo, "config", "core.hooksPath", str(repo / ".git" / "hooks"))  # as if written before
    old = hooks.install(r, types=("post-commit",))
    (repo / ".git" / "hooks" / "post-commit").rename(d / "post-commit")
    git(repo, "config", "core.hooksPath", ".husky")
    assert old.written
    rep = hooks.install(r)
    assert not rep.written and rep.actions[1] == (
        "git oxide's shims naming this machine's Python are there already (post-commit): "
        "`git oxide hooks uninstall` takes them out")
    hooks.uninstall(r)
    assert not (d / "post-commit").exists() and git(repo, "status", "--porcelain") == ""


def test_lefthook_gets_its_snippet(repo: Path) -> None:
    (repo / "lefthook.yml").write_text("pre-commit:\n  commands:\n    lint:\n      run: echo lint\n")
    d = repo / ".hooks"
    d.mkdir()
    (d / "pre-commit").write_text("#!/bin/sh\nlefthook run pre-commit\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lefthook")
    git(repo, "config", "core.hooksPath", ".hooks")
    r = oxide(repo, "hooks", "install")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    out = r.stdout.splitlines()
    assert out[0] == "add to lefthook.yml (then `lefthook install`):"
    at = out.index("  post-rewrite:")
    assert out[at:at + 5] == ["  post-rewrite:", "    commands:", "      git-oxide:",
                              "        run: git oxide hook post-rewrite {0}", "        use_stdin: true"]
    with open(repo / "lefthook.yml", "a") as f:
        f.write("post-commit:\n  commands:\n    git-oxide:\n      run: git oxide hook post-commit {0}\n")
    st = {h["hook"]: h["state"] for h in hooks.status(find_repo(repo)).to_dict()["hooks"]}  # type: ignore[union-attr]
    assert st["post-commit"] == "team's hook runs git oxide"
    # lefthook's shims in this clone's own folder: installed (chained), with a word on lefthook.yml
    git(repo, "config", "--unset", "core.hooksPath")
    rep = hooks.install(find_repo(repo))
    assert rep.written and "lefthook.yml is here" in rep.actions[-1]
    assert hooks.status(find_repo(repo)).team_lines[0] == "add to lefthook.yml (then `lefthook install`):"


@pytest.mark.process
def test_git_oxide_hook_runs_the_shims_work(repo: Path, on_path: None) -> None:
    """`git oxide hook` for the hooks that do not queue: trailers, pre-push, and a bad name."""
    r = subprocess.run(["git", "oxide", "hook", "no-such-hook"], cwd=repo, capture_output=True, text=True)
    assert r.returncode == 0 and "git oxide hook: expected one of pre-commit," in r.stderr  # never fails git
    oxide(repo, "init")
    sid = make_session(repo)
    msg = repo / ".git" / "MSG"
    msg.write_text("subject\n")
    git(repo, "config", "oxide.trailers", "true")
    oxide(repo, "hook", "prepare-commit-msg", str(msg), "message")
    assert f"Oxide-Session: {sid}" in msg.read_text()
    git(repo, "config", "oxide.push", "true")
    (repo / ".git" / "oxide" / "push-error").write_text("rejected\n")
    r = oxide(repo, "hook", "pre-push", "nowhere", "nowhere")
    assert r.returncode == 0 and "the last background push of sessions failed" in r.stderr
    from oxide_git.hooks.entry import main

    assert main([]) == 0 and main(["pre-commit", "x"]) == 0  # never fails git
