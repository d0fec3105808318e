"""``blame_memo``: what a blame works out of immutable inputs, kept across runs. A kept entry gives
the answer the memo-less blame gives (every blame of test_blame*.py checks that, ``exact_blame``);
here: a damaged memo is ignored, a change to anything an interval's explanation reads is a new
key, a new checkpoint adds only its own intervals, a blame loads neither pygit2 nor the model (its
diffs by `git diff`, its calls' messages as plain values), and one from the memo nor the payloads."""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from oxide_git.blame import memo as blame_memo
from oxide_git.blame.lookups import Lookups
from oxide_git.blame.memo import MAGIC, Memo
from tests.blame.test_blame_history import commit, work  # noqa: F401 - the fixture
from tests.blame_helpers import Clock, FakeAgent, exact_blame, lines_of, memo_file
from tests.conftest import git, make_ctx
from tests.imports.test_import_cost import unmeasured

SID = "0" * 12 + "a" * 20


def _history(repo: Path, turns: int = 3) -> tuple[Clock, FakeAgent]:
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    text = "start\n"
    a.prompt("write notes")
    a.write("notes.txt", text)
    for i in range(turns):
        a.prompt(f"turn {i}")
        a.edit("notes.txt", "start\n", f"start\nturn {i}\n")
    a.say("done")
    return clock, a


def _blame(repo: Path, clock: Clock, **env: str):  # type: ignore[no-untyped-def]
    from oxide_git.blame.attribution import blame_file

    ctx = make_ctx(repo, clock.tick())
    ctx.environ.update(env)
    try:
        return lines_of(blame_file(ctx, "notes.txt"))
    finally:
        ctx.close()


def _tables(repo: Path) -> dict[str, dict[object, object]]:
    data = memo_file(repo).read_bytes()
    _head, tables = marshal.loads(data[len(MAGIC) + 20:])
    return tables  # type: ignore[no-any-return]


def test_the_memo_holds_each_kind_and_a_blame_from_it_is_the_same(repo: Path) -> None:
    clock, _ = _history(repo)
    want = _blame(repo, clock, OXIDE_BLAME_MEMO="0")
    assert not memo_file(repo).exists()  # turned off: neither read nor written
    assert _blame(repo, clock) == want
    tables = _tables(repo)
    assert tables["steps"] and tables["diffs"] and tables["paths"]
    assert [ln["who"] for ln in want] == ["agent"] * 4
    assert _blame(repo, clock) == want


@pytest.mark.parametrize("damage", ["empty", "garbage", "truncated", "flipped", "other code", "not tables"])
def test_a_damaged_or_foreign_memo_is_ignored(repo: Path, damage: str) -> None:
    clock, _ = _history(repo)
    want = _blame(repo, clock, OXIDE_BLAME_MEMO="0")
    _blame(repo, clock)
    path = memo_file(repo)
    data = path.read_bytes()
    body = data[len(MAGIC) + 20:]
    head, tables = marshal.loads(body)
    if damage == "empty":
        new = b""
    elif damage == "garbage":
        new = b"\x00\xff" * 100
    elif damage == "truncated":
        new = data[:len(data) // 2]
    elif damage == "flipped":  # one byte of a kept entry: its sum no longer matches
        at = len(data) - 30
        new = data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]
    else:
        other = marshal.dumps(((0, "another version"), tables) if damage == "other code" else (head, [1, 2]))
        new = MAGIC + blame_memo.digest_of(other) + other
    path.write_bytes(new)
    assert Memo(str(path)).tables == {t: {} for t in blame_memo.TABLES}
    assert _blame(repo, clock) == want  # worked out again, and kept again
    assert _tables(repo).keys() == tables.keys() and _tables(repo)["steps"]


def _index(repo: Path, clock: Clock, sql: str) -> None:
    ctx = make_ctx(repo, clock.t)
    try:
        with ctx.index.write() as conn:
            conn.execute(sql)
    finally:
        ctx.close()


@pytest.mark.parametrize("change", ["agent renamed", "call failed", "log gone", "checkpoint gone"])
def test_a_change_to_what_an_interval_reads_is_a_new_key(repo: Path, change: str) -> None:
    """The memo filled before the change is not served after it: the answer is the memo-less
    one, and differs from before."""
    clock, _ = _history(repo)
    before = _blame(repo, clock)
    if change == "agent renamed":
        _index(repo, clock, "UPDATE sessions SET agent='codex'")
    elif change == "call failed":
        _index(repo, clock, "UPDATE parts SET is_error=1 WHERE type='tool_result'")
    elif change == "log gone":
        git(repo, "update-ref", "-d", f"refs/oxide/sessions/{SID}")
    else:  # the timeline loses the checkpoint the last turn started at
        _index(repo, clock, "DELETE FROM checkpoints WHERE created_at=(SELECT max(created_at) FROM checkpoints)")
    ctx = make_ctx(repo, clock.tick())
    try:
        after = lines_of(exact_blame(ctx, "notes.txt"))
    finally:
        ctx.close()
    assert after != before


def test_one_new_checkpoint_adds_only_its_intervals(repo: Path) -> None:
    clock, a = _history(repo, turns=5)
    _blame(repo, clock)
    kept = _tables(repo)
    a.prompt("one more")
    a.edit("notes.txt", "start\n", "start\nthe last\n")
    _blame(repo, clock)
    now = _tables(repo)
    assert set(kept["steps"]) <= set(now["steps"])
    # only the one it opened: the one it closed (the last edit, now in it) ends at the new
    # checkpoint instead of the clock, with the same calls in it, which is all explain reads of it
    assert len(now["steps"]) - len(kept["steps"]) == 1
    ctx = make_ctx(repo, clock.tick())
    try:
        exact_blame(ctx, "notes.txt")
    finally:
        ctx.close()


def test_short_ids_are_libgit2s(repo: Path) -> None:
    """Commit abbreviations without pygit2: the shortest prefix from core.abbrev that no other
    object shares, loose, packed or both, as libgit2 gives them (4 digits: many shared)."""
    g = pygit2.Repository(str(repo))
    ids = [str(g.create_blob(f"blob {i}\n".encode())) for i in range(1500)]
    git(repo, "repack", "-q", "-a")  # half packed, half loose
    ids += [str(g.create_blob(f"loose {i}\n".encode())) for i in range(1500)]
    git(repo, "config", "core.abbrev", "4")
    g = pygit2.Repository(str(repo))
    objects = Lookups(str(repo / ".git"), Memo(None))
    lengths = set()
    for oid in ids:
        ours = objects.short_id(oid, 4)
        assert ours == g[oid].short_id, oid
        lengths.add(len(ours or ""))
    assert lengths >= {4, 5}
    assert objects.short_id("0" * 40) is None


_RUN = ("import sys, os; os.chdir(sys.argv[1]); sys.argv = ['git-oxide', 'blame', sys.argv[2]]\n"
        "import oxide_git.entry as e\n"
        "def stop(code):\n    raise SystemExit(code)\ne._exit_now = stop\n"
        "try:\n    e.main()\nfinally:\n    sys.stdout.flush()\n    sys.stderr.write(' '.join(sys.modules))")
# what no blame needs to replay a call: the model's dataclasses and the codec that builds them
_MODEL = {"oxide_git.core.codec", "oxide_git.core.model", "oxide_git.agents.events", "dataclasses"}


def _console(repo: Path, rel: str = "notes.txt") -> tuple[str, set[str]]:
    """`git oxide blame rel` (no kept answer) in a process: its output and the modules it loaded."""
    p = subprocess.run([sys.executable, "-c", _RUN, str(repo), rel], capture_output=True, text=True,
                       env={**unmeasured(), "OXIDE_BLAME_CACHE": "0"})
    assert p.returncode == 0, p.stderr
    return p.stdout, set(p.stderr.split())


def test_a_blame_from_the_memo_loads_no_pygit2(work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    repo, _, a = work
    a.write("notes.txt", "start\nturn 0\nturn 1\n")
    a.prompt("rename a line")
    a.edit("notes.txt", "turn 0\n", "turn zero\n")  # a changed line: git's diff, not only trimming
    commit(repo, "-m", "notes")
    first, loaded = _console(repo)
    assert "oxide_git.core.payload" in loaded  # the calls replayed, the diffs worked out by `git diff`
    assert not {"pygit2", *_MODEL} & loaded
    again, loaded = _console(repo)
    assert again == first and not {"pygit2", "oxide_git.core.payload", "oxide_git.agents", *_MODEL} & loaded
    assert "(claude" in again
    readme, loaded = _console(repo, "README.md")  # a line older than oxide: its commit, abbreviated
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert readme.startswith(root[:7] + " (before oxide") and "pygit2" not in loaded


def test_a_blame_after_a_new_turn_loads_neither_pygit2_nor_the_model(
        work: tuple[Path, Clock, FakeAgent]) -> None:  # noqa: F811
    """The usual blame after a change: the memo lacks one turn. Its call is replayed from the
    message's plain values (``payload``)."""
    repo, _, a = work
    a.write("notes.txt", "start\nturn 0\n")
    commit(repo, "-m", "notes")
    _console(repo)  # the memo of the history so far
    a.prompt("add a line")
    a.edit("notes.txt", "turn 0\n", "turn 0\nturn 1\n")
    commit(repo, "-m", "more notes")
    after, loaded = _console(repo)
    assert {"oxide_git.core.payload", "oxide_git.agents.file_effects"} <= loaded  # the new call replayed
    assert not {"pygit2", *_MODEL} & loaded
    assert after.splitlines()[-1].endswith("turn 1") and "(claude" in after.splitlines()[-1]
    assert after == _console(repo)[0]


def test_a_set_core_abbrev_is_libgit2s_to_read(repo: Path) -> None:
    from oxide_git.blame.attribution import blame_file

    root = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    git(repo, "config", "core.abbrev", "10")
    ctx = make_ctx(repo, Clock().tick())
    try:
        res = blame_file(ctx, "README.md")
        assert res.id(res.lines[0].commit) == root[:10]
    finally:
        ctx.close()
