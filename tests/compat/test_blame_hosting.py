"""`git oxide blame` of real agents' work through what happens to it after the turns (issue 37,
items 2 and 3): the commit right after the last turn, a rewind and an undo, and what hosting does
to a pull request (a squash merge, a rebase merge, a teammate's clone).

Issue 37's run, for each agent: turn 1 writes ``calc.py`` (10 lines), the user edits line 3, turn
2 changes line 7 with the agent's own edit tool. Claude Code is captured by its hooks (`init
--agent-hooks claude`: a checkpoint as each prompt is submitted, one as each turn stops), Codex by
`watch` (whose prompt checkpoint may come after the turn's first edits). Every line must be the
session's, of the right prompt, except line 3, the user's. The results go to the compatibility
results (``python -m tests.compat.report``), beside test_blame.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from . import checks
from .conftest import make_driver
from .driver import Driver
from .modelserver import ModelServer, Turn
from .test_blame import blame_lines, diagnosis, git, idle, prompt_checkpoints, prompt_ids, score, wait_for

AGENTS = ("claude", "codex")
P1, P2 = "CALC-1", "CALC-2"
PROMPT1 = f"{P1}: write calc.py with ten lines."
PROMPT2 = f"{P2}: change line 7 of calc.py."
CALC = "".join(f"line {i} = {i}\n" for i in range(1, 11))
MINE = CALC.replace("line 3 = 3", "line 3 = mine")
SEVEN = MINE.replace("line 7 = 7", "line 7 = seven")
# (text, who, which prompt): line 3 is the user's, line 7 turn 2's, the others turn 1's
WANT: list[tuple[str, str, str | None]] = [
    (t, "human", None) if i == 3 else (t, "agent", "2" if i == 7 else "1")
    for i, t in enumerate(SEVEN.splitlines(), 1)]


def _script(d: Driver) -> dict[str, list[Turn]]:
    calc = d.repo / "calc.py"
    if d.name == "codex":
        def patch(body: str) -> Turn:
            return Turn.tool("apply_patch", {"input": f"*** Begin Patch\n{body}*** End Patch\n"})
        one = [patch("*** Add File: calc.py\n" + "".join(f"+{x}\n" for x in CALC.splitlines()))]
        two = [patch("*** Update File: calc.py\n@@\n line 6 = 6\n-line 7 = 7\n+line 7 = seven\n line 8 = 8\n")]
    else:
        one = [Turn.write(str(calc), CALC)]
        # Claude Code and Qwen Code edit only a file read since it last changed (the user changed it)
        read = {"claude": "Read", "qwen": "read_file"}.get(d.name)
        two = [*([Turn.tool(read, {"file_path": str(calc)})] if read else []),
               Turn.edit(str(calc), "line 7 = 7", "line 7 = seven")]
    return {P1: [*one, Turn.say("calc.py is written.")], P2: [*two, Turn.say("Line 7 is changed.")]}


@dataclass
class Run:
    """Issue 37's two turns, done: the session and its two prompts' message ids."""

    agent: str
    version: str
    repo: Path
    sid: str
    prompts: list[str]

    def score(self, case: str, got: list[dict[str, Any]], want: list[tuple[str, str, str | None]] = WANT,
              rel: str = "calc.py", *extra: str) -> list[str]:
        misses = score(self.agent, self.version, case, got, want, self.sid, self.prompts)
        return [*misses, diagnosis(self.repo, self.sid, rel, *extra)] if misses else []


def two_turns(agent: str, repo: Path, server: ModelServer, *, git_hooks: bool = False,
              after_turn1: Callable[[], None] | None = None,
              after_turn2: Callable[[], None] | None = None) -> Run:
    """Turn 1 writes calc.py, the user edits line 3, turn 2 changes line 7. ``after_turn1`` runs
    before the user's edit, ``after_turn2`` as soon as the agent has exited (`watch` still
    running)."""
    d = make_driver(agent, repo, server)
    server.script.update(_script(d))
    watching = agent == "codex"
    if agent == "gemini":  # it runs a project's hooks only in a folder the user trusted
        (d.home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(repo): "TRUST_FOLDER"}))
    if watching:
        checks.oxide(repo, "init")
        checks.oxide(repo, "checkpoint", "-m", "the worktree before this session")
        checks.oxide(repo, "watch", "--daemon")
        wait_for("watch to start", lambda: (repo / ".git" / "oxide" / "watch.pid").exists())
    else:
        checks.oxide(repo, "init", "--agent-hooks", agent)
    if git_hooks:
        checks.oxide(repo, "hooks", "install")
    try:
        first = d.run(PROMPT1).check()
        native = first.native_id
        assert native, first.stdout[-2000:]
        if watching:
            wait_for("watch's checkpoint of the first prompt", lambda: len(prompt_checkpoints(repo)) >= 1)
        assert (repo / "calc.py").read_text() == CALC
        if after_turn1:
            after_turn1()
        time.sleep(0.05)  # the user edits after the turn (a later millisecond than its last call)
        (repo / "calc.py").write_text(MINE)
        d.resume(native, PROMPT2).check()
        if after_turn2:
            after_turn2()
        if watching:
            wait_for("watch's checkpoint of the second prompt", lambda: len(prompt_checkpoints(repo)) >= 2)
    finally:
        if watching:
            checks.oxide(repo, "watch", "--stop", check=False)
    assert (repo / "calc.py").read_text() == SEVEN
    return found(agent, d.pin.version, repo)


def found(agent: str, version: str, repo: Path) -> Run:
    checks.oxide(repo, "import")
    [row] = [r for r in checks.oxide_json(repo, "list", "--all") if r["agent"] == agent]
    prompts = prompt_ids(repo, row["id"], (P1, P2))
    assert len(prompts) == 2, prompts
    return Run(agent, version, repo, row["id"], prompts)


@pytest.fixture
def real_dates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits dated now, as a user's are (the suite pins them to 2026-01-01): a commit without a
    checkpoint of its own closes the interval after the last one at its time."""
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")


def _commit(repo: Path, message: str, *, hooks: bool = True) -> str:
    git(repo, "add", "calc.py")
    git(repo, *([] if hooks else ["-c", "core.hooksPath=/dev/null"]), "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


# item 2: the last turn before a commit -----------------------------------------------------------


@pytest.mark.parametrize("wait", [0, 2], ids=["at-once", "after-2s"])
@pytest.mark.parametrize("agent", AGENTS)
def test_the_last_turn_before_a_commit(agent: str, wait: int, compat_repo: Path, model_server: ModelServer,
                                       real_dates: None) -> None:
    """The user commits as the agent exits, or two seconds later (no git hooks: the commit closes
    the last turn's interval)."""
    def commit() -> None:
        time.sleep(wait)
        _commit(compat_repo, "calc")

    run = two_turns(agent, compat_repo, model_server, after_turn2=commit)
    case = "calc.py committed as turn 2 ends" if not wait else f"calc.py committed {wait} s after turn 2"
    got = blame_lines(compat_repo, "calc.py")
    misses = run.score(case, got)
    assert not misses, "\n".join(misses)
    assert got[6]["commit"] and got[6]["agent"] == agent  # line 7 through the commit, not the worktree


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
def test_the_last_turn_before_a_commit_by_other_agents_hooks(
        agent: str, compat_repo: Path, model_server: ModelServer, real_dates: None) -> None:
    """Gemini CLI and Qwen Code captured by their own hooks (`init --agent-hooks AGENT`), whose
    turn-end events (AfterAgent, Stop) import the session and take no checkpoint (as of this
    test): the user's line 3 is in the interval of turn 1's calls (replayed, it stays theirs), and
    the commit closes turn 2's."""
    run = two_turns(agent, compat_repo, model_server, after_turn2=lambda: _commit(compat_repo, "calc"))
    kinds = [c["kind"] for c in checks.oxide_json(compat_repo, "checkpoints")]
    misses = run.score("calc.py committed as turn 2 ends", blame_lines(compat_repo, "calc.py"))
    assert not misses, "\n".join(misses) + f"\ncheckpoints: {kinds}"


# item 2: lines a rewind or an undo put back -----------------------------------------------------


def _cp_of(repo: Path, marker: str) -> str:
    """The checkpoint Claude Code's hook took as the prompt holding ``marker`` was submitted."""
    [cp] = [c["id"] for c in prompt_checkpoints(repo) if str(c.get("message")).startswith(marker)]
    return str(cp)


def test_lines_a_rewind_or_an_undo_put_back(compat_repo: Path, model_server: ModelServer,
                                            real_dates: None) -> None:
    """Claude Code: a rewind to turn 2's prompt puts turn 1's line 7 back, `undo` puts turn 2's
    back; a rewind to before turn 1 (no calc.py) and `undo` put every line back."""
    run = two_turns("claude", compat_repo, model_server)
    repo = compat_repo
    before2, before1 = _cp_of(repo, P2), _cp_of(repo, P1)
    misses: list[str] = []
    checks.oxide(repo, "rewind", before2, "--yes")
    assert (repo / "calc.py").read_text() == MINE  # as turn 1 and the user left it
    misses += run.score("calc.py rewound to turn 2's prompt", blame_lines(repo, "calc.py"),
                        [(t, w, "1" if w == "agent" else None) for t, w, _p in WANT[:6]]
                        + [("line 7 = 7", "agent", "1")] + WANT[7:])
    checks.oxide(repo, "undo", "--yes")
    assert (repo / "calc.py").read_text() == SEVEN
    misses += run.score("calc.py, that rewind undone", blame_lines(repo, "calc.py"))
    checks.oxide(repo, "rewind", before1, "--yes")
    assert not (repo / "calc.py").exists()
    checks.oxide(repo, "undo", "--yes")
    assert (repo / "calc.py").read_text() == SEVEN
    misses += run.score("calc.py, a rewind to before turn 1 undone", blame_lines(repo, "calc.py"))
    _commit(repo, "calc", hooks=False)
    misses += run.score("calc.py committed after the undo", blame_lines(repo, "calc.py"))
    assert not misses, "\n".join(misses)


# item 3: what hosting does to a pull request ----------------------------------------------------


def _noted(repo: Path, rev: str) -> bool:
    """Whether ``rev`` has a note on refs/notes/oxide (the git hooks wrote one)."""
    return subprocess.run(["git", "notes", "--ref=oxide", "list", rev], cwd=repo, capture_output=True).returncode == 0


def _teammate_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Teammate\n\temail = teammate@example.com\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "XDG_"))}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return env


def _as(env: dict[str, str], cwd: Path, *argv: str) -> str:
    r = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"{' '.join(argv)} exited {r.returncode}:\n{r.stderr}\n{r.stdout}"
    return r.stdout


@pytest.mark.parametrize("agent", AGENTS)
def test_through_what_hosting_does_to_a_pull_request(agent: str, compat_repo: Path, model_server: ModelServer,
                                                     tmp_path: Path, real_dates: None) -> None:
    """The turns committed on a branch with the git hooks (turn 1's commit, then the user's line 3
    and turn 2's line 7 in a second), main moved on meanwhile; then, as a host does it (no hooks,
    so no notes): a squash merge onto main, a rebase merge (each commit picked onto main), and a
    teammate's clone of the remote after `push --checkpoints` / `pull --checkpoints`."""
    repo = compat_repo
    git(repo, "checkout", "-q", "-b", "feature")
    commits: list[str] = []

    def commit_turn1() -> None:
        checks.oxide(repo, "import")
        [row] = [r for r in checks.oxide_json(repo, "list", "--all") if r["agent"] == agent]
        checks.oxide(repo, "switch", row["id"])
        commits.append(_commit(repo, "calc.py"))

    run = two_turns(agent, repo, model_server, git_hooks=True, after_turn1=commit_turn1)
    commits.append(_commit(repo, "line 7"))
    idle(repo)
    misses = run.score("calc.py on the pull request's branch", blame_lines(repo, "calc.py"))
    # main moved on while the pull request was open
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("hello\nfrom a teammate\n")
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "a teammate's change")
    base = git(repo, "rev-parse", "HEAD").strip()
    # a rebase merge: each commit picked onto main, as the host does it (no hooks, no notes)
    git(repo, "checkout", "-q", "-b", "rebased", base)
    git(repo, "-c", "core.hooksPath=/dev/null", "cherry-pick", *commits)
    assert not _noted(repo, "HEAD") and not _noted(repo, "HEAD~1") and _noted(repo, commits[1])
    misses += run.score("calc.py rebase-merged (no hooks)", blame_lines(repo, "calc.py"))
    # a squash merge onto main
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--squash", "feature")
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "calc (#1)")
    assert not _noted(repo, "HEAD")
    misses += run.score("calc.py squash-merged (no hooks)", blame_lines(repo, "calc.py"))
    # a teammate's clone of the remote: the checkpoints pushed and pulled
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main", "feature", "rebased")
    checks.oxide(repo, "push", "origin", "--checkpoints")
    env = _teammate_env(tmp_path / "teammate-home")
    clone = tmp_path / "teammate"
    _as(env, tmp_path, "git", "clone", "-q", str(bare), str(clone))
    _as(env, clone, "git", "oxide", "init")
    _as(env, clone, "git", "oxide", "pull", "origin", "--checkpoints")
    for case, rev in (("a teammate's clone: squash-merged", "main"), ("a teammate's clone: the branch", "origin/feature"),
                      ("a teammate's clone: rebase-merged", "origin/rebased")):
        doc = json.loads(_as(env, clone, "git", "oxide", "blame", "calc.py", "--json", "--rev", rev))
        assert doc["checkpoints_missing"] is None, doc["checkpoints_missing"]
        misses += score(run.agent, run.version, case, doc["lines"], WANT, run.sid, run.prompts)
    assert not misses, "\n".join(misses)
