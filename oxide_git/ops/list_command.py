"""`git oxide list --json [--all]` without click: the form scripts, pickers and editors run.

Parsing that form by hand saves click's start-up (~25-45 ms, a fifth of the whole command at
10,000 sessions). Anything else (``--agent``, ``--tree``, the table, ``-h``, a typo) goes through
the click command (``cli/sessions.py``), which prints the same JSON.
"""

from __future__ import annotations

import sys


def plain(argv: list[str]) -> int | None:
    """The exit status of ``list ARGV`` run here, or None when ARGV is not the plain form."""
    if "--json" not in argv or not set(argv) <= {"--json", "--all"}:
        return None

    def work() -> None:
        from oxide_git.ops.browse import list_sessions_json
        from oxide_git.store.context import for_process

        sys.stdout.buffer.write(list_sessions_json(for_process(), all_worktrees="--all" in argv))

    from oxide_git.git import failure

    return failure.guarded(work)
