"""The console script. For `checkpoint` it starts `git status` before anything heavy is imported,
so the one unavoidable pass over the worktree overlaps Python's own start-up."""

from __future__ import annotations

import sys

PREFETCHED: dict[str, object] = {}


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["checkpoint"] and not {"-h", "--help"} & set(argv):
        from pathlib import Path

        from . import status
        from .errors import OxideError
        from .repo import find_repo

        try:
            repo = find_repo(Path.cwd())
            from .watch_journal import active

            if not active(repo):  # with `watch` running, its journal replaces git status
                PREFETCHED["status"] = (repo.workdir, status.start(repo.workdir))
        except (OxideError, OSError):
            pass
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
