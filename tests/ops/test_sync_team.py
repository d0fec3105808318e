"""Issue 39: teammates continuing one session on their clones lose no message when they sync.

The issue's own sequence, the smallest sequence that lost a message on main, and a hypothesis
state machine over talk/push/pull/fork/rewind/undo/rm on two or three clones (``sync_team``);
a short budget here, a long one under ``slow`` (300 examples; ``OXIDE_SYNC_EXAMPLES`` sets it, 20 with
OXIDE_RELIABILITY_QUICK).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.sync_team import Team, examples

ISSUE_RUN = ("A talk, A pull, B push, A pull, B push, A talk, B push, B push, B pull, B fork, B talk, B pull, "
             "A push, B talk, B pull, B push, A fork, A pull, A push, A talk, A talk, A talk, A push, A fork, "
             "B fork, A pull, A talk, A push, A talk, A pull")


def joined(tmp_path: Path, n: int = 2) -> Team:
    """A imported the session and pushed it; the others pulled it (and their agents took it up)."""
    team = Team(tmp_path, n)
    team.push(0)
    for i in range(1, n):
        team.pull(i)
    return team


def test_the_issues_run_keeps_every_message(tmp_path: Path) -> None:
    team = joined(tmp_path)
    team.run(ISSUE_RUN)
    for side in "ABAB":  # then pull; push on A, B, A, B and pull on both
        team.run(f"{side} pull, {side} push")
    team.run("A pull, B pull")
    team.check_all_kept()
    b_said = [t for t in team.said if t.startswith("B")]
    for c in team.clones:  # the message B said at its second talk, which main lost, among them
        held = {t for texts in team.family(c).values() for t in texts}
        assert set(b_said) <= held


def test_an_import_after_a_pull_never_puts_a_message_where_another_one_was(tmp_path: Path) -> None:
    """The shortest loss on main: B's answer 2 was overwritten on A by A's next line, at the same seq."""
    team = joined(tmp_path)
    team.run("A talk, B talk, B talk, B push, A pull, A push, B pull, A talk, A push, B pull")
    team.sync()
    a = team.texts(team.clones[0])
    assert a is not None and len(a) == len(set(a))


def test_an_unchanged_transcript_is_read_again_when_its_session_was_replaced(tmp_path: Path) -> None:
    """The cursor belongs to what the tip holds: a log replaced (here by hand, as main's pull did)
    brings the transcript's lines back on the next import, though the file did not change."""
    from oxide_git.imports import importing
    from oxide_git.store.reindex import reindex
    from tests.conftest import git, make_ctx

    team = joined(tmp_path)
    team.run("A talk, A talk")
    a = team.clones[0]
    first = git(a.root, "rev-list", "--max-parents=0", f"refs/oxide/sessions/{team.sid}").strip()
    git(a.root, "update-ref", f"refs/oxide/sessions/{team.sid}", first)  # the log as after the first talk
    ctx = make_ctx(a.root)
    reindex(ctx)  # as every command that moves a log does
    report = importing.import_file(ctx, "claude", a.transcript)
    ctx.close()
    assert report.state == "changed"
    assert team.texts(a) == [t for t in team.said if t.startswith("A")]


class TeamMachine(RuleBasedStateMachine):
    """Random interleavings on two or three clones; every sync checks that nothing was lost."""

    tmp: Path
    runs = 0

    @initialize(n=st.integers(2, 3))
    def start(self, n: int) -> None:
        TeamMachine.runs += 1
        self.team = joined(self.tmp / f"run{TeamMachine.runs}", n)

    def who(self, data: st.DataObject) -> int:
        return data.draw(st.integers(0, len(self.team.clones) - 1))

    @rule(data=st.data())
    def talk(self, data: st.DataObject) -> None:
        self.team.talk(self.who(data))

    @rule(data=st.data())
    def push(self, data: st.DataObject) -> None:
        self.team.push(self.who(data))

    @rule(data=st.data())
    def pull(self, data: st.DataObject) -> None:
        self.team.pull(self.who(data))

    @rule(data=st.data())
    def fork(self, data: st.DataObject) -> None:
        self.team.fork(self.who(data))

    @rule(data=st.data())
    def rewind(self, data: st.DataObject) -> None:
        self.team.rewind(self.who(data))

    @rule(data=st.data())
    def undo(self, data: st.DataObject) -> None:
        self.team.undo(self.who(data))

    @rule(data=st.data())
    def rm(self, data: st.DataObject) -> None:
        self.team.rm(self.who(data))

    @rule()
    def sync(self) -> None:
        self.team.sync()

    @invariant()
    def nothing_lost_once_synced(self) -> None:
        pass  # checked by every sync and at the end (``teardown``)

    def teardown(self) -> None:
        if hasattr(self, "team"):
            self.team.sync()


def _run(tmp_path: Path, n: int, steps: int) -> None:
    TeamMachine.tmp = tmp_path
    TeamMachine.runs = 0
    TeamMachine.TestCase.settings = settings(
        max_examples=n, stateful_step_count=steps, deadline=None, derandomize=n <= 10,
        suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.reuse, Phase.generate])
    TeamMachine.TestCase().runTest()


def test_random_interleavings_lose_nothing(tmp_path: Path) -> None:
    _run(tmp_path, 4, 14)


@pytest.mark.slow
def test_many_random_interleavings_lose_nothing(tmp_path: Path) -> None:
    _run(tmp_path, examples() or 300, 40)
