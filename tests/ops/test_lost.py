"""Issue 39: `doctor` finds messages in a log's history alone, and `doctor --fix` puts them back.

The damaged store is made the way main made it: a pull fast-forwarded A's session to B's merge,
whose tree was B's (A's message gone from the tip), and A's next import wrote its next line at
the cursor's place, over B's last message."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from oxide_git.cli import main
from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.ops import lost
from oxide_git.ops.undo import undo
from oxide_git.store import writes as store
from oxide_git.store.reindex import reindex
from tests.conftest import NOW_MS, git, make_ctx
from tests.ops.test_share import SID, clones, say, texts  # noqa: F401 - the fixture


def damaged(a: Path, b: Path) -> None:
    say(a, "m0", "m1")
    _cli(a, "push")
    _pull(b)
    store.append(make_ctx(a, NOW_MS + 10), Session(SID, "claude"),
                 [Message("user", (Part.text("a2"),), created_at=NOW_MS + 10)])
    store.append(make_ctx(b, NOW_MS + 20), Session(SID, "claude"),
                 [Message("user", (Part.text(t),), created_at=NOW_MS + 20 + i) for i, t in enumerate(["b2", "b3"])])
    git(a, "fetch", "-q", str(b), f"{refs.session_ref(SID)}:refs/b-line")
    ref = refs.session_ref(SID)
    ours = git(a, "rev-parse", ref).strip()
    theirs = git(a, "rev-parse", "refs/b-line").strip()
    tree = git(a, "rev-parse", f"{theirs}^{{tree}}").strip()
    merge = git(a, "commit-tree", tree, "-p", ours, "-p", theirs, "-m",
                f"pull origin: merge diverged session\n\nOxide-Session: {SID}").strip()
    git(a, "update-ref", ref, merge, ours)  # main's fast-forward to B's merge
    git(a, "update-ref", "-d", "refs/b-line")
    ctx = make_ctx(a, NOW_MS + 30)
    reindex(ctx)
    # main's next import: A's next line at the cursor's place (seq 3), over B's "b3"
    store.save(ctx, Session(SID, "claude"), {3: Message("user", (Part.text("a3"),), created_at=NOW_MS + 30)},
               summary="import 1 message(s) from claude")


def _pull(root: Path) -> None:
    _cli(root, "pull")


def _cli(root: Path, *args: str, code: int = 0) -> str:
    import os

    cwd = Path.cwd()
    os.chdir(root)
    try:
        r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert r.exit_code == code, r.output
    return r.output


def test_doctor_finds_messages_in_history_alone_and_fix_puts_them_back(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, _bare = clones
    damaged(a, b)
    assert texts(a) == ["m0", "m1", "b2", "a3"]  # "a2" and "b3": in the log's history alone
    out = _cli(a, "doctor", code=1)
    assert "error: 2 message(s) of 1 session(s) are in their log's history but at no tip" in out
    report = json.loads(_cli(a, "doctor", "--json"))
    [finding] = [f for f in report["findings"] if "history" in f["message"]]
    assert finding["sessions"] == {SID: 2}
    fixed = json.loads(_cli(a, "doctor", "--fix", "--json"))
    [finding] = [f for f in fixed["findings"] if "history" in f["message"]]
    assert finding["level"] == "fixed" and len(finding["forks"]) == 2
    every = {t for f in finding["forks"] for t in texts(a, f["fork"])}
    assert {"a2", "b3"} <= every
    listed = {r["id"]: r for r in json.loads(_cli(a, "list", "--all", "--json"))}
    assert all(listed[f["fork"]]["parent_id"] == SID for f in finding["forks"])
    assert "ok: the store is consistent" in _cli(a, "doctor")
    assert lost.find(make_ctx(a)) == []
    undo(make_ctx(a, NOW_MS + 99))  # the forks are journaled: undo takes them away again
    assert len(lost.find(make_ctx(a))) == 1


def test_a_rewind_is_not_a_loss(clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    a, b, _bare = clones
    damaged(a, b)
    _cli(a, "doctor", "--fix")
    ctx = make_ctx(a, NOW_MS + 50)
    store.save(ctx, Session(SID, "claude"), {}, summary="rewind to 0123456789ab", truncate_at=3)
    assert texts(a) == ["m0", "m1", "b2"]
    assert lost.find(make_ctx(a)) == []


def test_what_a_rewind_dropped_is_not_lost_though_a_fork_s_history_holds_it(
        clones: tuple[Path, Path, Path]) -> None:  # noqa: F811
    from oxide_git.ops.fork import fork

    a, b, _bare = clones
    damaged(a, b)
    _cli(a, "doctor", "--fix")
    ctx = make_ctx(a, NOW_MS + 60)
    fork(ctx, SID, at=ctx.index.query("SELECT id FROM messages WHERE session_id=? AND seq=2", (SID,))[0][0])
    store.save(make_ctx(a, NOW_MS + 70), Session(SID, "claude"), {}, summary="rewind to 0123456789ab",
               truncate_at=2)
    assert texts(a) == ["m0", "m1"]
    assert lost.find(make_ctx(a)) == []  # "b2", "a3": in the fork's history, dropped on purpose
