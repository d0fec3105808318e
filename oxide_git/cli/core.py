"""Store commands: init, checkpoint, checkpoints, reindex, doctor."""

from __future__ import annotations

import sys
from typing import Any

import click

from oxide_git.cli import main, make_context
from oxide_git.cli.output import ago, cid, clip, emit_json, json_text, short, sid, status, table
from oxide_git.hooks.agent_hooks import hooked_agents


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--hooks", is_flag=True, help="Also install the git hooks (see `git oxide hooks`).")
@click.option("--agent-hooks", multiple=True, type=click.Choice(hooked_agents()),
              help="Also configure this agent's own hooks to capture into git oxide.")
@click.option("--mcp", "mcp_agents", multiple=True, type=click.Choice(["claude", "codex", "opencode"]),
              help="Also register `git oxide mcp` in this agent's own MCP configuration.")
@click.option("--remove", is_flag=True, help="With --hooks/--agent-hooks/--mcp: remove them instead.")
@click.option("-n", "--dry-run", is_flag=True, help="With --mcp: say what would change, change nothing.")
def init(as_json: bool, hooks: bool, agent_hooks: tuple[str, ...], mcp_agents: tuple[str, ...],
         remove: bool, dry_run: bool) -> None:
    """Create <git-common-dir>/oxide/ and the index (nothing else is touched).

    With --hooks and --agent-hooks, also set up automatic capture; with --mcp,
    let the agent ask this repository's history (`git oxide mcp`).
    """
    from oxide_git.ops.checkpoint import init as do_init

    if dry_run and (hooks or agent_hooks or not mcp_agents):
        raise click.UsageError("--dry-run goes with --mcp alone")
    ctx = make_context()
    res = None if dry_run else do_init(ctx)
    if hooks or agent_hooks:
        from oxide_git.cli.capture import init_capture

        init_capture(hooks, agent_hooks, remove)
    changes = []
    if mcp_agents:
        from oxide_git.mcp.config import configure

        changes = [c for agent in mcp_agents for c in configure(ctx, agent, remove=remove, dry_run=dry_run)]
    if as_json:
        emit_json({**(res.__dict__ if res else {}), **({"mcp": [c.to_dict() for c in changes]}
                                                        if mcp_agents else {})})
        return
    if res is not None:
        status(("Initialised" if res.created else "Already initialised") + f" git oxide in {res.oxide_dir}")
    for c in changes:
        status(c.describe())
    if any(c.agent == "claude" and c.scope == "project" and c.action == "add" for c in changes):
        status("hint: Claude Code asks once to approve a server of .mcp.json (`claude -p` needs no approval)")


@main.command()
@click.option("-m", "--message", default="", help="What this checkpoint is for.")
@click.option("--session", default=None, help="Tie it to this session (default: the current one).")
@click.option("--kind", default="manual", hidden=True,
              type=click.Choice(["manual", "prompt", "pre-commit", "before-rewind", "watch"]))
@click.option("--json", "as_json", is_flag=True, help="Print the checkpoint as JSON.")
def checkpoint(message: str, session: str | None, kind: str, as_json: bool) -> None:
    """Snapshot the whole worktree as a commit on a hidden ref; prints its id.

    The snapshot holds tracked files and untracked files that are not ignored;
    your HEAD, branches, index and stash are not changed. While `git oxide watch`
    runs, it takes the checkpoint (same result, without starting Python's heavy
    parts here); OXIDE_FASTPATH=0 always does it in this process.
    """
    out, err = checkpoint_output(make_context(), message, session, kind, as_json)
    sys.stdout.write(out)
    sys.stderr.write(err)


def checkpoint_output(
    ctx: Any, message: str, session: str | None, kind: str, as_json: bool
) -> tuple[str, str]:
    """Take the checkpoint; return what the command prints (stdout, stderr). The watcher serves
    `git oxide checkpoint` with this same function (``watch_server``)."""
    from oxide_git.git.watch_journal import status_from_journal
    from oxide_git.ops.checkpoint import checkpoint as take

    st = status_from_journal(ctx.repo)  # `watch` running: only the paths it saw change
    cp = take(ctx, text=message, kind=kind, session=session, status=st)
    if as_json:
        return json_text(cp.to_dict()), ""
    from oxide_git.cli.current import current_line

    tie = (f"tied to {current_line(ctx, cp.session_id)}"
           + ("" if session else " (the current one: `git oxide status`)")) if cp.session_id else \
        "tied to no session (`git oxide status`)"
    if getattr(cp, "reused", False):
        err = (f"Checkpoint {cid(cp.id)} already holds this worktree as it is (same files, same HEAD); "
               f"nothing new written; {tie}\n")
    else:
        err = (f"Checkpoint {cid(cp.id)} of {ctx.repo.worktree_id} ({cp.branch}): "
               f"{cp.files_changed} file(s) differ from HEAD; {tie}\n")
    err += "".join(f"warning: left out {s['path']}: {s['reason']}\n" for s in cp.skipped)
    return cp.id + "\n", err


@main.command()
@click.option("--session", default=None, help="Only this session's checkpoints.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def checkpoints(session: str | None, as_json: bool) -> None:
    """List checkpoints, newest first."""
    from oxide_git.ops.browse import list_checkpoints

    ctx = make_context()
    rows = list_checkpoints(ctx, session)
    if as_json:
        emit_json(rows)
        return
    table(["ID", "SESSION", "KIND", "WORKTREE", "BRANCH", "HEAD", "FILES", "CREATED", "EXPIRY", "MESSAGE"],
          [[cid(r["id"]), sid(r["session_id"]) if r["session_id"] else "-", r["kind"],
            r["worktree"], r["branch"],
            short(r["head"], 8), r["files_changed"], ago(r["created_at"], ctx.now_ms),
            r.get("expiry", ""), clip(r["message"], 40)] for r in rows])
    for r in rows:  # pulled redacted (checkpoint_screen): which files the twin lacks
        paths = [s["path"] for s in r["skipped"] if s.get("redacted")]
        if paths:
            status(f"checkpoint {cid(r['id'])} was pushed without {', '.join(paths)}: "
                   "a rewind to it leaves them alone")


@main.command()
@click.option("--full", is_flag=True, help="Drop the index and rebuild it from scratch.")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def reindex(full: bool, as_json: bool) -> None:
    """Rebuild the SQLite index from refs/oxide/* (only what changed, or --full)."""
    from oxide_git.store.reindex import reindex as do_reindex

    ctx = make_context()
    res = do_reindex(ctx, full=full)
    if as_json:
        emit_json(res.__dict__)
        return
    status(f"Reindexed: {res.sessions_updated} session(s) updated, {res.messages_indexed} "
           f"message(s), {res.checkpoints_added} checkpoint(s) added, "
           f"{res.sessions_removed + res.checkpoints_removed} stale row(s) removed")
    for p in res.problems or []:
        status(f"warning: {p}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("--fix", is_flag=True,
              help="Repair what can be repaired (reindex, stale locks, messages in history alone: forks).")
def doctor(as_json: bool, fix: bool) -> None:
    """Check refs, the index and oxide's per-worktree state; say what is wrong and how to fix it."""
    from oxide_git.hooks.install import summary
    from oxide_git.ops.doctor import diagnose

    ctx = make_context()
    report = diagnose(ctx, fix=fix, hooks=summary)
    if as_json:
        emit_json(report)
        return
    for f in report["findings"]:
        click.echo(f"{f['level']}: {f['message']}")
        if f.get("hint"):
            click.echo(f"hint: {f['hint']}")
    for k, v in report["usage"].items():
        click.echo(f"{k}: {v}")
    if report.get("hooks"):
        click.echo(f"hooks: {report['hooks']}")
    if not report["findings"]:
        click.echo("ok: the store is consistent")
    if any(f["level"] == "error" for f in report["findings"]):
        raise SystemExit(1)
