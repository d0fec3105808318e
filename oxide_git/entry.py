"""The console script. `checkpoint` is first offered to a running `git oxide watch` (``fastpath``).
For the commands that snapshot the worktree first (checkpoint, rewind,
undo) it starts `git status` before anything heavy is imported, so the one unavoidable pass over
the worktree overlaps Python's own start-up."""

from __future__ import annotations

import os
import sys

_SNAPSHOT_FIRST = ("checkpoint", "rewind", "undo")


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["checkpoint"]:
        from .fastpath import checkpoint

        rc = checkpoint(argv[1:])  # `git oxide watch` answers, without click or pygit2 here
        if rc is not None:
            raise SystemExit(rc)
    if argv[:1] and argv[0] in _SNAPSHOT_FIRST and not {"-h", "--help", "-n", "--dry-run"} & set(argv):
        from pathlib import Path

        from . import status
        from .errors import OxideError
        from .repo import find_repo

        try:
            repo = find_repo(Path.cwd())
            from .watch_journal import active

            if not active(repo) or argv[0] != "checkpoint":  # `watch`'s journal replaces status
                status.prefetch(repo.workdir)
                # git status is the critical path; on a busy or small machine our own imports
                # must not take CPU from it (the child keeps its priority).
                os.nice(5)
        except (OxideError, OSError):
            pass
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
