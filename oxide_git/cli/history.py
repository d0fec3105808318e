"""Going back: resume, fork, rewind, undo."""

from __future__ import annotations

import itertools
import os
import re
import sys
from typing import TYPE_CHECKING

import click

from oxide_git.agents import AGENT_NAMES
from oxide_git.cli import main, make_context
from oxide_git.cli.output import ago, cid, counted, emit_json, sid, status, stream_document
from oxide_git.core.errors import OxideError

if TYPE_CHECKING:
    from oxide_git.ops.undo import UndoResult


def confirm(summary: str, yes: bool, what: str = "change files") -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise OxideError(f"refusing to {what} without confirmation (not a terminal)",
                         hint="add --yes (or look first with --dry-run)")
    click.echo(summary, err=True)
    if not click.confirm("Go ahead?", default=False, err=True):
        raise OxideError("aborted; nothing was changed")


def files_summary(files: dict[str, list[str]], dropped: int = 0) -> str:
    lines = []
    for label, key in (("add", "added"), ("modify", "modified"), ("delete", "deleted")):
        for p in files.get(key, []):
            lines.append(f"  {label:6} {p}")
    if dropped:
        lines.append(f"  drop   the conversation's last {dropped} record(s)")
    for p in files.get("left", []):
        lines.append(f"  leave  {p} (an agent's own session file: never rewound)")
    return "\n".join(lines) or "  (no change)"


def singular(line: str) -> str:
    """``1 other parts were left out`` -> ``1 other part was left out`` (the agents' lines)."""
    if not line.startswith("1 "):
        return line
    return re.sub(r"\bwere\b", "was", re.sub(r"\b(parts|events|messages|calls|results)\b",
                                              lambda m: m.group(1)[:-1], line, count=1), count=1)


_CHANGE_KINDS = (  # what each exporter's line says happened, as the summary counts it
    ("left out", ("left out", "dropped")),
    ("turned into text", ("into text", "plain text", "as text", "not sent back")),
    ("handed over as {agent}'s own calls", ("handed over",)),
)


def translation_summary(agent: str, changes: list[str], verbose: bool) -> str:
    """`resume --into`'s one line on what changed in translation (``--verbose`` lists each
    change, ``--json`` has them as ``lost``); a warning only when something was left out."""
    counts = dict.fromkeys([k for k, _words in _CHANGE_KINDS] + ["other"], 0)
    for line in changes:
        kind = next((k for k, words in _CHANGE_KINDS if any(w in line for w in words)), "other")
        counts[kind] += 1
    parts = [f"{n} {kind.format(agent=agent) if kind != 'other' else 'other'}"
             for kind, n in counts.items() if n]
    line = (f"{len(changes)} kind(s) of content changed in translation for {agent}: "
            + ", ".join(parts) + ("" if verbose else " (`--verbose` lists them)"))
    return ("warning: " if counts["left out"] else "") + line


def _written(paths: list[str]) -> list[str]:
    """What `resume --into` wrote, in a few lines (OpenCode's store is a file per part)."""
    if len(paths) <= 3:
        return [f"wrote {p}" for p in paths]
    common = os.path.commonpath(paths)
    return [f"wrote {len(paths)} files under {common}"]


def _check_installed(agent: str) -> None:
    """``--exec`` runs the agent: say it is missing before anything is written."""
    import shutil

    if shutil.which(agent) is None:
        raise OxideError(f"cannot run {agent}: it is not installed (not on PATH); nothing was written",
                         hint=f"install {agent}, or leave out --exec to write the session and "
                              "print the command that continues it")


@main.command()
@click.argument("session", required=False)
@click.option("--last", is_flag=True, help="The most recent session of this worktree (else of the project).")
@click.option("--into", "agent", type=click.Choice(AGENT_NAMES), help="Hand the session to this agent.")
@click.option("--exec", "run", is_flag=True, help="With --into: run the agent's resume command.")
@click.option("--format", "fmt", type=click.Choice(["json", "markdown"]),
              help="Print the model context: from the last compaction (its summary, the earlier "
                   "messages it kept), then what came after.")
@click.option("--full", is_flag=True, help="With --format: ignore compaction, give every message.")
@click.option("--all", "all_", is_flag=True, help="Picker: sessions of every worktree.")
@click.option("--with-memory", is_flag=True, help="With --format json: MEMORY.md first, as a system part.")
@click.option("--json", "as_json", is_flag=True, help="With --into: print the result as JSON.")
@click.option("-v", "--verbose", is_flag=True,
              help="With --into: list each change made in translation (one line sums them up).")
def resume(session: str | None, last: bool, agent: str | None, run: bool, fmt: str | None,
           full: bool, all_: bool, with_memory: bool, as_json: bool, verbose: bool) -> None:
    """Resume a session: in an agent (--into), or as model context (--format).

    Without SESSION or --last, an interactive picker is shown on a terminal.
    """
    from oxide_git.ops import resume as ops

    if run and agent is None:
        raise click.UsageError("--exec needs --into AGENT")
    if run and agent is not None:
        _check_installed(agent)
    ctx = make_context()
    if last:
        session = ops.last_session(ctx)
    if session is None:
        from oxide_git.cli.picker import pick

        choice = pick(ctx, all_worktrees=all_)
        if choice is None:
            return
        session, picked = choice.session, choice.action
        if picked != "resume":
            _picked_action(ctx, session, picked)
            return
        if agent is None:
            agent = choice.agent
            if agent is None:
                return
            run = run or choice.run
    if fmt:
        from oxide_git.ops.browse import session_json

        if fmt == "json":
            s, items = ops.context_json(ctx, session, full=full)
            head = None
            if with_memory:
                from oxide_git.ops.memory import context_message as memory_context

                head = memory_context(ctx)
            stream_document(session_json(s), itertools.chain([head] if head else [], items))
        else:
            s, messages = ops.context(ctx, session, full=full)
            from oxide_git.core.render import markdown_message

            click.echo(f"# {s.title or s.id}\n")
            for seq, m in messages:
                click.echo(markdown_message(seq, m))
        return
    if agent is None:
        click.echo(session)
        status("hint: add --into AGENT to continue it in an agent, or --format json for its context")
        return
    if run:
        _check_installed(agent)
    res = ops.into(ctx, session, agent)
    if as_json:
        emit_json(res.to_dict())
    else:
        for line in _written(list(res.written)):
            status(line)
        for p in res.kept:
            status(f"kept {p} (the agent's own copy is as new or newer)")
        for p in res.set_aside:
            status(f"set aside {p}: the agent's own copy, which differed from the conversation "
                   "written now (a rewind left it longer, a merge shorter); the agent reads the new one")
        changes = list(dict.fromkeys(res.lost))  # each once
        if changes:
            status(translation_summary(agent, changes, verbose))
        for line in changes if verbose else []:
            status(f"  {singular(line)}")
        click.echo(" ".join(res.command) if not res.cwd else f"cd {res.cwd} && {' '.join(res.command)}")
    if run:
        os.chdir(res.cwd or ".")
        try:
            os.execvp(res.command[0], list(res.command))
        except OSError as e:
            raise OxideError(f"cannot run {res.command[0]}: {e.strerror}",
                             hint=f"is {res.command[0]} installed and on PATH?") from e


@main.command()
@click.argument("session")
@click.option("--at", "at", default=None, help="Fork before this message (id prefix or seq number).")
@click.option("--title", default=None, help="Title of the new session.")
@click.option("--json", "as_json", is_flag=True, help="Print the new session as JSON.")
def fork(session: str, at: str | None, title: str | None, as_json: bool) -> None:
    """Start a new session from SESSION's history before a message; prints its id."""
    from oxide_git.ops.fork import fork as do_fork
    from oxide_git.store.journal import ensure_writable

    ctx = make_context()
    ensure_writable(ctx)  # a fork that could not be journaled (for undo) is not made
    res = do_fork(ctx, session, at=at, title=title)
    if as_json:
        emit_json(res.to_dict())
        return
    click.echo(res.id)
    kept = ctx.index.query("SELECT count(*) FROM messages WHERE session_id=? AND seq<? AND real=1",
                           (res.parent_id, res.fork_seq))
    where = f"before its #{res.fork_seq}" if at is not None else "at its end"
    status(f"Forked {sid(res.parent_id)} {where} as {sid(res.id)}: it holds "
           f"{counted(int(kept[0][0]), res.fork_seq, noun=True)}"
           + (f"; its code checkpoint is {cid(res.fork_checkpoint)}" if res.fork_checkpoint else ""))


@main.command()
@click.argument("checkpoint")
@click.option("--code", "mode", flag_value="code", help="Restore the files only.")
@click.option("--conversation", "mode", flag_value="conversation", help="Move the conversation back only.")
@click.option("--both", "mode", flag_value="both", default=True, help="Both (the default).")
@click.option("-n", "--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--only-mine", is_flag=True, help="Leave paths other sessions changed since then alone.")
@click.option("-f", "--force", is_flag=True, help="Restore even over other sessions' changes or worktrees.")
@click.option("--memory", is_flag=True, help="Also revert the memory writes made after CHECKPOINT.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def rewind(checkpoint: str, mode: str, dry_run: bool, yes: bool, only_mine: bool, force: bool,
           memory: bool, as_json: bool) -> None:
    """Put the files and/or the conversation back to CHECKPOINT (undo with `git oxide undo`)."""
    from oxide_git.ops.rewind import rewind as do_rewind

    ctx = make_context()
    kw = {"code": mode in ("code", "both"), "conversation": mode in ("conversation", "both"),
          "force": force, "only_mine": only_mine, "memory": memory}
    if not dry_run and not yes:
        preview = do_rewind(ctx, checkpoint, dry_run=True, **kw)
        confirm(f"Rewind to {cid(preview.checkpoint['id'])} will:\n" +
                 files_summary(preview.files, preview.messages_dropped) +
                 "".join(f"\n  {'revert' if memory else 'keep':6} memory write {w['id'][:12]} "
                         f"{w['summary']}" for w in preview.memory_writes), yes or as_json)
    res = do_rewind(ctx, checkpoint, dry_run=dry_run, **kw)
    if as_json:
        emit_json(res.to_dict())
        return
    click.echo(files_summary(res.files, res.messages_dropped))
    for p in res.skipped:
        status(f"left alone (changed by another session): {p}")
    for s in res.checkpoint.get("skipped", []):
        if s.get("redacted"):  # a pulled twin (checkpoint_screen): the file here is not touched
            status(f"left alone: {s['path']} ({s['reason']}); your copy is as it was")
        else:
            status(f"note: the checkpoint left out {s['path']} ({s['reason']}); it is not restored")
    for w in res.memory_writes:
        status(f"memory write after the checkpoint: {w['id'][:12]} {w['summary']}")
    if res.memory_reverted:
        status(f"Reverted {len(res.memory_writes)} memory write(s) in {res.memory_reverted[:12]}")
    elif res.memory_writes:
        status("Memory keeps these writes (add --memory to revert them)")
    if res.files.get("left"):
        status(f"{'Would leave' if dry_run else 'Left'} {len(res.files['left'])} agent session file(s) "
               "as they are: rewinding them would lose the conversation written since")
    if dry_run:
        status("Dry run: nothing was written")
    else:
        status(f"Rewound to {cid(res.checkpoint['id'])}; the state before is checkpoint "
               f"{cid(res.before_checkpoint)} (`git oxide undo` to go back)")


@main.command()
@click.option("-n", "--dry-run", is_flag=True, help="Show what would be undone.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("-f", "--force", is_flag=True,
              help="Overwrite files and refs changed since the operation too (saved first), and undo "
                   "past a later gc.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def undo(dry_run: bool, yes: bool, force: bool, as_json: bool) -> None:
    """Undo the last rewind, fork, rm or pull of this worktree (run again to redo).

    Puts back only what the operation changed and is still as it left it: a file or
    ref changed since (edited, committed, created, deleted, moved) is kept and listed;
    --force overwrites it too, after saving the present state in a checkpoint it names.
    Says what it is about to undo and how long ago it was made, and asks on a
    terminal (--yes otherwise).
    """
    from oxide_git.ops.undo import undo as do_undo

    ctx = make_context()
    if not dry_run and not yes and not as_json:
        preview = do_undo(ctx, dry_run=True, force=force)
        if preview.changes:  # with nothing to change the undo itself says why
            confirm(_undo_line(preview.undone, ctx.now_ms, "This will") + ":\n"
                     + _undo_plan(preview), False, what="undo")
    res = do_undo(ctx, dry_run=dry_run, force=force)
    if as_json:
        emit_json(res.to_dict())
        return
    click.echo(_undo_plan(res))
    status(_undo_line(res.undone, ctx.now_ms, "Would" if dry_run else ""))
    op = str(res.undone.get("op") or "operation")
    if res.head:
        then, now = (str(res.head.get(k) or "")[:7] or "none" for k in ("then", "now"))
        status(f"note: HEAD moved since the {op} (was {then}, now {now})"
               + ("; what was committed since is kept" if res.files.get("kept") else ""))
    kept = [f"{n} {what}" for n, what in ((len(res.files.get("kept", [])), "path(s) changed"),
                                            (len(res.kept_refs), "ref(s) moved")) if n]
    if kept:
        status(f"{'Would keep' if dry_run else 'Kept'} {' and '.join(kept)} since the {op}, as they are"
               + (" (`git oxide undo --force` overwrites them, after saving them)" if dry_run else ""))
    if res.checkpoint:
        status(f"The state before this undo is checkpoint {cid(res.checkpoint)}"
               + (f": it holds the {len(res.files['overwritten'])} overwritten path(s)"
                  if res.files.get("overwritten") else ""))


def _undo_plan(res: UndoResult) -> str:
    """Each path and ref the undo puts back, keeps (changed since) or overwrites (``--force``)."""
    op = str(res.undone.get("op") or "operation")
    saved = f"saved in checkpoint {cid(res.checkpoint)}" if res.checkpoint else "saved in a checkpoint first"
    forced = set(res.files.get("overwritten", []))
    lines = []
    for label, key in (("add", "added"), ("modify", "modified"), ("delete", "deleted")):
        for p in res.files.get(key, []):
            lines.append(f"  {label:6} {p}" + (f" (changed since the {op}; {saved})" if p in forced else ""))
    for p in res.files.get("kept", []):
        lines.append(f"  keep   {p} (changed since the {op})")
    for name in res.kept_refs:
        lines.append(f"  keep   {name} (moved since the {op})")
    for name, was in res.overwritten_refs.items():
        trash = f"; the newer state stays as {was['trash']}" if was.get("trash") else ""
        lines.append(f"  reset  {name} (moved since the {op}{trash})")
    for p in res.files.get("left", []):
        lines.append(f"  leave  {p} (an agent's own session file: never rewound)")
    return "\n".join(lines) or "  (no change)"


def _undo_line(u: dict[str, object], now_ms: int, lead: str) -> str:
    verb = str(u.get("action") or "undo")
    at = u.get("at")
    when = f" (made {ago(at, now_ms)})" if isinstance(at, int) else ""
    head = f"{lead} {verb}" if lead else ("Undid" if verb == "undo" else "Redid")
    return f"{head}: {u.get('what') or u.get('summary')}{when}"


def _picked_action(ctx: object, session: str, action: str) -> None:
    """What the picker's Enter menu chose, other than resuming: show, fork, export."""
    import subprocess

    argv = {"show": ["show", session], "fork": ["fork", session],
            "export": ["export", session, "--format", "markdown", "-o", f"session-{session[:12]}.md"]}[action]
    raise SystemExit(subprocess.call([sys.executable, "-m", "oxide_git", *argv]))
