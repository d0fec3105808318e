"""The bodies of `git oxide mcp`'s tools (``mcp_tools`` declares them): each takes the context and
the tool's arguments and returns a JSON-ready dict, paged with ``mcp_tools.Page`` and a cursor.

``search`` reads the SQLite index only (no pygit2: it answers in milliseconds over 10,000
sessions); the others read git as `show`, `checkpoints`, `memory` and `blame` do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oxide_git.core.errors import NotFound, OxideError
from oxide_git.core.model import from_iso, to_iso
from oxide_git.mcp.paging import Page, clip, limit_of, make_cursor, read_cursor
from oxide_git.store.context import Context

PROMPT_CHARS = 300  # of each prompt quoted beside a checkpoint or a blamed line
_MEMORY_CHARS = 16_000  # of a memory file per result


def _time(args: dict[str, Any], key: str) -> int | None:
    text = args.get(key)
    if not text:
        return None
    ms = from_iso(str(text))
    if ms is None:
        raise OxideError(f"{key} {text!r} is not an ISO 8601 date or time",
                         hint="e.g. 2026-03-01 or 2026-03-01T14:30:00Z")
    return ms


def _compact(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None and v != ""}


def search(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    state = read_cursor("search", args, {"query": str, "offset": int, "limit": int, "filters": dict}) or {
        "query": str(args.get("query") or ""), "offset": 0, "limit": limit_of(args, 10, 50),
        "filters": _compact({"agent": args.get("agent"), "branch": args.get("branch"),
                             "since_ms": _time(args, "since"), "until_ms": _time(args, "until")})}
    if not state["query"].strip():
        raise OxideError("search needs words to look for", hint="give query, e.g. \"flaky test\"")
    page = Page(state["limit"])
    from oxide_git.store.search_query import search

    hits = search(ctx.index, state["query"], state["limit"] + 1, offset=state["offset"], **state["filters"])
    sessions = {r["id"]: r for r in ctx.index.session_rows(ids={h["session_id"] for h in hits})}
    red = redact_text(ctx)
    for h in hits:
        s = sessions.get(h["session_id"], {})
        if not page.add(_compact({
                "session_id": h["session_id"], "message_id": h["message_id"], "seq": h["seq"],
                "role": h["role"], "agent": s.get("agent"), "branch": s.get("branch"),
                "worktree": s.get("worktree"), "title": _title(ctx, s, red),
                "created_at": to_iso(h["created_at"]), "snippet": _snippet(ctx, h, state["query"], red)})):
            break
    out: dict[str, Any] = {"query": state["query"], "results": page.items}
    if len(hits) > len(page.items):
        out["next_cursor"] = make_cursor("search", **{**state, "offset": state["offset"] + len(page.items)})
    if not page.items:
        out["note"] = ("no message holds all of these words"
                       + (" with these filters" if state["filters"] else ""))
    return out


def redact_text(ctx: Context) -> Callable[[str], str]:
    """The repository's redaction of one string (as export's; identity when it is off). Text is
    redacted before anything is cut from it, so that no cut leaves part of a secret unseen."""
    from collections import Counter

    from oxide_git.store.redact import redactor_for

    r = redactor_for(ctx)
    return (lambda s: s) if r is None else (lambda s: r.text(s, Counter()))


def _title(ctx: Context, s: dict[str, Any], red: Callable[[str], str]) -> str | None:
    """``titles.display`` of the session, from its redacted title or whole first prompt (the index
    keeps the prompt's first 200 characters, which could end inside a secret)."""
    from oxide_git.core.titles import display

    if not s:
        return None
    first = s.get("first_prompt")
    if first and not s.get("title"):
        rows = ctx.index.query("SELECT text FROM messages WHERE session_id=? AND role='user' AND "
                               "substr(text, 1, length(?))=? ORDER BY seq LIMIT 1", (s["id"], first, first))
        first = red(str(rows[0][0])) if rows else red(first)
    return display(red(s["title"]) if s.get("title") else None, first, s["id"], 100)


def _snippet(ctx: Context, hit: dict[str, Any], query: str, red: Callable[[str], str]) -> str:
    """The index's snippet, or, when the message's text holds something the redactor takes out,
    one cut from the redacted text around the first word found."""
    rows = ctx.index.query("SELECT text FROM messages WHERE session_id=? AND seq=?",
                           (hit["session_id"], hit["seq"]))
    text = str(rows[0][0] or "") if rows else ""
    clean = red(text)
    if clean == text:
        return str(hit["snippet"])
    low = clean.lower()
    words = [w.strip('"').lower() for w in query.split() if w.strip('"')]
    at = min((i for i in (low.find(w) for w in words) if i >= 0), default=0)
    a, b = max(at - 60, 0), min(at + 100, len(clean))
    cut = ("…" if a else "") + clean[a:b] + ("…" if b < len(clean) else "")
    for w in words:
        i = cut.lower().find(w)
        if i >= 0:
            cut = cut[:i] + "[" + cut[i:i + len(w)] + "]" + cut[i + len(w):]
    return cut


def show_session(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    from collections import Counter

    from oxide_git.export.render_text import conversation
    from oxide_git.ops.browse import show
    from oxide_git.store.redact import redactor_for

    state = read_cursor("show_session", args,
                        {"session": str, "start": (int, type(None)), "full": bool, "limit": int})
    if state is None:
        if not args.get("session"):
            raise OxideError("show_session needs a session", hint="search gives session ids")
        sid = ctx.index.resolve_session(str(args["session"]))
        state = {"session": sid, "start": args.get("start"), "full": bool(args.get("full")),
                 "limit": limit_of(args, 20, 100)}
    shown = show(ctx, state["session"], start=state["start"])  # None: from the last compaction
    start = shown.start
    s = shown.session
    head = _compact({
        "id": s.id, "agent": s.agent, "native_id": s.native_id, "title": s.title, "branch": s.branch,
        "worktree": s.worktree, "cwd": s.cwd, "created_at": to_iso(s.created_at),
        "updated_at": to_iso(s.updated_at), "records": shown.count, "parent_id": s.parent_id,
        "forks": shown.children or None, "checkpoints": len(shown.checkpoints),
        "last_compaction": shown.last_compaction if shown.last_compaction >= 0 else None})
    page = Page(state["limit"], used=len(str(head)))
    hidden: dict[str, int] = {}
    names: dict[str, str] = {}
    next_seq = None
    redactions: Counter[str] = Counter()
    r = redactor_for(ctx)
    for seq, m in shown.messages:
        if r is not None:  # before rendering, as export does: rendered JSON escapes what rules see
            m, hits = r.message(m)
            redactions.update(hits)
        lines = list(conversation([(seq, m)], full=state["full"], hidden=hidden, names=names))
        if not lines:
            continue
        item = _compact({"seq": seq, "id": m.id, "role": m.role, "created_at": to_iso(m.created_at),
                         "compacted": True if m.compacted else None,
                         "text": clip("\n".join(lines[1:]), page.room)})
        if not page.add(item):
            next_seq = seq
            break
    out: dict[str, Any] = {"session": head, "start": start, "messages": page.items}
    if redactions:
        out["redactions"] = dict(redactions)
    if hidden:
        out["records_not_shown"] = hidden
    if next_seq is not None:
        out["next_cursor"] = make_cursor("show_session", **{**state, "start": next_seq})
    if start > 0 and state["start"] is None:
        out["note"] = (f"messages before #{start} came before the last compaction, whose summary is "
                       f"#{start}; start=0 reads them")
    return out


def repo_path(ctx: Context, given: str) -> str:
    """``given`` (absolute, or relative to the repository's top, as `blame` takes it) as a path from
    the repository's top."""
    top = ctx.repo.workdir.resolve()
    p = Path(given)
    full = Path(os.path.normpath(p if p.is_absolute() else top / p))
    try:
        rel = full.resolve().relative_to(top) if full.exists() else full.relative_to(top)
    except ValueError:
        raise OxideError(f"{given} is outside this repository ({top})") from None
    if not rel.parts:
        raise OxideError(f"{given} is the repository itself, not a file in it")
    return rel.as_posix()


def _prompts(ctx: Context, pairs: set[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """message id -> its session's id, agent and title and the message's text (clipped)."""
    out: dict[str, dict[str, Any]] = {}
    sessions = {r["id"]: r for r in ctx.index.session_rows(ids={s for s, _m in pairs})} if pairs else {}
    red = redact_text(ctx)
    for sid, mid in sorted(pairs):
        rows = ctx.index.query("SELECT text FROM messages WHERE session_id=? AND id=?", (sid, mid))
        text = " ".join(red(str(rows[0][0] or "")).split()) if rows else ""
        out[mid] = _compact({"session_id": sid, "agent": sessions.get(sid, {}).get("agent"),
                             "title": _title(ctx, sessions.get(sid, {}), red),
                             "prompt": text[:PROMPT_CHARS] + ("…" if len(text) > PROMPT_CHARS else "")})
    return out


def checkpoints(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    state = read_cursor("checkpoints", args, {"session": (str, type(None)), "path": (str, type(None)),
                                              "offset": int, "limit": int}) or {
        "session": ctx.index.resolve_session(str(args["session"])) if args.get("session") else None,
        "path": repo_path(ctx, str(args["path"])) if args.get("path") else None,
        "offset": 0, "limit": limit_of(args, 20, 100)}
    rows = ctx.index.checkpoint_rows(state["session"])
    if state["path"]:
        rows = _changing(ctx, rows, state["path"])
    page = Page(state["limit"])
    shown = rows[state["offset"]:]
    prompts = _prompts(ctx, {(r["session_id"], r["message_id"]) for r in shown[:state["limit"]]
                             if r.get("session_id") and r.get("message_id")})
    for r in shown:
        item = _compact({"id": r["id"], "kind": r["kind"], "change": r.get("change"),
                         "session_id": r["session_id"], "message_id": r["message_id"],
                         "prompt": prompts.get(r["message_id"] or "", {}).get("prompt"),
                         "branch": r["branch"], "worktree": r["worktree"], "head": r["head"],
                         "created_at": to_iso(r["created_at"]), "files_changed": r["files_changed"],
                         "message": r["message"],  # a pulled twin's: what its push took out
                         "redacted": [s["path"] for s in r["skipped"] if s.get("redacted")] or None})
        if not page.add(item):
            break
    out: dict[str, Any] = {"checkpoints": page.items, "total": len(rows)}
    if len(shown) > len(page.items):
        out["next_cursor"] = make_cursor("checkpoints",
                                         **{**state, "offset": state["offset"] + len(page.items)})
    return out


def _changing(ctx: Context, rows: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """The checkpoints (newest first) at which ``path`` differs from the previous checkpoint of the
    same worktree (the first one: from the commit it was taken on), with the change."""
    import pygit2

    git = ctx.repo.git

    def blob(tree_id: str | None) -> str | None:
        obj = git.get(tree_id) if tree_id else None
        if isinstance(obj, pygit2.Commit):
            obj = obj.tree
        if not isinstance(obj, pygit2.Tree):
            return None
        try:
            return str(obj[path].id)
        except KeyError:
            return None

    before: dict[str, str | None] = {}
    out = []
    for r in sorted(rows, key=lambda r: (r["created_at"], r["id"])):
        now = blob(r["tree"])
        was = before[r["worktree"]] if r["worktree"] in before else blob(r["head"])
        before[r["worktree"]] = now
        if now != was:
            out.append({**r, "change": "added" if was is None else "deleted" if now is None else "modified"})
    return out[::-1]


def blame(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    from oxide_git.blame.attribution import blame_file
    from oxide_git.core.secret_files import WITHHELD, SecretNames

    if not args.get("path") and not args.get("cursor"):
        raise OxideError("blame needs a path", hint="a file of this repository, e.g. src/app.py")
    state = read_cursor("blame", args, {"path": str, "rev": (str, type(None)), "start": int,
                                        "end": (int, type(None)), "limit": int}) or {
        "path": repo_path(ctx, str(args["path"])), "rev": args.get("rev"),
        "start": int(args.get("start_line") or 1), "end": args.get("end_line"),
        "limit": limit_of(args, 200, 500)}
    data = _file_bytes(ctx, state["path"], state["rev"])
    total = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    start, end = state["start"], min(int(state["end"] or total), total)
    if start > max(total, 1) or end < start:
        raise OxideError(f"{state['path']} has {total} line(s): lines {start}-{state['end'] or 'end'} "
                         "are not in it")
    last = min(end, start + state["limit"] - 1)
    res = blame_file(ctx, state["path"], rev=state["rev"], lines=(start, last)) if total else None
    rows = res.to_json()["lines"] if res else []
    if SecretNames.of(ctx).match(state["path"]):  # a secret by its name: its lines stay here
        rows = [{**ln, "text": WITHHELD} for ln in rows]
    else:  # a secret over several lines (a private key) is found in the whole file, not line by line
        masked = _masked_lines(ctx, data)
        rows = [{**ln, "text": masked[ln["number"]]} if ln["number"] in masked else ln for ln in rows]
    page = Page(state["limit"])
    for ln in rows:
        if not page.add(_compact({k: ln.get(k) for k in ("number", "text", "who", "session_id", "message_id",
                                                         "agent", "model", "commit", "checkpoint", "when")})):
            break
    shown = {d["number"] for d in page.items}
    pairs = {(ln.session_id, ln.message_id) for ln in (res.lines if res else [])
             if ln.number in shown and ln.session_id and ln.message_id}
    out: dict[str, Any] = {"path": state["path"], "rev": state["rev"], "lines": page.items,
                           "prompts": _prompts(ctx, pairs), "total_lines": total}
    if page.items and page.items[-1]["number"] < end:
        out["next_cursor"] = make_cursor("blame", **{**state, "start": page.items[-1]["number"] + 1})
    return _compact(out)


def _masked_lines(ctx: Context, data: bytes) -> dict[int, str]:
    """{line number: its text as the redaction of the whole file has it} for the lines that
    redaction changes; the lines of a hit that spans several are each a ``[REDACTED]`` mark."""
    import difflib
    from collections import Counter

    from oxide_git.store.redact import redactor_for

    r = redactor_for(ctx)
    text = data.decode("utf-8", "replace")
    red = r.text(text, Counter()) if r is not None else text
    if red == text:
        return {}
    was, now = text.split("\n"), red.split("\n")
    out: dict[int, str] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, was, now, autojunk=False).get_opcodes():
        if tag != "equal":
            same = i2 - i1 == j2 - j1
            out.update({i + 1: now[j1 + i - i1] if same else "[REDACTED]" for i in range(i1, i2)})
    return out


def _file_bytes(ctx: Context, rel: str, rev: str | None) -> bytes:
    """The blamed file's bytes (the worktree's, or at ``rev``)."""
    import subprocess

    from oxide_git.blame.attribution import BadRevision
    from oxide_git.git.repo import clean_git_env

    if rev is None and (ctx.repo.workdir / rel).is_file():
        data = (ctx.repo.workdir / rel).read_bytes()
    else:
        r = subprocess.run(["git", "cat-file", "blob", f"{rev or 'HEAD'}:{rel}"], cwd=ctx.repo.workdir,
                           capture_output=True, env=clean_git_env())
        if r.returncode != 0:
            raise BadRevision(f"cannot blame {rel}{' at ' + rev if rev else ''}: "
                              + r.stderr.decode("utf-8", "replace").strip().removeprefix("fatal: "),
                              hint="check the path and the revision (`git log -- PATH`)")
        data = r.stdout
    return data


def memory_read(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    from oxide_git.ops import memory

    state = read_cursor("memory_read", args, {"topic": (str, type(None)), "offset": int}) or {
        "topic": args.get("topic"), "offset": 0}
    files = memory.files(ctx)
    name = memory.topic_file(state["topic"]) if state["topic"] else memory.INDEX
    topics = sorted(n[:-3] for n in files if n != memory.INDEX and n.endswith(".md"))
    if not files:
        return {"topics": [], "text": "", "note": "no project memory yet"}
    if name not in files:
        raise NotFound(f"no memory topic {state['topic']}", hint="topics: " + (", ".join(topics) or "none"))
    text = files[name][state["offset"]:]
    out: dict[str, Any] = {"topic": name, "topics": topics, "text": text[:_MEMORY_CHARS]}
    if len(text) > _MEMORY_CHARS:
        out["next_cursor"] = make_cursor("memory_read",
                                         **{**state, "offset": state["offset"] + _MEMORY_CHARS})
    return out


def memory_add(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    from oxide_git.ops import memory

    text = str(args.get("text") or "")
    if not text.strip():
        raise OxideError("memory_add needs text to add")
    oid = memory.add(ctx, str(args["topic"]), text)
    return {"commit": oid, "topic": memory.topic_file(str(args["topic"]))[:-3]}
