"""Project memory on ``refs/oxide/memory``: ``MEMORY.md`` (the index) plus ``<topic>.md`` files.

Like Claude Code's auto memory, but in git: one commit per write, whose message names the session
and the message that wrote it (trailers ``Oxide-Session``, ``Oxide-Message``, ``Oxide-Time``).
A conversation rewind can revert the writes made after its checkpoint (``revert_after``) in a new
commit, so the log keeps both the write and its revert. ``import_claude``/``export_claude`` move
the files from/to ``<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<encoded cwd>/memory/``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from oxide_git.core.errors import NotFound, OxideError, Refused
from oxide_git.git import refs
from oxide_git.git.objects import BLOB
from oxide_git.store import trees
from oxide_git.store import writes as store
from oxide_git.store.context import Context
from oxide_git.store.logwrite import signature_at

INDEX = "MEMORY.md"
HEADER = "# Memory\n\n"
CONTEXT_LINES = 200
_TOPIC = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")


class BadTopic(OxideError):
    pass


@dataclass
class Write:
    id: str
    at: int
    session_id: str | None
    message_id: str | None
    summary: str
    reverts: list[str]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def topic_file(topic: str) -> str:
    name = topic.removesuffix(".md")
    if not _TOPIC.match(name) or name.upper() == "MEMORY":
        raise BadTopic(f"'{topic}' is not a topic name",
                       hint="use letters, digits, '.', '_' and '-' (e.g. build-commands)")
    return name + ".md"


def _tip(ctx: Context) -> pygit2.Commit | None:
    oid = refs.read(ctx.repo.git, refs.MEMORY)
    obj = ctx.repo.git.get(oid) if oid is not None else None
    return obj if isinstance(obj, pygit2.Commit) else None


def files(ctx: Context) -> dict[str, str]:
    """Every memory file (name -> text) at the tip; empty when there is no memory yet."""
    tip = _tip(ctx)
    out: dict[str, str] = {}
    if tip is None:
        return out
    for e in tip.tree:
        blob = ctx.repo.git[e.id]
        if isinstance(blob, pygit2.Blob) and e.name:
            out[e.name] = blob.data.decode("utf-8", "replace")
    return out


def show(ctx: Context, topic: str | None = None) -> str:
    fs = files(ctx)
    name = topic_file(topic) if topic else INDEX
    if name not in fs:
        raise NotFound(f"no memory {'topic ' + topic if topic else 'yet'}",
                       hint="add some with `git oxide memory add TOPIC TEXT`")
    return fs[name]


def _author(ctx: Context) -> tuple[str | None, str | None]:
    sid = store.current_session(ctx)
    if not sid:
        return None, None
    rows = ctx.index.query("SELECT id FROM messages WHERE session_id=? ORDER BY seq DESC LIMIT 1", (sid,))
    return sid, (rows[0][0] if rows else None)


def commit(ctx: Context, changes: Mapping[str, str | None], summary: str, *,
           extra: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """Write ``changes`` (name -> text, None deletes) as one commit; returns (old tip, new tip)."""
    git = ctx.repo.git
    sid, mid = _author(ctx)
    trailers = {"Oxide-Session": sid or "none", "Oxide-Message": mid or "none",
                "Oxide-Time": str(ctx.now_ms), **(extra or {})}
    body = f"oxide memory: {summary}\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
    objects = ctx.repo.objects

    def attempt() -> tuple[str | None, str]:
        tip = _tip(ctx)
        entries = {n: (None if t is None else (objects.write(BLOB, t.encode()), trees.FILE_MODE))
                   for n, t in changes.items()}
        tree = trees.apply_changes(objects, tip.tree_id.raw if tip else None, entries)
        tree = tree or trees.empty_tree(objects)
        parents = [tip.id.raw] if tip else []
        oid = pygit2.Oid(raw=objects.write_commit(tree, parents, body, signature_at(ctx.now_ms)))
        refs.update(git, {refs.MEMORY: (tip.id if tip else None, oid)}, f"oxide: memory {summary}")
        return (str(tip.id) if tip else None), str(oid)

    return refs.retry_on_move(attempt)


def _index_line(topic: str, text: str) -> str:
    first = next((ln.strip().lstrip("#-* ").strip() for ln in text.splitlines() if ln.strip()), "")
    first = first if len(first) <= 80 else first[:79] + "…"
    return f"- [{topic}]({topic}.md)" + (f" — {first}" if first else "")


def _with_index_line(index: str, topic: str, line: str | None) -> str:
    lines = (index or HEADER).splitlines()
    mark = f"]({topic}.md)"
    kept = [ln for ln in lines if mark not in ln]
    pos = next((i for i, ln in enumerate(lines) if mark in ln), None)
    if line is not None:
        kept.insert(pos if pos is not None else len(kept), line)
    return "\n".join(kept).rstrip("\n") + "\n"


def add(ctx: Context, topic: str, text: str) -> str:
    """Append ``text`` to the topic and list it in MEMORY.md; returns the new commit id."""
    name = topic_file(topic)
    t = name[:-3]
    fs = files(ctx)
    body = fs.get(name, "")
    if body and not body.endswith("\n"):
        body += "\n"
    body += text.rstrip("\n") + "\n"
    index = _with_index_line(fs.get(INDEX, HEADER), t, _index_line(t, body))
    return commit(ctx, {name: body, INDEX: index}, f"add {t}")[1]


def rm(ctx: Context, topic: str) -> str:
    name = topic_file(topic)
    fs = files(ctx)
    if name not in fs:
        raise NotFound(f"no memory topic {topic}", hint="`git oxide memory show` lists the topics")
    return commit(ctx, {name: None, INDEX: _with_index_line(fs.get(INDEX, HEADER), name[:-3], None)},
                  f"rm {name[:-3]}")[1]


def _parse(c: pygit2.Commit) -> Write:
    lines = c.message.splitlines()
    fields: dict[str, list[str]] = {}
    for ln in lines[1:]:
        k, sep, v = ln.partition(": ")
        if sep and k.startswith("Oxide-"):
            fields.setdefault(k, []).append(v.strip())

    def one(k: str) -> str | None:
        v = fields.get(k, [None])[0]
        return None if v in (None, "none") else v

    return Write(str(c.id), int(one("Oxide-Time") or c.commit_time * 1000), one("Oxide-Session"),
                 one("Oxide-Message"), (lines[0] if lines else "").removeprefix("oxide memory: "),
                 (one("Oxide-Reverts") or "").split())


def log(ctx: Context, limit: int | None = None) -> list[Write]:
    """Memory writes, newest first (first-parent history of the ref)."""
    out: list[Write] = []
    c = _tip(ctx)
    while c is not None and (limit is None or len(out) < limit):
        out.append(_parse(c))
        c = c.parents[0] if c.parents else None
    return out


def writes_after(ctx: Context, at_ms: int, session_id: str | None = None) -> list[Write]:
    """Writes made after ``at_ms`` (by ``session_id`` if given) and not reverted since, newest first."""
    writes = [w for w in log(ctx) if w.at > at_ms]
    reverted = {r for w in writes for r in w.reverts}
    return [w for w in writes if not w.reverts and w.id not in reverted
            and (session_id is None or w.session_id == session_id)]


def revert(ctx: Context, writes: list[Write], summary: str) -> tuple[str | None, str] | None:
    """Revert ``writes`` (newest first) in one new commit; returns (old tip, new tip)."""
    if not writes:
        return None
    git = ctx.repo.git
    tip = _tip(ctx)
    assert tip is not None
    ours = tip
    tree_oid = tip.tree_id
    for w in writes:
        idx = git.revert_commit(git[w.id].peel(pygit2.Commit), ours)
        if idx.conflicts is not None:
            raise Refused(f"memory write {w.id[:12]} ({w.summary}) was changed again since",
                          hint="edit it with `git oxide memory add`/`rm` instead")
        tree_oid = idx.write_tree(git)
        tmp = ctx.repo.objects.write_commit(tree_oid.raw, [ours.id.raw], "tmp", signature_at(ctx.now_ms))
        ours = git[pygit2.Oid(raw=tmp)].peel(pygit2.Commit)
    changes: dict[str, str | None] = {}
    new_tree = git[tree_oid].peel(pygit2.Tree)
    for d in tip.tree.diff_to_tree(new_tree).deltas:
        for f in (d.old_file, d.new_file):
            entry = new_tree[f.path] if f.path in new_tree else None  # noqa: SIM401 (no Tree.get)
            blob = git[entry.id].peel(pygit2.Blob) if entry else None
            changes[f.path] = blob.data.decode("utf-8", "replace") if blob else None
    return commit(ctx, changes, summary, extra={"Oxide-Reverts": " ".join(w.id for w in writes)})


def context_text(ctx: Context, lines: int = CONTEXT_LINES) -> str | None:
    """The first ``lines`` lines of MEMORY.md, for the head of a resumed context."""
    text = files(ctx).get(INDEX)
    return None if not text else "\n".join(text.splitlines()[:lines]) + "\n"


def claude_dir(ctx: Context) -> Path:
    raw = (ctx.environ.get("CLAUDE_CONFIG_DIR") or "").split(",")[0].strip()
    base = Path(raw).expanduser() if raw else ctx.home / ".claude"
    encoded = re.sub(r"[^A-Za-z0-9]", "-", str(ctx.repo.workdir))
    return base / "projects" / encoded / "memory"


def import_claude(ctx: Context) -> dict[str, Any]:
    src = claude_dir(ctx)
    found = {p.name: p.read_text(encoding="utf-8", errors="replace") for p in sorted(src.glob("*.md"))
             if p.is_file()} if src.is_dir() else {}
    if not found:
        raise NotFound(f"no Claude Code memory in {src}")
    mine = files(ctx)
    changes: dict[str, str | None] = {n: t for n, t in found.items() if mine.get(n) != t}
    for n in changes:
        if n != INDEX:
            topic_file(n)
    new = commit(ctx, changes, f"import {len(changes)} file(s) from claude")[1] if changes else None
    return {"from": str(src), "files": sorted(changes), "commit": new}


def export_claude(ctx: Context) -> dict[str, Any]:
    dest = claude_dir(ctx)
    fs = files(ctx)
    if not fs:
        raise NotFound("there is no memory to export", hint="`git oxide memory add TOPIC TEXT`")
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in fs.items():
        p = dest / name
        if not p.exists() or p.read_text(encoding="utf-8", errors="replace") != text:
            tmp = p.with_name(f".{name}.oxide-tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(p)
            written.append(name)
    return {"into": str(dest), "files": sorted(written)}


def context_message(ctx: Context, lines: int = CONTEXT_LINES) -> dict[str, Any] | None:
    """MEMORY.md's head as a system message in the shape of ``browse.message_json``."""
    text = context_text(ctx, lines)
    if text is None:
        return None
    tip = _tip(ctx)
    return {"id": f"memory-{str(tip.id)[:12]}" if tip else "memory", "seq": None, "role": "system",
            "created_at": None, "compacted": False,
            "parts": [{"type": "text", "text": text, "source": "oxide-memory"}]}
