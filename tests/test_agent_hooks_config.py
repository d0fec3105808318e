"""Installing the agent hooks into files the user owns: broken files are refused untouched, Codex's
notify is found where TOML puts it (top level, over several lines, never in a table)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from oxide_git.agent_hooks import _notify_span

from .conftest import oxide


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
