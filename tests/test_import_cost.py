"""Hot paths must not pay for what they do not use: importing the CLI loads no heavy library."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pygit2", "sqlite_utils", "watchdog", "msgpack", "oxide_git.agents.claude")


def _loaded_after(stmt: str) -> set[str]:
    code = f"import sys; {stmt}; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_cli_import_is_light() -> None:
    loaded = _loaded_after("import oxide_git.cli")
    assert not {m for m in HEAVY if m in loaded}


def test_hook_impl_and_status_import_is_stdlib_only() -> None:
    loaded = _loaded_after("import oxide_git.hook_impl, oxide_git.status, oxide_git.repo")
    assert not {m for m in (*HEAVY, "click", "sqlite3") if m in loaded}


def test_list_path_reads_only_the_index() -> None:
    loaded = _loaded_after("import oxide_git.cli, oxide_git.browse, oxide_git.context")
    assert not {m for m in (*HEAVY, "sqlite_utils") if m in loaded}


def test_reimporting_an_unchanged_file_loads_no_git_library(repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`git oxide import` over files that did not grow only reads the cursors: no pygit2."""
    import shutil
    from pathlib import Path

    src = tmp_path / "s.jsonl"
    shutil.copy(Path(__file__).parent.parent / "fixtures" / "claude" / "split_response.jsonl", src)
    run = ("import sys, os; os.chdir(sys.argv[1]); sys.argv = ['git-oxide', 'import', '--agent', 'claude', "
           "'-q', sys.argv[2]]\nfrom oxide_git.cli import main\ntry: main()\nexcept SystemExit: pass\n"
           "print('\\n'.join(sys.modules))")
    first = subprocess.run([sys.executable, "-c", run, str(repo), str(src)], capture_output=True, text=True)
    assert "pygit2" in first.stdout.split(), first.stderr  # the first import writes
    again = subprocess.run([sys.executable, "-c", run, str(repo), str(src)], capture_output=True, text=True)
    assert again.returncode == 0 and "pygit2" not in again.stdout.split(), again.stderr
