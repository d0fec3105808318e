"""Installing the agent hooks into files the user owns: broken files are refused untouched, Codex's
notify is found where TOML puts it (top level, over several lines, never in a table)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from oxide_git.hooks.agent_hooks import _notify_span
from tests.conftest import oxide


def test_broken_claude_settings_are_refused_and_left_as_they_are(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    for body, why in (("{not json", "is not valid JSON"), ("[1, 2]", "is not a JSON object")):
        settings.write_text(body)
        r = oxide(repo, "init", "--agent-hooks", "claude", check=False)
        assert r.returncode == 1 and why in r.stderr and "hint: fix it" in r.stderr
        assert settings.read_text() == body


def test_broken_codex_config_is_refused_and_left_as_it_is(repo: Path) -> None:
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("model = \n")
    r = oxide(repo, "init", "--agent-hooks", "codex", check=False)
    assert r.returncode == 1 and "is not valid TOML" in r.stderr
    assert config.read_text() == "model = \n"


def test_codex_notify_over_several_lines_is_replaced_whole_and_tables_are_left(repo: Path) -> None:
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    original = ('model = "o3"\nnotify = [\n  "notify-send",\n  "codex",\n]\n\n'
                '[profiles.x]\nnotify = ["not", "top-level"]\n')
    config.write_text(original)
    oxide(repo, "init", "--agent-hooks", "codex")
    got = tomllib.loads(config.read_text())
    assert got["notify"][-3:] == ["--", "notify-send", "codex"] and "agent-hook" in " ".join(got["notify"])
    assert got["profiles"]["x"]["notify"] == ["not", "top-level"] and got["model"] == "o3"
    oxide(repo, "init", "--agent-hooks", "codex", "--remove")
    assert tomllib.loads(config.read_text()) == tomllib.loads(original)


def test_a_codex_config_without_notify_gets_one_and_loses_it_again(repo: Path) -> None:
    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    oxide(repo, "init", "--agent-hooks", "codex")  # no config.toml yet: it is created
    assert "agent-hook" in " ".join(tomllib.loads(config.read_text())["notify"])
    oxide(repo, "init", "--agent-hooks", "codex", "--remove")
    assert "notify" not in tomllib.loads(config.read_text())


def test_notify_span() -> None:
    assert _notify_span(['model = "x"', "notify = []"]) == (1, 2)
    assert _notify_span(["notify = [", '"a",', "]", "x = 1"]) == (0, 3)
    assert _notify_span(["[table]", "notify = []"]) is None
    assert _notify_span(["notify_other = 1", "notifyx = 2"]) is None
    assert _notify_span(["notify=[ [1], 2 ]", "after = 1"]) == (0, 1)
    assert _notify_span([]) is None


def test_codex_notify_runs_the_chained_command_and_imports_the_turn(repo: Path, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys
    import time

    from tests.conftest import FIXTURES, make_ctx

    config = Path(os.environ["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    out = tmp_path / "chained.out"
    config.write_text(f'notify = ["sh", "-c", "printf %s \\"$0\\" > {out}"]\n')
    oxide(repo, "init")
    oxide(repo, "init", "--agent-hooks", "codex")
    day = Path(os.environ["CODEX_HOME"]) / "sessions" / "2026" / "03" / "01"
    day.mkdir(parents=True)
    rollout = day / "rollout-2026-03-01T10-00-00-019c0000-0000-7000-8000-000000000001.jsonl"
    rollout.write_text((FIXTURES / "codex" / "turns.jsonl").read_text().replace("/work/proj", str(repo)))
    notify = tomllib.loads(config.read_text())["notify"]
    payload = json.dumps({"type": "agent-turn-complete", "thread-id": "019c0000-0000-7000-8000-000000000001",
                          "cwd": str(repo)})
    argv = [sys.executable if a == "python" else a for a in notify]
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    r = subprocess.run([*argv, payload], cwd=repo, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0 and r.stdout == "", (notify, r.stderr)
    deadline = time.monotonic() + 20
    while not (out.exists() and out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert json.loads(out.read_text()) == json.loads(payload)  # the user's notify got the same JSON
    ctx = make_ctx(repo)
    rows = ctx.index.query("SELECT id FROM sessions WHERE native_id=?", ("019c0000-0000-7000-8000-000000000001",))
    assert len(rows) == 1
    current = (ctx.repo.worktree_dir / "current-session").read_text().split()[0]
    assert current == rows[0][0]  # the turn's session is now the current one


def test_a_notify_is_added_at_the_top_where_toml_keeps_it_top_level(tmp_path: Path) -> None:
    """A config with settings and tables but no notify: ours goes first (after a table it would be
    the table's), the user's lines follow unchanged, and --remove gives back the very same bytes."""
    import json

    from oxide_git.hooks.agent_hooks import configure_codex

    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    original = '# mine\nmodel = "o3"\n\n[profiles.x]\nmodel = "o4"\n'
    config.write_text(original)
    configure_codex({}, home)
    first, rest = config.read_text().split("\n", 1)
    notify = tomllib.loads(config.read_text())["notify"]
    assert first == f"notify = {json.dumps(notify)}" and rest == original
    assert notify[-2:] == ["codex", "notify"]
    configure_codex({}, home, remove=True)
    assert config.read_text() == original
