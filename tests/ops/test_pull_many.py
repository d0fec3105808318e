"""A pull of many new refs (a teammate's year of sessions): one wildcard refspec fetches them, as
git matches n exact refspecs in n^2 time; a name under them that is not ours, or a ref the remote
cannot send, brings back exact refspecs, so the guards hold (``remote_refs``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from oxide_git.git import refs
from tests.conftest import git, oxide
from tests.ops.test_share import SID, say
from tests.ops.test_share_edges import clones  # noqa: F401  (a fixture)

MANY = 100  # more than WILDCARD_FROM
MIRRORS = "refs/oxide/remotes/origin/sessions/"


def _many(a: Path, bare: Path) -> list[str]:
    """``MANY`` more session refs on the remote, each at the tip of the one `a` pushed."""
    say(a, "x")
    oxide(a, "push")
    tip = git(bare, "rev-parse", refs.session_ref(SID)).strip()
    names = [refs.session_ref(f"{i:012x}" + "c" * 20) for i in range(1, MANY + 1)]
    subprocess.run(["git", "update-ref", "--stdin"], cwd=bare, check=True, text=True,
                   input="".join(f"create {n} {tip}\n" for n in names))
    return [refs.session_ref(SID), *names]


def _pull(b: Path, trace: Path, monkeypatch: pytest.MonkeyPatch) -> dict:  # type: ignore[type-arg]
    monkeypatch.setenv("GIT_TRACE_PACKET", str(trace))
    try:
        return json.loads(oxide(b, "pull", "--json").stdout)
    finally:
        monkeypatch.delenv("GIT_TRACE_PACKET")


def _asked(trace: Path) -> list[str]:
    """The ref prefixes each `git fetch` asked the remote for (protocol v2 ``ref-prefix``)."""
    return [ln.rsplit("ref-prefix ", 1)[1] for ln in trace.read_text().splitlines()
            if "fetch> ref-prefix refs/oxide/" in ln]


def _mirrored(b: Path) -> list[str]:
    return git(b, "for-each-ref", "--format=%(refname)", MIRRORS).split()


def test_many_new_refs_come_with_one_wildcard_refspec(clones: tuple[Path, Path, Path],  # noqa: F811
                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, bare = clones
    names = _many(a, bare)
    res = _pull(b, tmp_path / "trace", monkeypatch)
    assert _asked(tmp_path / "trace") == [refs.SESSIONS]  # one refspec, not one per ref
    assert _mirrored(b) == sorted(MIRRORS + n.removeprefix(refs.SESSIONS) for n in names)
    assert res["updated"] == {refs.session_ref(SID): "new"}  # the copies are refused one by one
    assert len(res["problems"]) == MANY


def test_a_name_that_is_not_ours_keeps_its_objects_out(clones: tuple[Path, Path, Path],  # noqa: F811
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, bare = clones
    names = _many(a, bare)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=bare, check=True, text=True,
                          capture_output=True, input="only the hostile ref holds this\n").stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=bare, check=True, text=True, capture_output=True,
                          input=f"100644 blob {blob}\tx\n").stdout.strip()
    evil = git(bare, "commit-tree", tree, "-m", "evil").strip()
    git(bare, "update-ref", f"{refs.SESSIONS}not.an.id", evil)
    res = _pull(b, tmp_path / "trace", monkeypatch)
    asked = _asked(tmp_path / "trace")
    assert refs.SESSIONS not in asked and len(asked) == len(names)  # exact refspecs, every one
    assert _mirrored(b) == sorted(MIRRORS + n.removeprefix(refs.SESSIONS) for n in names)
    assert f"origin {refs.SESSIONS}not.an.id: not a session id, left alone" in res["problems"]
    assert subprocess.run(["git", "cat-file", "-e", blob], cwd=b).returncode != 0  # never fetched


def test_a_wildcard_fetch_that_fails_finds_the_ref_that_cannot_come(
        clones: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    a, b, bare = clones
    names = _many(a, bare)
    bad = "0" * 12 + "9" * 20
    (bare / "refs" / "oxide" / "sessions" / bad).write_text("ab" * 20 + "\n")  # an object it lacks
    res = _pull(b, tmp_path / "trace", monkeypatch)
    assert _asked(tmp_path / "trace")[0] == refs.SESSIONS  # the wildcard was tried first
    assert _mirrored(b) == sorted(MIRRORS + n.removeprefix(refs.SESSIONS) for n in names)
    [problem] = [p for p in res["problems"] if bad in p]
    assert problem.startswith(f"origin {refs.session_ref(bad)}: cannot be fetched, left alone (")


def test_the_remotes_trash_oplog_and_mirrors_are_passed_over_in_silence(
        clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    """A remote pushed to with --mirror holds every ref of a store: its trash, its watch oplog
    and its own mirrors of other remotes are not shared and say nothing; a ref under
    refs/oxide/ that git oxide never writes is named."""
    a, b, bare = clones
    say(a, "x")
    oxide(a, "push")
    tip = git(bare, "rev-parse", refs.session_ref(SID)).strip()
    for name in (f"{refs.TRASH}sessions/{SID}.1", f"{refs.OPLOG}main", f"refs/oxide/remotes/up/sessions/{SID}",
                 "refs/oxide/other"):
        git(bare, "update-ref", name, tip)
    res = json.loads(oxide(b, "pull", "--json").stdout)
    assert res["problems"] == ["origin refs/oxide/other: not a ref git oxide shares, left alone"]
    assert _mirrored(b) == [MIRRORS + SID]


def test_the_reason_given_is_gits_first_error_not_its_aborting_line() -> None:
    from oxide_git.ops.remote_refs import _reason

    said = "warning: redirecting to x\nremote: counting\nerror: object abc is missing\nfatal: aborting fetch\n"
    assert _reason(said) == "object abc is missing"
    assert _reason("remote: only this\n") == "only this"
    assert _reason("") == "git fetch failed"


def test_a_ref_that_cannot_come_any_more_keeps_what_was_fetched_of_it(
        clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, bare = clones
    say(a, "x")
    oxide(a, "push")
    oxide(b, "pull")
    before = git(b, "rev-parse", MIRRORS + SID).strip()
    (bare / "refs" / "oxide" / "sessions" / SID).write_text("ab" * 20 + "\n")  # now at an object it lacks
    res = json.loads(oxide(b, "pull", "--json").stdout)
    [problem] = res["problems"]
    assert problem.startswith(f"origin {refs.session_ref(SID)}: cannot be fetched, left alone (")
    assert git(b, "rev-parse", MIRRORS + SID).strip() == before  # its mirror is not pruned


def test_a_remote_whose_every_ref_fails_is_refused_after_a_bounded_number_of_fetches(
        clones: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    _a, b, bare = clones
    folder = bare / "refs" / "oxide" / "sessions"
    folder.mkdir(parents=True)
    for i in range(1, 81):  # 80 refs, each at an object the remote lacks
        (folder / (f"{i:012x}" + "b" * 20)).write_text("ab" * 20 + "\n")
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    r = oxide(b, "pull", check=False)
    monkeypatch.delenv("GIT_TRACE")
    assert r.returncode != 0 and "fetch from 'origin' failed" in r.stderr
    fetches = trace.read_text().count("built-in: git fetch")
    # the wildcard, then halvings until 64 of them failed: not the 159 that finding each bad ref costs
    assert 64 < fetches <= 1 + 2 * 64
    assert _mirrored(b) == []
