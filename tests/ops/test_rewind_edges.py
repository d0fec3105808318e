"""rewind at its edges: a checkpoint whose commit is gone, a session whose log is gone, --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxide_git.core.errors import NotFound
from oxide_git.core.model import Message, Part
from oxide_git.git import refs
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.rewind import rewind
from oxide_git.store import writes as store
from tests.cli.test_history import _session
from tests.conftest import NOW_MS, git, make_ctx, oxide


def test_a_checkpoint_whose_commit_was_pruned_is_reported_expired(repo: Path) -> None:
    cp = checkpoint(make_ctx(repo), kind="manual")
    for name in git(repo, "for-each-ref", "--format=%(refname)", "refs/oxide/checkpoints/").split():
        git(repo, "update-ref", "-d", name)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    with pytest.raises(NotFound) as e:
        rewind(make_ctx(repo, NOW_MS + 1), cp.id)  # the index still has its row
    assert e.value.message.startswith(f"checkpoint {cp.id} expired on 2026-01-31")
    assert e.value.message.endswith("its commit is no longer in the repository")
    assert "git oxide pin" in (e.value.hint or "")


def test_code_rewinds_when_the_checkpoints_session_log_is_gone(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 2)
    cp = checkpoint(ctx, kind="manual")
    (repo / "README.md").write_text("later\n")
    git(repo, "update-ref", "-d", refs.session_ref(s.id))
    res = rewind(make_ctx(repo, NOW_MS + 1), cp.id)
    assert res.messages_dropped == 0 and (repo / "README.md").read_text() == "hello\n"


def test_rewind_json_and_refusal_off_a_terminal(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session(ctx, 2)
    cp = checkpoint(ctx, kind="manual")
    store.append(ctx, s, [Message("user", (Part.text("later"),))])
    (repo / "README.md").write_text("later\n")
    r = oxide(repo, "rewind", cp.id[:10], check=False, input="")
    assert r.returncode != 0 and (repo / "README.md").read_text() == "later\n"  # asks first: nothing done
    out = json.loads(oxide(repo, "rewind", cp.id[:10], "--yes", "--json").stdout)
    assert out["messages_dropped"] == 1 and out["files"]["modified"] == ["README.md"]
    assert (repo / "README.md").read_text() == "hello\n"
