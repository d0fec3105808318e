"""The console script. `checkpoint` and `search` are first offered to a running `git oxide watch`
(``fastpath``); the plain form of `import` runs without click (``import_command.plain``), and so
do `mcp` and `list --json` (``list_command.plain``); `blame` starts `git blame` first
(``blame_prefetch``) and runs its plain form without click. For the commands that snapshot the
worktree first (checkpoint, rewind, undo) it starts `git status` before anything heavy is
imported, so the one unavoidable pass over the worktree overlaps Python's own start-up.

``run`` does a command and returns its exit code (``main`` exits with it); the tests run it in
their own process (``own_process=False``: then ``settle`` drops what the process's end would)."""

from __future__ import annotations

import os
import sys

_SNAPSHOT_FIRST = ("checkpoint", "rewind", "undo")


def main() -> None:
    code, quick = run(sys.argv[1:])
    if quick:
        _exit_now(code)
    sys.exit(code)


def run(argv: list[str], *, own_process: bool = True) -> tuple[int | str | None, bool]:
    """Command ``argv``: its exit code (as ``sys.exit`` takes it) and whether its work is done when
    it returns (``_QUICK_EXIT``: the process may skip the interpreter's teardown). What it prints
    goes to ``sys.stdout``/``sys.stderr`` and, for the fast paths, file descriptors 1 and 2.

    ``own_process=False``: a caller that goes on after the command (a test's runner) keeps its
    priority, and what the command's process would have dropped at its end is dropped here
    (``settle``), so that the next command starts as a process would."""
    try:
        return _run(argv, own_process)
    finally:
        if not own_process:
            settle()


def _run(argv: list[str], own_process: bool) -> tuple[int | str | None, bool]:
    if argv[:1] in (["checkpoint"], ["search"]):
        from oxide_git.watch.fastpath import serve as served

        rc = served(argv[0], argv[1:])  # `git oxide watch` answers, without click or pygit2 here
        if rc is not None:
            return rc, True  # written with os.write: nothing to flush or free (~3 ms of teardown)
    if argv[:1] == ["search"]:
        from oxide_git.ops.search_command import plain as plain_search

        rc = plain_search(argv[1:])  # `search QUERY [--json] [-n N]`, without click
        if rc is not None:
            return rc, True
    if argv[:1] == ["import"]:
        from oxide_git.imports.command import plain

        rc = plain(argv[1:])  # the form hooks and scripts run, without click
        if rc is not None:
            return rc, True
    if argv[:1] == ["list"]:
        from oxide_git.ops.list_command import plain as plain_list

        rc = plain_list(argv[1:])  # `list --json [--all]`, without click
        if rc is not None:
            return rc, True
    if argv[:1] == ["blame"]:
        from oxide_git.blame import prefetch as blame_prefetch

        # `git blame` first: it runs while Python imports the rest, and while the kept answer is
        # looked for (ended if there is one: ~2 ms against the ~10 ms a cold blame gains)
        blame_prefetch.start(argv[1:])
        from oxide_git.blame.cache import serve

        rc = serve(argv[1:])  # the answer kept from the same question, when nothing it depends on moved
        if rc is not None:
            blame_prefetch.cancel()
            return rc, True
        from oxide_git.blame.command import plain as plain_blame

        rc = plain_blame(argv[1:])  # FILE with its usual options, without click
        if rc is not None:
            return rc, True
    if argv[:1] == ["hook"] and argv[1:2] and not argv[1].startswith("-"):
        from oxide_git.hooks.entry import main as hook_main

        return hook_main(argv[1:]), False  # a team's hook runs it on every commit: no click
    if argv[:1] == ["mcp"]:
        from oxide_git.mcp.server import main as mcp_main

        rc = mcp_main(argv[1:])  # a server an agent starts: its start-up is the agent's wait
        if rc is not None:
            return rc, True
    quiet = not {"-h", "--help", "-n", "--dry-run"} & set(argv)
    if argv[:1] and argv[0] in _SNAPSHOT_FIRST and quiet and not _journal_active(argv[0]):
        from oxide_git.git import prefetch

        prefetch.start()  # before any other import: git finds the worktree itself
        if own_process:
            os.nice(5)  # git status is the critical path: our imports must not take its CPU
    from oxide_git.cli import main as cli_main

    try:
        cli_main(args=argv)
    except SystemExit as e:
        return e.code, bool(argv[:1]) and argv[0] in _QUICK_EXIT
    return 0, bool(argv[:1]) and argv[0] in _QUICK_EXIT


def settle() -> None:
    """What the end of a command's process drops, dropped in a process that goes on: a `git
    status` or `git blame` started first thing and not taken, the kept answer's slot, the store
    that abbreviates ids, `--no-pager`, the count of diffs asked of git, and the objects `blame`
    left out of the collector's passes (``gc.freeze``: the console script exits anyway)."""
    import gc

    from oxide_git.blame import cache as blame_cache
    from oxide_git.blame import diff as blame_diff
    from oxide_git.blame import prefetch as blame_prefetch
    from oxide_git.cli import output, pager
    from oxide_git.git import prefetch

    prefetch.cancel()
    blame_prefetch.cancel()
    blame_cache.forget()
    blame_diff.forget()
    output.use_store(None)
    pager.enable()
    gc.unfreeze()


def _journal_active(command: str) -> bool:
    """A checkpoint made from `watch`'s journal needs no `git status` pass."""
    if command != "checkpoint":
        return False
    from pathlib import Path

    from oxide_git.core.errors import OxideError
    from oxide_git.git.repo import find_repo
    from oxide_git.git.watch_journal import active

    try:
        return active(find_repo(Path.cwd()))
    except (OxideError, OSError):
        return False


# Commands whose work is done when they return (files closed, index transactions committed, no
# threads): they skip the interpreter's teardown, ~20 ms of freeing pygit2, click and the rest
# that a rewind or a long resume would otherwise spend after its last write.
_QUICK_EXIT = ("checkpoint", "rewind", "undo", "resume", "blame")


def _exit_now(code: object) -> None:
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # what the interpreter does with a non-integer exit code
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe (the reader is gone), or file (the MCP SDK's stdout)
        pass
    os._exit(code or 0)


if __name__ == "__main__":
    main()
