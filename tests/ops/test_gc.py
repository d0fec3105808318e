"""Retention: expiry with an injected clock, pins, linked checkpoints, gc, then git gc and fsck."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from oxide_git.git import refs
from oxide_git.ops.browse import list_checkpoints
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.gc import DAY, HOUR, gc, thin
from oxide_git.store import retention
from tests.conftest import NOW_MS, fsck_clean, git, make_ctx, oxide


def test_parse_duration() -> None:
    assert retention.parse_duration("90s") == 90_000
    assert retention.parse_duration("12h") == 12 * HOUR
    assert retention.parse_duration("30d") == 30 * DAY
    assert retention.parse_duration("never") is None
    with pytest.raises(retention.BadDuration):
        retention.parse_duration("soon")


def _refs(repo: Path, prefix: str) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", prefix).split()


def test_expiry_pin_link_and_gc_then_git_gc(repo: Path) -> None:
    git(repo, "config", "oxide.checkpointTTL", "2d")
    ctx = make_ctx(repo)
    (repo / "a.txt").write_text("only in the expiring checkpoint\n" * 50)
    old = checkpoint(ctx, text="old")
    (repo / "a.txt").write_text("pinned version\n")
    pinned = checkpoint(make_ctx(repo, NOW_MS + 1), text="pinned")
    (repo / "a.txt").write_text("linked version\n")
    linked = checkpoint(make_ctx(repo, NOW_MS + 2), text="linked")
    # a note on the (reachable) HEAD commit names the linked checkpoint, as the hooks write it
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "notes", "--ref", "refs/notes/oxide", "add", "-m",
        json.dumps({"sessions": [], "checkpoints": [linked.id]}), head)
    retention.pin(ctx, pinned.id[:10])

    rows = {r["id"]: r for r in list_checkpoints(make_ctx(repo, NOW_MS + DAY))}
    assert rows[old.id]["expiry"] == "expires in 1 day"
    assert rows[pinned.id]["pinned"] and rows[pinned.id]["expiry"] == "pinned"
    assert rows[linked.id]["linked"]

    # one day in: nothing is old enough
    assert gc(make_ctx(repo, NOW_MS + DAY)).removed == 0
    later = make_ctx(repo, NOW_MS + 3 * DAY)
    rows = {r["id"]: r for r in list_checkpoints(later)}
    assert rows[old.id]["expiry"] == "expired: code rewind no longer possible"
    assert not rows[pinned.id]["expired"] and not rows[linked.id]["expired"]
    out = oxide(repo, "checkpoints", check=True).stdout
    assert "EXPIRY" in out

    dry = gc(later, dry_run=True)
    assert [c["id"] for c in dry.checkpoints] == [old.id] and dry.freed_bytes > 0
    assert old.ref in _refs(repo, refs.CHECKPOINTS)
    res = gc(make_ctx(repo, NOW_MS + 3 * DAY))
    assert [c["id"] for c in res.checkpoints] == [old.id]
    assert res.kept == {"pinned": 1, "linked": 1}
    left = _refs(repo, refs.CHECKPOINTS)
    assert old.ref not in left and pinned.ref in left and linked.ref in left
    assert old.id not in {r["id"] for r in list_checkpoints(make_ctx(repo, NOW_MS + 3 * DAY))}

    git(repo, "gc", "--prune=now", "-q")
    fsck_clean(repo)
    g = pygit2.Repository(str(repo))
    assert g.get(old.id) is None
    # rewinding to it says that it expired, and when
    from oxide_git.core.errors import NotFound
    from oxide_git.ops.rewind import rewind

    with pytest.raises(NotFound) as e:
        rewind(make_ctx(repo, NOW_MS + 4 * DAY), old.id[:12])
    assert "expired" in e.value.message and "2026-01-04" in e.value.message
    assert g.get(pinned.id) is not None and g.get(linked.id) is not None

    # unpinned, the pinned one expires too; the linked one stays while HEAD reaches its commit
    retention.pin(ctx, pinned.id, on=False)
    res = gc(make_ctx(repo, NOW_MS + 3 * DAY))
    assert [c["id"] for c in res.checkpoints] == [pinned.id]
    assert _refs(repo, refs.CHECKPOINTS) == [linked.ref]


def test_never_ttl_and_cli(repo: Path) -> None:
    git(repo, "config", "oxide.checkpointTTL", "never")
    cp = checkpoint(make_ctx(repo))
    assert gc(make_ctx(repo, NOW_MS + 1000 * DAY)).removed == 0
    r = oxide(repo, "pin", cp.id[:8], "--json")
    assert json.loads(r.stdout)["pinned"] is True
    r = oxide(repo, "gc", "--dry-run", "--json")
    assert json.loads(r.stdout)["checkpoints"] == []
    oxide(repo, "unpin", cp.id[:8])
    assert _refs(repo, retention.PINS) == []


def test_trash_emptied_after_its_ttl(repo: Path) -> None:
    ctx = make_ctx(repo)
    cp = checkpoint(ctx)
    g = ctx.repo.git
    refs.update(g, {f"{refs.TRASH}{NOW_MS}/sessions/x": (None, pygit2.Oid(hex=cp.id))}, "t")
    refs.update(g, {f"{refs.TRASH}{NOW_MS + 10 * DAY}/sessions/y": (None, pygit2.Oid(hex=cp.id))}, "t")
    res = gc(make_ctx(repo, NOW_MS + 15 * DAY))
    assert res.trash == [f"{refs.TRASH}{NOW_MS}/sessions/x"]
    assert _refs(repo, refs.TRASH) == [f"{refs.TRASH}{NOW_MS + 10 * DAY}/sessions/y"]


def test_oplog_thinning_rule() -> None:
    now = 100 * DAY
    snaps = [
        ("a", now - 10 * 60_000, "p1"), ("b", now - 20 * 60_000, "p1"),  # same hour, same prompt
        ("c", now - 30 * 60_000, "p2"),  # same hour, another prompt: kept for its prompt
        ("d", now - 5 * HOUR + 120_000, None), ("e", now - 5 * HOUR + 60_000, None),
        ("f", now - 2 * DAY - HOUR, None), ("g", now - 2 * DAY - 2 * HOUR, None),
        ("h", now - 10 * DAY, None),
    ]
    assert thin(snaps, now) == {"b", "e", "g", "h"}
    assert thin([], now) == set()
    assert thin([("only", 0, None)], now) == set()  # the newest always stays


def test_gc_with_empty_oplog_and_empty_store(repo: Path) -> None:
    res = gc(make_ctx(repo))
    assert res.removed == 0 and res.freed_bytes == 0


def test_doctor_reports_space_per_family(repo: Path) -> None:
    from oxide_git.ops.doctor import diagnose

    (repo / "big.txt").write_text("x" * 100_000)
    cp = checkpoint(make_ctx(repo))
    usage = diagnose(make_ctx(repo))["usage"]
    assert usage["space checkpoints"] != "0 bytes" and usage["space oplog"] == "0 bytes"
    assert usage["largest checkpoints"].startswith(cp.id[:12])


def test_gc_thins_oplog_snapshots_per_worktree_and_keeps_pinned_ones(repo: Path) -> None:
    from oxide_git.store import snapshots

    now = NOW_MS + 30 * DAY
    made = {}
    for name, at in [("new", now - 10 * 60_000), ("same-hour", now - 20 * 60_000), ("old", now - 10 * DAY),
                     ("older", now - 12 * DAY)]:
        cp = snapshots.take(make_ctx(repo, at).repo, kind="before-rewind", now_ms=at, text=name)
        made[name] = cp.id
        for wt in ("main", "other"):
            git(repo, "update-ref", f"{refs.OPLOG}{wt}/{name}", cp.id)
    git(repo, "update-ref", retention.pin_ref(made["older"]), made["older"])  # pinned: never thinned
    git(repo, "update-ref", f"{refs.OPLOG}main/not-a-commit", git(repo, "rev-parse", "HEAD^{tree}").strip())
    res = gc(make_ctx(repo, now))
    assert res.removed == len(res.oplog) == 4
    assert sorted(res.oplog) == sorted(f"{refs.OPLOG}{wt}/{n}" for wt in ("main", "other")
                                      for n in ("same-hour", "old"))
    left = _refs(repo, refs.OPLOG)
    assert sorted(left) == sorted([f"{refs.OPLOG}{wt}/{n}" for wt in ("main", "other") for n in ("new", "older")]
                                  + [f"{refs.OPLOG}main/not-a-commit"])
    fsck_clean(repo)


def test_gc_boundaries_counts_and_why_expired_ones_stayed(repo: Path) -> None:
    import json as _json

    from oxide_git.ops.gc import WEEK

    assert WEEK == 7 * DAY
    ctx = make_ctx(repo)
    plain = checkpoint(ctx, kind="manual", text="plain")
    (repo / "README.md").write_text("pinned state\n")
    pinned = checkpoint(make_ctx(repo, NOW_MS + 1), kind="manual", text="pinned")
    retention.pin(make_ctx(repo), pinned.id)
    (repo / "README.md").write_text("pinned too\n")
    retention.pin(make_ctx(repo), checkpoint(make_ctx(repo, NOW_MS + 1), kind="manual", text="pinned 2").id)
    git(repo, "update-ref", f"{refs.CHECKPOINTS}manual/not-a-commit", git(repo, "rev-parse", "HEAD^{tree}").strip())
    (repo / "README.md").write_text("linked state\n")
    linked = checkpoint(make_ctx(repo, NOW_MS + 2), kind="manual", text="linked")
    git(repo, "notes", "--ref", "oxide", "add", "-m", _json.dumps({"checkpoints": [linked.id]}))
    git(repo, "update-ref", f"{refs.TRASH}{NOW_MS}/sessions/x", plain.id)
    git(repo, "update-ref", f"{refs.TRASH}not-a-time/sessions/y", plain.id)  # never removed: no time
    # one millisecond before the TTL: nothing goes
    early = gc(make_ctx(repo, NOW_MS + 14 * DAY - 1), dry_run=True)
    assert early.removed == 0 and early.trash == [] and early.kept == {}
    # exactly at the TTLs (trash 14 d, checkpoints 30 d): they go; pinned and linked stay, counted
    res = gc(make_ctx(repo, NOW_MS + 30 * DAY + 2), dry_run=True)
    assert [c["id"] for c in res.checkpoints] == [plain.id] and res.trash == [f"{refs.TRASH}{NOW_MS}/sessions/x"]
    assert res.kept == {"pinned": 2, "linked": 1} and res.removed == 2 and res.dry_run is True
    exact = gc(make_ctx(repo, NOW_MS + 14 * DAY), dry_run=True)
    assert exact.trash == [f"{refs.TRASH}{NOW_MS}/sessions/x"] and exact.checkpoints == []
    assert not gc(make_ctx(repo, NOW_MS + 14 * DAY)).dry_run  # the default is a real run
    assert f"{refs.TRASH}not-a-time/sessions/y" in _refs(repo, refs.TRASH)


def test_thinning_at_exactly_a_day_and_a_week() -> None:
    now = 100 * DAY
    # exactly a day old: no longer kept per hour (kept per day); exactly a week old: not kept at all
    snaps = [("newest", now, None), ("hour-x", now - DAY + 1, None), ("day-a", now - DAY, None),
             ("six-days", now - 6 * DAY + 1, None), ("week", now - 7 * DAY, None)]  # each its own day
    assert thin(snaps, now) == {"week"}


def test_expired_at_names_the_removal_by_prefix_only(repo: Path) -> None:
    from oxide_git.ops.gc import expired_at

    oxide(repo, "init")
    ctx = make_ctx(repo)
    assert expired_at(ctx, "abc") is None  # no log yet
    log = ctx.repo.oxide_dir / "expired-checkpoints"
    log.write_text("abcdef0123 1234\nbadline\nabc999 notanumber\n")
    assert expired_at(ctx, "abcd") == ("abcdef0123", 1234)
    assert expired_at(ctx, "") is None and expired_at(ctx, "abc9") is None and expired_at(ctx, "zz") is None


def test_gc_removes_more_than_one_chunk_of_refs(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    lines = "".join(f"create {refs.TRASH}{NOW_MS}/sessions/s{i:04d} {cp.id}\n" for i in range(1003))
    import subprocess

    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=lines, text=True, check=True)
    res = gc(make_ctx(repo, NOW_MS + 15 * DAY))
    assert len(res.trash) == 1003 and _refs(repo, refs.TRASH) == []


def test_a_checkpoint_ref_that_is_no_commit_is_passed_over(repo: Path) -> None:
    """A ref under refs/oxide/checkpoints/ that names a blob (a hand-made ref, a hostile remote)
    is left alone, and the expired checkpoints after it are still removed."""
    git(repo, "config", "oxide.checkpointTTL", "2d")
    old = checkpoint(make_ctx(repo), text="old")
    import subprocess

    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input="not a commit\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    odd = refs.CHECKPOINTS + "0-not-a-commit"  # sorts before every checkpoint
    git(repo, "update-ref", odd, blob)
    res = gc(make_ctx(repo, NOW_MS + 3 * DAY))
    assert [c["id"] for c in res.checkpoints] == [old.id]
    assert _refs(repo, refs.CHECKPOINTS) == [odd]
