"""`git oxide list [--json] [--all]` without click: the form people type, and the one scripts,
pickers and editors run.

Parsing that form by hand saves click's start-up (~25-45 ms, a fifth of the whole command at
10,000 sessions). Anything else (``--agent``, ``--tree``, ``-h``, a typo) goes through the click
command (``cli/sessions.py``), which prints the same (``tests/cli/test_plain_forms.py``).
"""

from __future__ import annotations

import sys


def plain(argv: list[str]) -> int | None:
    """The exit status of ``list ARGV`` run here, or None when ARGV is not the plain form."""
    if not set(argv) <= {"--json", "--all"}:
        return None

    def work() -> None:
        from oxide_git.store.context import for_process

        ctx, all_worktrees = for_process(), "--all" in argv
        if "--json" in argv:
            from oxide_git.ops.browse import list_sessions_json

            sys.stdout.buffer.write(list_sessions_json(ctx, all_worktrees=all_worktrees))
            return
        from oxide_git.ops.list_table import listing

        shown = listing(ctx, all_worktrees=all_worktrees)
        sys.stdout.write(shown.text)
        sys.stdout.flush()
        if shown.note:
            sys.stderr.write(shown.note + "\n")

    from oxide_git.git import failure

    return failure.guarded(work)
