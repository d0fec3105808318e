"""A big file parsed in a child process (``import_worker``) is stored exactly as one parsed here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from oxide_git.core import forked
from oxide_git.core.errors import OxideError
from oxide_git.imports import importing
from oxide_git.imports import worker as import_worker
from tests.conftest import FIXTURES, git, make_ctx, new_repo, oxide
from tests.planted import NEEDLES, claude_transcript

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker needs os.fork")


def _import(root: Path, items: list[tuple[str, Path]], worker: bool,
            monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Import in this process (the worker forked from it, or not); the sessions written."""
    forks: list[str] = []
    real = import_worker.run

    def counted(*a, **k):  # type: ignore[no-untyped-def]
        forks.append("fork")
        return real(*a, **k)

    monkeypatch.setattr(import_worker, "run", counted)
    monkeypatch.setattr(importing, "WORKER_BYTES", 0 if worker else 1 << 40)
    monkeypatch.chdir(root)
    ctx = make_ctx(root)
    report = importing.import_sessions(ctx, items)
    ctx.close()
    assert bool(forks) == worker and (not worker or forked.available())
    assert not report.problems or all("not JSON" in p or "partial" in p for p in report.problems), report.problems
    return sorted({s for f in report.files for s in f.sessions})


def _store(root: Path) -> dict[str, str]:
    """Every session ref with its commit, and what `show --json` says of each session."""
    out = {}
    for line in git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/oxide/sessions").splitlines():
        name, oid = line.split()
        out[name] = oid
        out[name + " show"] = oxide(root, "show", name.rsplit("/", 1)[1], "--json").stdout
    out["list"] = json.dumps(sorted(json.loads(oxide(root, "list", "--json", "--all").stdout),
                                    key=lambda r: r["id"]))
    return out


def test_worker_stores_what_one_process_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = [("claude", FIXTURES / "claude" / n) for n in ("split_response.jsonl", "compaction.jsonl",
                                                          "legacy_sidechain.jsonl", "not_json.jsonl")]
    items += [("codex", FIXTURES / "codex" / n) for n in ("turns.jsonl", "fork.jsonl", "compacted.jsonl")]
    items.append(("claude", claude_transcript(tmp_path / "secrets.jsonl", "/work/project", turns=3)))
    plain = new_repo(tmp_path / "plain")
    forked = new_repo(tmp_path / "forked")
    assert _import(plain, items, False, monkeypatch) == _import(forked, items, True, monkeypatch)
    assert _store(plain) == _store(forked)  # same commits (the clock is pinned), same index
    shown = "".join(v for k, v in _store(forked).items() if k.endswith(" show"))
    assert "[REDACTED:" in shown and not any(n in shown for n in NEEDLES)  # gated in the parent
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=forked, check=True, capture_output=True)


def test_worker_continues_a_grown_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = FIXTURES / "claude" / "split_response.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    grown = tmp_path / "grown.jsonl"
    grown.write_bytes(b"".join(lines[: len(lines) // 2]))
    once, twice = new_repo(tmp_path / "once"), new_repo(tmp_path / "twice")
    _import(twice, [("claude", grown)], True, monkeypatch)
    shutil.copy(src, grown)
    _import(twice, [("claude", grown)], True, monkeypatch)
    _import(once, [("claude", src)], False, monkeypatch)
    a, b = _store(once), _store(twice)
    assert [v for k, v in a.items() if k.endswith(" show")] == [v for k, v in b.items() if k.endswith(" show")]


def test_a_worker_that_dies_leaves_a_store_the_next_import_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = FIXTURES / "codex" / "turns.jsonl"
    parser = importing.agent_module("codex")
    real_parse = parser.parse

    def dying(*a, **k):  # type: ignore[no-untyped-def]
        for n, ev in enumerate(real_parse(*a, **k)):
            if n == 5:
                os._exit(9)  # in the child: as if killed mid-file
            yield ev

    root = new_repo(tmp_path / "r")
    monkeypatch.setattr(parser, "parse", dying)
    with pytest.raises(OxideError, match="ended unexpectedly"):
        _import(root, [("codex", src)], True, monkeypatch)
    assert make_ctx(root).index.cursor(str(src.resolve())) is None  # nothing claims it was read
    monkeypatch.setattr(parser, "parse", real_parse)
    _import(root, [("codex", src)], True, monkeypatch)
    clean = new_repo(tmp_path / "clean")
    _import(clean, [("codex", src)], False, monkeypatch)
    assert _store(root) == _store(clean)
