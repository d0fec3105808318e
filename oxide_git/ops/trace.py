"""`git oxide trace`: the attribution of a commit's lines in the formats other tools read.

The lines are those the commit added (`git blame` gives them to it), in the files it changed
against its first parent; each is attributed as ``blame_file`` attributes it (a turn of an
agent, the human, both, or unknown). Two formats:

- an **Agent Trace** record (cursor/agent-trace, ``schemas/trace-record.json``): ``version``
  is "1.0", what the reference implementation (``reference/trace-store.ts``) writes and what
  the schema's pattern ``^[0-9]+\\.[0-9]+$`` accepts (the README's examples say "0.1.0", the
  RFC's own version, which the pattern refuses);
- a **Git AI authorship log** (git-ai-project/git-ai, ``authorship/3.0.0``), as git-ai's
  serializer writes it: file paths, ``  <key> <ranges>`` lines, ``---``, pretty JSON.

Stored (``--write``, ``oxide.trace``) as notes on ``refs/notes/agent-trace`` and
``refs/notes/ai``: ``trace_notes``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from oxide_git import __version__
from oxide_git.blame.attribution import BadRevision, blame_file
from oxide_git.blame.calls import AGENT, EITHER, HUMAN
from oxide_git.blame.result import LineBlame
from oxide_git.git.repo import clean_git_env
from oxide_git.store.context import Context

FORMATS = ("agent-trace", "git-ai")
AGENT_TRACE_VERSION = "1.0"
GIT_AI_SCHEMA = "authorship/3.0.0"
TOOL = "git-oxide"
# models.dev providers of the model names agents record without one (as the reference's
# ``normalizeModelId`` prefixes them)
_PROVIDERS = (("claude", "anthropic"), ("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"),
              ("o4", "openai"), ("codex", "openai"), ("gemini", "google"), ("qwen", "alibaba"),
              ("grok", "xai"), ("deepseek", "deepseek"), ("mistral", "mistral"), ("kimi", "moonshotai"))
CONTRIBUTOR = {AGENT: "ai", HUMAN: "human", EITHER: "mixed"}  # anything else: unknown


@dataclass
class CommitLines:
    """What a commit added, blamed: {path: lines} (paths in the order git lists them)."""

    commit: str
    parent: str | None
    author: str  # the committer, "Name <email>" (git-ai names the human by it)
    files: dict[str, list[LineBlame]] = field(default_factory=dict)
    sessions: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # id -> agent, native id


def _git(ctx: Context, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=ctx.repo.workdir, capture_output=True, text=True,
                       env=clean_git_env())
    if r.returncode != 0:
        raise BadRevision(f"cannot read {args[-1]}: {r.stderr.strip().removeprefix('fatal: ')}",
                          hint="give a commit (HEAD, a hash) or a range A..B")
    return r.stdout


def commits_of(ctx: Context, spec: str) -> list[str]:
    """The commits ``spec`` names: one commit, or those of a range ``A..B`` (oldest first)."""
    if ".." in spec:
        return _git(ctx, "rev-list", "--reverse", "--no-merges", spec, "--").split()
    return [_git(ctx, "rev-parse", "--verify", "--end-of-options", spec + "^{commit}").strip()]


class OverBudget(Exception):
    """Past the deadline (the hook's ``oxide.traceBudget``): nothing is written."""


def commit_lines(ctx: Context, commit: str, deadline: float | None = None) -> CommitLines:
    """The lines ``commit`` added, as ``blame_file`` attributes them (``deadline``: a
    ``time.monotonic()`` past which it stops with ``OverBudget``)."""
    head = _git(ctx, "log", "-1", "--format=%P%x00%cn <%ce>", commit).rstrip("\n")
    parents, _, author = head.partition("\0")
    parent = parents.split()[0] if parents.split() else None
    names = _git(ctx, "diff-tree", "--no-commit-id", "--root", "-r", "--no-renames", "--diff-filter=AM",
                 "--name-only", "-z", commit).split("\0")
    out = CommitLines(commit, parent, author)
    for path in (n for n in names if n):
        if deadline is not None and time.monotonic() > deadline:
            raise OverBudget(f"the trace of {commit[:12]} ran out of time (oxide.traceBudget)")
        mine = [ln for ln in blame_file(ctx, path, rev=commit, commits={commit}).lines if ln.commit == commit]
        if mine:
            out.files[path] = mine
    ids = sorted({ln.session_id for lines in out.files.values() for ln in lines if ln.session_id})
    for sid in ids:
        rows = ctx.index.query("SELECT agent, native_id FROM sessions WHERE id=?", (sid,))
        out.sessions[sid] = (rows[0][0], rows[0][1]) if rows else (None, None)
    return out


def model_id(model: str | None, agent: str | None = None) -> str | None:
    """``provider/model`` (models.dev) of a model name as an agent recorded it."""
    if not model:
        return None
    if "/" in model:
        return model
    low = model.lower()
    for prefix, provider in _PROVIDERS:
        if low.startswith(prefix):
            return f"{provider}/{model}"
    return model


def runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as (first, last) runs of consecutive lines."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def content_hash(lines: list[str]) -> str:
    """The range's text (lines joined with newlines), hashed: the spec's position-independent
    ``content_hash`` (its examples say ``murmur3:…``; the algorithm is named the same way)."""
    return "sha256:" + hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _now_iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def agent_trace(ctx: Context, got: CommitLines) -> dict[str, Any]:
    """The Agent Trace record of a commit: a conversation per (session, contributor, model)."""
    files = []
    for path, lines in got.files.items():
        groups: dict[tuple[str | None, str, str | None], list[LineBlame]] = {}
        for ln in lines:
            kind = CONTRIBUTOR.get(ln.who, "unknown")
            key = (ln.session_id if kind in ("ai", "mixed") else None, kind,
                   model_id(ln.model, ln.agent) if kind in ("ai", "mixed") else None)
            groups.setdefault(key, []).append(ln)
        conversations = []
        for (sid, kind, model), members in groups.items():
            text = {ln.number: ln.text for ln in members}
            contributor: dict[str, Any] = {"type": kind}
            if model:
                contributor["model_id"] = model[:250]
            conv: dict[str, Any] = {}
            if sid:
                conv["url"] = f"oxide:session/{sid}"
            conv["contributor"] = contributor
            conv["ranges"] = [{"start_line": a, "end_line": b,
                               "content_hash": content_hash([text[n] for n in range(a, b + 1)])}
                              for a, b in runs(list(text))]
            related = []
            for cp in dict.fromkeys(ln.checkpoint for ln in members if ln.checkpoint):
                related.append({"type": "checkpoint", "url": f"oxide:checkpoint/{cp}"})
            for mid in dict.fromkeys(ln.message_id for ln in members if ln.message_id and sid):
                related.append({"type": "prompt", "url": f"oxide:session/{sid}/message/{mid}"})
            if related:
                conv["related"] = related
            conversations.append(conv)
        files.append({"path": path, "conversations": conversations})
    agents = {sid: {"agent": a, "native_id": n} for sid, (a, n) in got.sessions.items()}
    return {
        "version": AGENT_TRACE_VERSION,
        "id": str(uuid.uuid4()),
        "timestamp": _now_iso(ctx.now_ms),
        "vcs": {"type": "git", "revision": got.commit},
        "tool": {"name": TOOL, "version": __version__},
        "files": files,
        "metadata": {"dev.git-oxide": {"parent": got.parent, "sessions": agents}},
    }


def short_hash(tool: str, conversation: str) -> str:
    """git-ai's prompt key: the first 16 hex of SHA-256("<tool>:<conversation id>")."""
    return hashlib.sha256(f"{tool}:{conversation}".encode()).hexdigest()[:16]


def human_hash(author: str) -> str:
    """git-ai's known-human key: ``h_`` and the first 14 hex of SHA-256("Name <email>")."""
    return "h_" + hashlib.sha256(author.encode()).hexdigest()[:14]


def _quoted(path: str) -> str:
    return f'"{path}"' if any(c in path for c in " \t\n") else path


def _ranges_text(numbers: list[int]) -> str:
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs(numbers))


def git_ai_log(got: CommitLines) -> str:
    """The Git AI authorship log (``authorship/3.0.0``) of a commit, as git-ai serializes it: an
    agent's lines under its prompt key (legacy form: the 16-hex key of the session), the human's
    under ``h_``; lines both touched (``mixed``) count in the prompt's ``overriden_lines`` and
    are left untracked, as are lines oxide cannot tell (no checkpoint covers them)."""
    prompts: dict[str, dict[str, Any]] = {}
    humans: dict[str, dict[str, str]] = {}
    out: list[str] = []
    for path, lines in got.files.items():
        keys: dict[str, list[int]] = {}
        for ln in lines:
            key = None
            if ln.who in (AGENT, EITHER) and ln.session_id:
                agent, native = got.sessions.get(ln.session_id, (None, None))
                tool = agent or ln.agent or "unknown"
                key = short_hash(tool, native or ln.session_id)
                rec = prompts.setdefault(key, {
                    "agent_id": {"tool": tool, "id": native or ln.session_id, "model": ln.model or "unknown"},
                    "human_author": got.author, "total_additions": 0, "total_deletions": 0,
                    "accepted_lines": 0, "overriden_lines": 0})
                rec["total_additions"] += 1
                if ln.who == EITHER:
                    rec["overriden_lines"] += 1
                    continue
                rec["accepted_lines"] += 1
            elif ln.who == HUMAN:
                key = human_hash(got.author)
                humans[key] = {"author": got.author}
            if key:
                keys.setdefault(key, []).append(ln.number)
        if keys:
            out.append(_quoted(path))
            out += [f"  {k} {_ranges_text(v)}" for k, v in keys.items()]
    meta: dict[str, Any] = {"schema_version": GIT_AI_SCHEMA, "git_ai_version": f"{TOOL}/{__version__}",
                            "base_commit_sha": got.commit, "prompts": dict(sorted(prompts.items()))}
    if humans:
        meta["humans"] = dict(sorted(humans.items()))
    # serde_json's pretty printer: two spaces, "key": value, non-ASCII as is, no final newline
    return "\n".join([*out, "---", json.dumps(meta, indent=2, ensure_ascii=False)])


def render(ctx: Context, got: CommitLines, fmt: str) -> str:
    """The note text of ``got`` in ``fmt`` (agent-trace: one JSON line; git-ai: the log)."""
    if fmt == "agent-trace":
        return json.dumps(agent_trace(ctx, got), ensure_ascii=False, separators=(",", ":"))
    return git_ai_log(got)
