"""What keeps a checkpoint from expiring: the TTL, pins, and notes on commits the user's refs reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxide_git.core.errors import NotFound
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.gc import DAY
from oxide_git.store import retention
from oxide_git.store.retention import Policy, human, linked_ids, pin
from tests.conftest import NOW_MS, git, make_ctx


@pytest.mark.parametrize(("ms", "text"), [
    (-5000, "0 seconds"), (0, "0 seconds"), (999, "0 seconds"), (1000, "1 second"), (59_999, "59 seconds"),
    (60_000, "1 minute"), (119_999, "1 minute"), (120_000, "2 minutes"), (3_599_999, "59 minutes"),
    (3_600_000, "1 hour"), (7_200_000, "2 hours"), (DAY - 1, "23 hours"), (DAY, "1 day"), (3 * DAY, "3 days"),
])
def test_human_durations(ms: int, text: str) -> None:
    assert human(ms) == text


def _note(repo: Path, rev: str, body: str) -> None:
    git(repo, "notes", "--ref", "oxide", "add", "-f", "-m", body, rev)


def test_linked_only_from_commits_a_branch_tag_or_remote_reaches(repo: Path) -> None:
    g = make_ctx(repo).repo.git
    assert linked_ids(g) == set()  # no notes at all
    head = git(repo, "rev-parse", "HEAD").strip()
    _note(repo, "HEAD", json.dumps({"sessions": [], "checkpoints": ["c-on-main"]}))
    # a commit no ref reaches (a dropped branch)
    lost = git(repo, "commit-tree", "-p", head, "-m", "lost", "HEAD^{tree}").strip()
    _note(repo, lost, json.dumps({"checkpoints": ["c-lost"]}))
    # a commit only a tag reaches, one only a remote-tracking branch reaches
    tagged = git(repo, "commit-tree", "-p", head, "-m", "tagged", "HEAD^{tree}").strip()
    git(repo, "tag", "t1", tagged)
    _note(repo, tagged, json.dumps({"checkpoints": ["c-tagged"]}))
    remote = git(repo, "commit-tree", "-p", head, "-m", "remote", "HEAD^{tree}").strip()
    git(repo, "update-ref", "refs/remotes/origin/x", remote)
    _note(repo, remote, json.dumps({"checkpoints": ["c-remote"]}))
    # a note that is not JSON, one with no checkpoints, one that is a JSON list
    other = git(repo, "commit-tree", "-p", head, "-m", "o", "HEAD^{tree}").strip()
    git(repo, "branch", "o1", other)
    _note(repo, other, "s-plain-id")
    for i in range(4):  # JSON notes that name no checkpoint, spread over the notes' order
        c = git(repo, "commit-tree", "-p", head, "-m", f"nocp {i}", "HEAD^{tree}").strip()
        git(repo, "branch", f"nocp{i}", c)
        _note(repo, c, json.dumps({"sessions": [f"s-{i}-xxxx"]}) if i % 2 else "[]")
    # and one that comes first in the notes' order (they go by commit id): what follows it still counts
    first = min(head, tagged, remote)
    for i in range(500):
        c = git(repo, "commit-tree", "-p", head, "-m", f"first {i}", "HEAD^{tree}").strip()
        if c < first:
            break
    assert c < first
    git(repo, "branch", "first", c)
    _note(repo, c, json.dumps({"sessions": ["s-first-xxxx"]}))
    git(repo, "tag", "tree-tag", git(repo, "rev-parse", "HEAD^{tree}").strip())  # a tag that is no commit
    assert linked_ids(g) == {"c-on-main", "c-tagged", "c-remote"}
    # an ancestor of a branch tip is reached too
    git(repo, "commit", "-q", "--allow-empty", "-m", "later")
    assert "c-on-main" in linked_ids(make_ctx(repo).repo.git)


def test_policy_words_and_expiry(repo: Path) -> None:
    ctx = make_ctx(repo)
    cp = checkpoint(ctx, kind="manual")
    p = Policy(make_ctx(repo, NOW_MS + 29 * DAY))
    d = p.describe(cp.id, NOW_MS)
    assert d == {"expires_at": NOW_MS + 30 * DAY, "pinned": False, "linked": False, "expired": False,
                 "expiry": "expires in 1 day"}
    d = Policy(make_ctx(repo, NOW_MS + 30 * DAY)).describe(cp.id, NOW_MS)  # exactly at its TTL: gone
    assert d["expired"] and d["expiry"] == "expired: code rewind no longer possible"
    pin(make_ctx(repo), cp.id)
    d = Policy(make_ctx(repo, NOW_MS + 60 * DAY)).describe(cp.id, NOW_MS)
    assert not d["expired"] and d["pinned"] and d["expiry"] == "pinned"
    pin(make_ctx(repo), cp.id, on=False)
    _note(repo, "HEAD", json.dumps({"checkpoints": [cp.id[:12]]}))  # an abbreviated id links too
    d = Policy(make_ctx(repo, NOW_MS + 60 * DAY)).describe(cp.id, NOW_MS)
    assert not d["expired"] and d["linked"] and d["expiry"] == "kept: linked from a commit"
    git(repo, "config", "oxide.checkpointTTL", "never")
    (repo / "README.md").write_text("another state\n")
    other = checkpoint(make_ctx(repo, NOW_MS + 1), kind="manual", text="other")
    assert other.id != cp.id
    d = Policy(make_ctx(repo, NOW_MS + 999 * DAY)).describe(other.id, NOW_MS + 1)
    assert d["expires_at"] is None and not d["expired"] and d["expiry"] == "never expires"


def test_pin_and_unpin_say_whether_they_changed_anything(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    ref = retention.pin_ref(cp.id)
    assert pin(make_ctx(repo), cp.id[:10]) == {"id": cp.id, "ref": ref, "pinned": True, "changed": True}
    assert pin(make_ctx(repo), cp.id)["changed"] is False
    assert git(repo, "rev-parse", ref).strip() == cp.id
    assert pin(make_ctx(repo), cp.id, on=False)["changed"] is True
    assert pin(make_ctx(repo), cp.id, on=False) == {"id": cp.id, "ref": ref, "pinned": False, "changed": False}
    assert git(repo, "rev-parse", "--verify", "-q", ref, check=False) == ""


def test_pinning_a_checkpoint_whose_commit_is_gone_is_refused(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    ctx = make_ctx(repo)
    for name in git(repo, "for-each-ref", "--format=%(refname)", "refs/oxide/checkpoints/").split():
        git(repo, "update-ref", "-d", name)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    with pytest.raises(NotFound) as e:
        pin(ctx, cp.id)
    assert e.value.message == f"checkpoint {cp.id} has expired: its commit is gone"


@pytest.mark.parametrize(("text", "ms"), [
    ("2w", 14 * DAY), ("1.5h", 90 * 60_000), ("250ms", 250), ("5m", 300_000), ("7", 7 * DAY), (" 3D ", 3 * DAY),
    ("off", None), ("0", None), ("forever", None), ("none", None),
])
def test_durations_in_every_unit(text: str, ms: int | None) -> None:
    assert retention.parse_duration(text) == ms


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 bytes"), (1023, "1023 bytes"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (1024 * 1024 - 1, "1024.0 KiB"),
    (1024 * 1024, "1.0 MiB"), (5 * 1024 ** 3, "5.0 GiB"), (3 * 1024 ** 4, "3072.0 GiB"),
])
def test_size_text(n: int, text: str) -> None:
    assert retention.size_text(n) == text


def test_annotate_gives_iso_expiry_or_none(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    rows = [{"id": cp.id, "created_at": NOW_MS}]
    [got] = retention.annotate(make_ctx(repo), rows)
    assert got["expires_at"].startswith("2026-01-31T00:00:00") and got["expiry"] == "expires in 30 days"
    assert retention.annotate(make_ctx(repo), []) == []
    git(repo, "config", "oxide.checkpointTTL", "never")
    [never] = retention.annotate(make_ctx(repo), rows)
    assert never["expires_at"] is None and never["expiry"] == "never expires"


def test_space_in_a_repository_without_commits(tmp_path: Path) -> None:
    import os

    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    (root / "big.bin").write_bytes(os.urandom(60_000))
    checkpoint(make_ctx(root), kind="manual")
    assert retention.user_tips(make_ctx(root)) == []
    assert retention.usage(make_ctx(root))["checkpoints"] > 50_000


def test_largest_checkpoints_come_first(repo: Path) -> None:
    import os

    (repo / "small.bin").write_bytes(os.urandom(5_000))
    small = checkpoint(make_ctx(repo), kind="manual", text="small")
    (repo / "big.bin").write_bytes(os.urandom(50_000))
    big = checkpoint(make_ctx(repo, NOW_MS + 1), kind="manual", text="big")
    found = retention.usage(make_ctx(repo))["largest checkpoints"]
    assert [c["id"] for c in found[:2]] == [big.id, small.id] and found[0]["bytes"] > found[1]["bytes"]
    report = retention.usage_report(make_ctx(repo))
    assert report["largest checkpoints"].startswith(f"{big.id[:12]} (")


def test_at_most_five_largest_checkpoints(repo: Path) -> None:
    import os

    for i in range(6):
        (repo / f"f{i}.bin").write_bytes(os.urandom(2_000 * (i + 1)))
        checkpoint(make_ctx(repo, NOW_MS + i), kind="manual", text=f"cp {i}")
    assert len(retention.usage(make_ctx(repo))["largest checkpoints"]) == 5
