"""`git oxide watch`, and what the watcher answers over its socket (``watch.server``): `checkpoint`
and `search`, by the CLI's own code. The command hands ``checkpoint_handler`` to the watcher
(``watch.daemon.run``), so the watch daemon never imports the CLI."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import emit_json, status
from oxide_git.git.repo import Repo
from oxide_git.watch import fastpath
from oxide_git.watch.server import Handler, Request, env_differs


@main.command()
@click.option("--daemon", is_flag=True, help="Run in the background (pid file under .git/oxide/).")
@click.option("--stop", is_flag=True, help="Stop the background watcher.")
@click.option("--json", "as_json", is_flag=True, help="With --daemon/--stop: print the result as JSON.")
def watch(daemon: bool, stop: bool, as_json: bool) -> None:
    """Import agent sessions as they grow, checkpoint each new prompt, journal changed files.

    In the foreground until ^C, or --daemon; `git oxide watch --stop` stops it.
    While it runs, `git oxide checkpoint` and `git oxide search` are answered
    by it over a unix socket (<git-common-dir>/oxide/run/, only for your
    user): the same output without starting click and pygit2, or opening the
    index. OXIDE_FASTPATH=0 turns that off.
    """
    from oxide_git.watch import daemon as w

    ctx = make_context()
    if stop:
        res = w.stop(ctx.repo)
    elif daemon:
        res = w.start_daemon(ctx.repo)
    else:
        status("Watching (^C to stop)")
        w.run(ctx, answer=checkpoint_handler)
        return
    if as_json:
        emit_json(res)
    else:
        status(res["message"])


def checkpoint_handler(common_dir: Path, repos: Mapping[str, Repo]) -> Handler:
    """Answer `git oxide checkpoint` and `git oxide search` as the commands would (None: let the
    client do it).

    ``repos`` are the watcher's open worktrees (top folder -> Repo): their pygit2 handles are
    warm (pack indexes and delta bases of HEAD's trees in libgit2's caches), which on a packed
    100,000-file tree is most of a checkpoint's time in a fresh process. libgit2 reads refs,
    HEAD and config from disk on each use and rescans packs on a miss, so nothing goes stale.
    """
    import click

    from oxide_git.cli.core import checkpoint as checkpoint_command
    from oxide_git.cli.core import checkpoint_output
    from oxide_git.cli.output import use_store
    from oxide_git.cli.sessions import search as search_command
    from oxide_git.git.repo import find_repo
    from oxide_git.ops.search_command import output as search_output
    from oxide_git.store.context import Context
    from oxide_git.store.index import Index

    own = os.path.realpath(common_dir)
    kept: dict[str, tuple[Index, int]] = {}  # index.db path -> (open index, its inode)

    def _open_index(repo: Repo) -> Index | None:
        """The index kept open from the last request, while index.db is still that file."""
        path = str(repo.oxide_dir / "index.db")
        got = kept.pop(path, None)
        if got is None:
            return None
        try:
            if os.stat(path).st_ino == got[1]:
                return got[0]
        except OSError:
            pass
        got[0].close()
        return None

    def _keep_index(ctx: Context) -> None:
        if ctx._index is None:
            return
        try:
            kept[str(ctx._index.path)] = (ctx._index, os.stat(ctx._index.path).st_ino)
        except OSError:
            ctx.close()

    own_mask = os.umask(0o022)  # read once, on the watcher's thread before it serves
    os.umask(own_mask)

    def handle(req: Request) -> tuple[int, bytes, bytes] | None:
        command = {"checkpoint": checkpoint_command, "search": search_command}.get(req.command)
        if command is None or {"-h", "--help"} & set(req.args):
            return None
        if env_differs(req.env, dict(os.environ)) or any(req.env.get(k) for k in fastpath.REPO_ENV):
            return None
        if own_mask != req.umask:
            return None
        try:
            params = command.make_context(req.command, list(req.args)).params
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            return None  # the command prints the usage error itself
        repo = find_repo(Path(req.cwd), environ=req.env)
        if os.path.realpath(repo.common_dir) != own:
            return None
        warm = repos.get(str(repo.workdir))
        if warm == repo:
            repo = warm
        ctx = Context(repo, req.now_ms, dict(req.env), _open_index(repo))
        try:
            if req.command == "search":  # read-only: the index as the command would open it
                before = use_store(ctx)  # ids abbreviated against this store, as the command does
                try:
                    out, err = search_output(ctx, params["query"], params["limit"], params["as_json"])
                finally:
                    use_store(before)
            else:
                out, err = checkpoint_output(ctx, params["message"], params["session"], params["kind"],
                                             params["as_json"])
        except BaseException:
            ctx.close()  # a fresh connection next time
            raise
        _keep_index(ctx)
        out_enc, out_errors, err_enc, err_errors = req.encodings
        return 0, out.encode(out_enc, out_errors), err.encode(err_enc, err_errors)

    return handle
