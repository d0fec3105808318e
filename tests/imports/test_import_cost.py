"""Hot paths must not pay for what they do not use: importing the CLI loads no heavy library."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import oxide

HEAVY = ("pygit2", "sqlite_utils", "watchdog", "msgpack", "oxide_git.agents.claude.agent")
# Coverage measurement (`make test`) would load sqlite3 and more in these children: not measured.


def unmeasured() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}


def _loaded_after(stmt: str) -> set[str]:
    code = f"import sys; {stmt}; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=unmeasured())
    return set(out.stdout.split())


def test_cli_import_is_light() -> None:
    loaded = _loaded_after("import oxide_git.cli")
    assert not {m for m in HEAVY if m in loaded}


def test_hook_impl_and_status_import_is_stdlib_only() -> None:
    loaded = _loaded_after("import oxide_git.hooks.impl, oxide_git.git.status, oxide_git.git.repo")
    assert not {m for m in (*HEAVY, "click", "sqlite3") if m in loaded}


def test_list_path_reads_only_the_index() -> None:
    loaded = _loaded_after("import oxide_git.cli, oxide_git.ops.browse, oxide_git.store.context")
    assert not {m for m in (*HEAVY, "sqlite_utils") if m in loaded}


def test_reimporting_loads_neither_pygit2_nor_click(repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The console script's `git oxide import -q FILE` over a file that did not change reads only
    the cursors; over a file that grew it writes the new messages in plain Python (``git.objects``):
    neither loads pygit2 (~50 ms) or click (~25 ms)."""
    import json
    import shutil
    from pathlib import Path

    fixture = Path(__file__).parents[2] / "fixtures" / "claude" / "split_response.jsonl"
    lines = fixture.read_bytes().splitlines(keepends=True)
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(lines[:3]))
    # The console script, stopped where it would exit (its os._exit skips printing what it loaded).
    run = ("import sys, os; os.chdir(sys.argv[1]); sys.argv = ['git-oxide', 'import', '--agent', 'claude', "
           "'-q', sys.argv[2]]\nimport oxide_git.entry as e\n"
           "def stop(code):\n    raise SystemExit(code)\ne._exit_now = stop\n"
           "try:\n    e.main()\nexcept SystemExit as x:\n    assert not x.code, x.code\n"
           "print('\\n'.join(sys.modules))")

    def modules() -> set[str]:
        p = subprocess.run([sys.executable, "-c", run, str(repo), str(src)], capture_output=True, text=True,
                           env=unmeasured())
        assert p.returncode == 0 and not p.stderr, p.stderr
        loaded = set(p.stdout.split())
        assert "oxide_git.imports.importing" in loaded  # the import ran here, and this is what it loaded
        return loaded

    modules()
    shutil.copy(fixture, src)  # grown: the rest of the lines
    grown = modules()
    assert "pygit2" not in grown and "click" not in grown
    assert not {"pygit2", "click"} & modules()  # unchanged
    listed = json.loads(oxide(repo, "list", "--json", "--all").stdout)
    shown = json.loads(oxide(repo, "show", listed[0]["id"], "--json").stdout)
    whole = tmp_path / "whole"
    subprocess.run(["git", "init", "-q", str(whole)], check=True)
    shutil.copy(fixture, tmp_path / "w.jsonl")
    oxide(whole, "import", "--agent", "claude", "-q", str(tmp_path / "w.jsonl"))
    once = json.loads(oxide(whole, "show", listed[0]["id"], "--json").stdout)
    assert shown["messages"] == once["messages"]  # in two steps = in one
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo, check=True, capture_output=True)


def test_list_json_runs_without_click_and_prints_what_the_click_command_prints(repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`git oxide list --json [--all]` (the form scripts run) is parsed by hand: click is not
    loaded, and the JSON is the click command's, byte for byte; any other form goes to click."""
    import shutil
    from pathlib import Path

    fixture = Path(__file__).parents[2] / "fixtures" / "claude" / "split_response.jsonl"
    shutil.copy(fixture, tmp_path / "s.jsonl")
    oxide(repo, "import", "--agent", "claude", "-q", str(tmp_path / "s.jsonl"))
    run = ("import sys, os; os.chdir(sys.argv[1]); sys.argv = ['git-oxide', 'list', *sys.argv[2:]]\n"
           "import oxide_git.entry as e\n"
           "def stop(code):\n    raise SystemExit(code)\ne._exit_now = stop\n"
           "try:\n    e.main()\nfinally:\n    sys.stdout.flush()\n    sys.stderr.write(' '.join(sys.modules))")

    def console(*args: str) -> tuple[str, set[str]]:
        p = subprocess.run([sys.executable, "-c", run, str(repo), *args], capture_output=True, text=True,
                           env=unmeasured())
        assert p.returncode == 0, p.stderr
        return p.stdout, set(p.stderr.split())

    for args in (["--json"], ["--json", "--all"], ["--all", "--json"]):
        out, loaded = console(*args)
        assert "click" not in loaded and "oxide_git.cli" not in loaded, args
        from_click = subprocess.run(
            [sys.executable, "-c", "import sys; sys.argv[0] = 'git-oxide'; from oxide_git.cli import main; "
             "main()", "list", *args], cwd=repo, capture_output=True, text=True, env=unmeasured())
        assert from_click.returncode == 0 and out == from_click.stdout, args
        assert [r["agent"] for r in json.loads(out)] == ["claude"]  # imported by path: this worktree's
    out, loaded = console("--json", "--all", "--agent", "claude")
    assert "click" in loaded and json.loads(out)[0]["agent"] == "claude"
