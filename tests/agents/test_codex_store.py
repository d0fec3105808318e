"""Where Codex keeps its rollouts (codex_store): the provider its config names, its thread store
when that is damaged or partial, and the cwd a rollout names, on real files in an isolated
CODEX_HOME. Nothing here may raise on what Codex (or a damaged disk) leaves behind."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import zstandard

from oxide_git.agents import AgentEnv
from oxide_git.agents.codex.store import (
    configured_provider,
    discover,
    open_rollout,
    peek_cwd,
    skip,
    thread_store,
)

META = {"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": "a", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/work/proj"}}


def _env(home: Path, *worktrees: Path) -> AgentEnv:
    return AgentEnv(home=home, environ=dict(os.environ), worktrees=tuple(worktrees))


def _codex_home() -> Path:
    home = Path(os.environ["CODEX_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    return home


def _rollout(path: Path, cwd: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {**META, "payload": {**META["payload"], "cwd": cwd}}
    path.write_text(json.dumps(meta) + "\n")
    return path


def test_the_provider_is_the_active_profiles_then_the_files_then_openai(tmp_path: Path) -> None:
    home = _codex_home()
    env = _env(tmp_path)
    assert configured_provider(env) == "openai"  # no config.toml
    cfg = home / "config.toml"
    cfg.write_text('model_provider = "local"\nprofile = "work"\n[profiles.work]\nmodel_provider = "azure"\n')
    assert configured_provider(env) == "azure"
    cfg.write_text('model_provider = "local"\nprofile = "work"\n[profiles.work]\nmodel = "x"\n')
    assert configured_provider(env) == "local"  # the profile names none: the file's
    cfg.write_text('profile = "gone"\nmodel_provider = ""\n')
    assert configured_provider(env) == "openai"  # an empty name is none
    cfg.write_text("model_provider = [unclosed\n")
    assert configured_provider(env) == "openai"  # not TOML: Codex's default
    cfg.write_bytes(b'model_provider = "\xff"\n')
    assert configured_provider(env) == "openai"  # not UTF-8


def test_a_damaged_or_partial_thread_store_yields_what_it_can(tmp_path: Path) -> None:
    home = _codex_home()
    (home / "state_9.sqlite").write_bytes(b"not a database at all" * 100)
    no_table = sqlite3.connect(home / "state_7.sqlite")
    no_table.execute("CREATE TABLE other (x)")
    no_table.commit()
    no_table.close()
    good = sqlite3.connect(home / "state_5.sqlite")
    good.execute("CREATE TABLE threads (id TEXT, rollout_path TEXT, cwd TEXT)")
    good.executemany("INSERT INTO threads VALUES (?, ?, ?)", [
        ("t1", "/x/rollout-1.jsonl", "/work/proj"), ("t2", "", "/work/proj"), ("t3", None, None),
        ("t4", "/x/rollout-4.jsonl", None)])
    good.commit()
    good.close()
    assert list(thread_store(home)) == [("t1", "/x/rollout-1.jsonl", "/work/proj"),
                                        ("t4", "/x/rollout-4.jsonl", "")]


def test_thread_store_files_are_found_compressed_and_only_for_this_repository(tmp_path: Path) -> None:
    home = _codex_home()
    proj = tmp_path / "proj"
    proj.mkdir()
    moved = tmp_path / "moved"
    plain = _rollout(moved / "rollout-2026-03-01T10-00-00-b.jsonl", str(proj))
    zipped = moved / "rollout-2026-03-01T11-00-00-c.jsonl.zst"  # the store names the plain file
    zipped.write_bytes(zstandard.ZstdCompressor().compress(
        (json.dumps({**META, "payload": {**META["payload"], "cwd": str(proj)}}) + "\n").encode()))
    other = _rollout(moved / "rollout-2026-03-01T12-00-00-d.jsonl", "/elsewhere")
    db = sqlite3.connect(home / "state_5.sqlite")
    db.execute("CREATE TABLE threads (id TEXT, rollout_path TEXT, cwd TEXT)")
    db.executemany("INSERT INTO threads VALUES (?, ?, ?)", [
        ("b", str(plain), str(proj)),
        ("c", str(moved / "rollout-2026-03-01T11-00-00-c.jsonl"), str(proj)),
        ("d", str(other), "/elsewhere"),  # another repository's thread
        ("e", str(moved / "rollout-gone.jsonl"), str(proj))])  # its file is gone
    db.commit()
    db.close()
    # a file under sessions/ whose name is no rollout's is not taken
    _rollout(home / "sessions" / "2026" / "03" / "01" / "rollout-x.json.bak", str(proj))
    _rollout(home / "sessions" / "notes.jsonl", str(proj))
    assert sorted(discover(_env(tmp_path / "nohome", proj))) == sorted([plain, zipped])


def test_skipping_into_a_compressed_rollout_stops_at_its_end(tmp_path: Path) -> None:
    path = tmp_path / "rollout-a.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b"0123456789\n"))
    with open_rollout(path) as f:
        skip(f, 4, path)
        assert f.read() == b"456789\n"
    with open_rollout(path) as f:
        skip(f, 1000, path)  # past the end: nothing left, no error
        assert f.read() == b""


def test_the_cwd_of_a_rollout_whatever_its_first_lines_hold(tmp_path: Path) -> None:
    def write(name: str, *lines: str) -> Path:
        p = tmp_path / name
        p.write_text("".join(ln + "\n" for ln in lines))
        return p

    context = "<environment_context>\\n  <cwd>/work/ctx</cwd>\\n</environment_context>"
    bare = write("bare.jsonl", '{"id": "x", "timestamp": "2025-08-01T10:00:00Z"}', "not json", "[1, 2]",
                 '{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "'
                 + context + '"}]}')
    assert peek_cwd(bare) == "/work/ctx"
    assert peek_cwd(write("meta.jsonl", json.dumps(META))) == "/work/proj"
    late = write("late.jsonl", *(['{"type": "x"}'] * 60), json.dumps(META))
    assert peek_cwd(late) is None  # only the first lines are read
    assert peek_cwd(write("none.jsonl", '{"type": "x"}')) is None
    ts_era = write("rollout-old.json", json.dumps({"session": {}, "items": [{"text": "<cwd> /work/ts </cwd>"}]}))
    assert peek_cwd(ts_era) == "/work/ts"
    assert peek_cwd(write("rollout-bare.json", '{"session": {}, "items": []}')) is None
    damaged = tmp_path / "rollout-z.jsonl.zst"
    damaged.write_bytes(b"(\xb5/\xfd" + b"\x00" * 40)  # a zstd magic number, then garbage
    assert peek_cwd(damaged) is None
    assert peek_cwd(tmp_path / "missing.jsonl") is None
