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
