"""`git oxide export`: sessions (named, or found through a commit or a range) as Markdown, HTML,
JSON or JSONL. Output is deterministic (no clock) and redacted again on the way out; the JSON
forms follow docs/export.schema.json (``FORMAT``/``VERSION``).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import pygit2

from oxide_git.core.errors import NotFound, OxideError
from oxide_git.core.model import Message, to_iso
from oxide_git.core.secret_files import SecretNames
from oxide_git.export.views import CheckpointView as CheckpointView
from oxide_git.export.views import SessionView as SessionView
from oxide_git.export.views import replay as replay
from oxide_git.export.views import spool as spool
from oxide_git.export.views import tool_names as tool_names
from oxide_git.git import refs
from oxide_git.git.repo import clean_git_env
from oxide_git.ops.browse import message_json, session_json
from oxide_git.store import redact, sessionlog, snapshots
from oxide_git.store.context import Context
from oxide_git.store.notes import parse_note

FORMAT, VERSION = "git-oxide-export", 1
FORMATS = ("markdown", "html", "json", "jsonl")
MAX_FILES = 500  # files listed per checkpoint
MAX_PATCH = 256 * 1024  # characters of diff text per checkpoint (HTML)
_TRAILER = re.compile(r"^Oxide-Session:\s*([A-Za-z0-9_-]+)\s*$", re.M)


class BadRange(OxideError):
    """A commit or range git cannot resolve."""


# -- which sessions -------------------------------------------------------------------------------


def _log_records(ctx: Context, args: list[str]) -> list[tuple[str, str, str]]:
    """(commit, message, oxide note) of each commit ``git log args`` lists, oldest first."""
    r = subprocess.run(
        ["git", "log", "--reverse", "--notes=" + refs.NOTES, "--format=%H%x00%B%x00%N%x1e", *args, "--"],
        cwd=ctx.repo.workdir, capture_output=True, text=True, env=clean_git_env())
    if r.returncode != 0:
        raise BadRange(f"cannot list {' '.join(args)}: {r.stderr.strip()}",
                       hint="fetch the commits first, or check the range (A..B)")
    out = []
    for rec in r.stdout.split("\x1e"):
        fields = rec.strip("\n").split("\x00")
        if len(fields) >= 3 and fields[0].strip():
            out.append((fields[0].strip(), fields[1], fields[2]))
    return out


def sessions_for(ctx: Context, *, commit: str | None = None, rng: str | None = None
                 ) -> tuple[list[str], list[str]]:
    """Sessions behind a commit or a range, through notes and ``Oxide-Session`` trailers, in the
    order the commits were made; returns (session ids, problems)."""
    args = ["--no-walk", commit] if commit else [rng or "HEAD"]
    found: list[str] = []
    problems: list[str] = []
    git = ctx.repo.git
    for _sha, body, note in _log_records(ctx, args):
        data = parse_note(note) if note.strip() else {"sessions": [], "checkpoints": []}
        cands = [*data["sessions"], *_TRAILER.findall(body)]
        for cp in data["checkpoints"]:
            obj = git.get(cp) if re.fullmatch(r"[0-9a-f]{40,64}", cp) else None
            if isinstance(obj, pygit2.Commit):
                sid = snapshots.parse_commit(obj, "").session_id
                if sid:
                    cands.append(sid)
        for c in cands:
            if c in found:
                continue
            try:
                sid = ctx.index.resolve_session(c)
            except OxideError:
                problems.append(f"session {c} is not in this repository (fetch refs/oxide/*?)")
                continue
            if sid not in found:
                found.append(sid)
    return found, sorted(set(problems))


def resolve(ctx: Context, sessions: list[str], commit: str | None, rng: str | None
            ) -> tuple[list[str], list[str]]:
    if commit or rng:
        return sessions_for(ctx, commit=commit, rng=rng)
    if not sessions:
        from oxide_git.store.writes import current_session

        cur = current_session(ctx)
        if cur is None:
            raise NotFound("no session to export",
                           hint="name sessions, or use --commit SHA or --range A..B")
        sessions = [cur]
    out: list[str] = []
    for s in sessions:
        sid = ctx.index.resolve_session(s)
        if sid not in out:
            out.append(sid)
    return out, []


# -- what a session holds -------------------------------------------------------------------------


def checkpoints_of(ctx: Context, sid: str, *, patches: bool, r: redact.Redactor | None
                   ) -> list[CheckpointView]:
    git = ctx.repo.git
    cps: list[tuple[snapshots.Checkpoint, pygit2.Commit]] = []
    for name, oid in refs.iter_refs(git, f"{refs.CHECKPOINTS}{sid}/"):
        commit = git.get(oid)
        if isinstance(commit, pygit2.Commit):
            cps.append((snapshots.parse_commit(commit, name), commit))
    cps.sort(key=lambda t: (t[0].created_at, t[0].id))
    names = SecretNames.of(ctx) if patches else None
    return [_checkpoint_view(git, cp, c, names, r) for cp, c in cps]


def _checkpoint_view(git: pygit2.Repository, cp: snapshots.Checkpoint, commit: pygit2.Commit,
                     names: SecretNames | None, r: redact.Redactor | None) -> CheckpointView:
    """``names``: the secret file names when patches are shown (None: no patches)."""
    patches = names is not None
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    files, adds, dels, text, size, cut = [], 0, 0, [], 0, False
    for i, patch in enumerate(diff):
        if patch is None:
            continue
        _ctx, a, d = patch.line_stats
        adds, dels = adds + a, dels + d
        delta = patch.delta
        if i < MAX_FILES:
            files.append({"path": delta.new_file.path or delta.old_file.path,
                          "status": delta.status_char(), "additions": a, "deletions": d,
                          "binary": bool(delta.is_binary)})
        if names is not None and not cut:
            path = delta.new_file.path or delta.old_file.path
            t = f"diff --git a/{path} b/{path}\n(a secret file by its name: not exported)\n" \
                if names.match(path) else patch.text or ""
            if size + len(t) > MAX_PATCH:
                cut = True
            else:
                text.append(t)
                size += len(t)
    patch_text = "".join(text) if patches else None
    if patch_text and r is not None:
        patch_text = r.text(patch_text, Counter())
    title = cp.text or f"{cp.kind} checkpoint"
    if r is not None:
        title = r.text(title, Counter())
    return CheckpointView(cp.id, cp.kind, cp.message_id, cp.branch, cp.worktree, cp.head,
                          to_iso(cp.created_at), title, files, adds, dels, len(diff),
                          patch_text, cut)


def load(ctx: Context, sid: str, *, patches: bool = False) -> SessionView:
    log = sessionlog.load_required(ctx.repo, sid)
    r = redact.redactor_for(ctx)
    s = r.session(log.session) if r is not None else log.session
    view = SessionView(s, log.count, checkpoints_of(ctx, sid, patches=patches, r=r),
                       dict(log.session.redactions))

    def messages() -> Iterator[tuple[int, Message]]:
        for seq, m in sessionlog.iter_messages(ctx.repo, log.commit.tree):
            if r is not None:
                m, hits = r.message(m)
                view.extra.update(hits)
            yield seq, m

    view._messages = messages()
    return view


# -- JSON and JSONL -------------------------------------------------------------------------------


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, default=str)


def _session_head(v: SessionView) -> dict[str, Any]:
    d = session_json(v.session, v.count)
    d.pop("redactions", None)
    return d


def write_json(views: Iterator[SessionView], out: IO[str], blame: dict[str, Any] | None = None) -> None:
    head = f', "blame": {_dumps(blame)}' if blame is not None else ""
    out.write(f'{{"format": "{FORMAT}", "version": {VERSION}{head}, "sessions": [')
    for i, v in enumerate(views):
        msgs = [_dumps(message_json(seq, m)) for seq, m in v.messages()]
        out.write(("," if i else "") + '\n{"session": ' + _dumps(_session_head(v)))
        out.write(',\n "redactions": ' + _dumps(v.redactions))
        out.write(',\n "checkpoints": ' + _dumps([c.to_json() for c in v.checkpoints]))
        out.write(',\n "messages": [' + ",\n  ".join(msgs) + "]}")
    out.write("\n]}\n")


def write_jsonl(views: Iterator[SessionView], out: IO[str], blame: dict[str, Any] | None = None) -> None:
    out.write(_dumps({"type": "export", "format": FORMAT, "version": VERSION}) + "\n")
    if blame is not None:
        out.write(_dumps({"type": "blame", **blame}) + "\n")
    for v in views:
        sid = v.session.id
        msgs = [_dumps({"type": "message", "session_id": sid, **message_json(seq, m)})
                for seq, m in v.messages()]
        out.write(_dumps({"type": "session", **_session_head(v), "redactions": v.redactions}) + "\n")
        for c in v.checkpoints:
            out.write(_dumps({"type": "checkpoint", "session_id": sid, **c.to_json()}) + "\n")
        out.writelines(m + "\n" for m in msgs)


# -- the operation --------------------------------------------------------------------------------


@dataclass
class ExportResult:
    sessions: list[str]
    problems: list[str]
    redactions: dict[str, int]


def export(ctx: Context, ids: list[str], fmt: str, out: IO[str], *, blame: Any = None) -> ExportResult:
    """Write the sessions ``ids`` to ``out`` in ``fmt``; ``blame`` (a ``blame_range.RangeSummary``
    of the range exported) goes first: who wrote the range's lines."""
    if fmt not in FORMATS:
        raise OxideError(f"unknown format {fmt!r}", hint="one of: " + ", ".join(FORMATS))
    total: Counter[str] = Counter()
    loaded: list[SessionView] = []

    def views() -> Iterator[SessionView]:
        for sid in ids:
            v = load(ctx, sid, patches=fmt == "html")
            if fmt == "html":
                from oxide_git.ops.usage import session_total

                v.usage = session_total(ctx, sid)
            loaded.append(v)
            yield v

    data = blame.to_json() if blame is not None else None
    if fmt == "json":
        write_json(views(), out, data)
    elif fmt == "jsonl":
        write_jsonl(views(), out, data)
    elif fmt == "markdown":
        from oxide_git.export.markdown import write_markdown

        write_markdown(views(), out, blame.markdown() if blame is not None else "")
    else:
        from oxide_git.export.html import write_html

        write_html(views(), out, data)
    for v in loaded:
        total.update(v.redactions)
    return ExportResult(ids, [], dict(sorted(total.items())))
