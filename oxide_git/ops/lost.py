"""Messages a session's log once held that are now at no tip and in no fork: in history alone.

Before issue 39 a pull could fast-forward a session to the other side's merge and the next
import then wrote other messages at the same places: the overwritten ones stayed only in older
commits of the log, where `show`, `search`, `resume` and export never look. ``find`` walks the
history of every session that went through a pull's merge (the only way there), and names each
message (by its id) that no tip of the session's family (the session, its forks, their forks)
holds; messages a rewind dropped on purpose are not lost. ``recover`` puts each back in a fork
made from the newest commit that held it (its whole conversation up to there), journaled, so
`git oxide undo` takes the forks away again.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

import pygit2

from oxide_git.core import codec, log_layout
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message
from oxide_git.git import refs
from oxide_git.git.repo import Repo, clean_git_env
from oxide_git.ops import pull_session
from oxide_git.store import journal, sessionlog
from oxide_git.store.context import Context
from oxide_git.store.reindex import reindex

_MERGE = "merge diverged session"


@dataclass
class Lost:
    """The messages of session ``session`` in history alone, by the newest commit holding them."""

    session: str
    by_commit: dict[str, list[str]] = field(default_factory=dict)  # commit -> message keys (``_key``)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.by_commit.values())


def _merged_sessions(ctx: Context) -> set[str]:
    """Sessions whose history holds a pull's merge commit (one `git log` over every log)."""
    r = subprocess.run(["git", "log", "--merges", "--format=%B%x00", "--glob=refs/oxide/sessions/*"],
                       cwd=ctx.repo.workdir, capture_output=True, text=True, env=clean_git_env())
    out = set()
    for body in r.stdout.split("\x00"):
        if _MERGE in body:
            for line in body.splitlines():
                if line.startswith("Oxide-Session: "):
                    out.add(line.split(": ", 1)[1].strip())
    return out


def _logs(repo: Repo) -> dict[str, sessionlog.Log]:
    logs = {}
    for name, _oid in refs.iter_refs(repo.git, refs.SESSIONS):
        try:
            log = sessionlog.load(repo, name[len(refs.SESSIONS):])
        except OxideError:  # a log doctor cannot read is another finding's
            continue
        if log is not None:
            logs[log.session.id] = log
    return logs


def _root(logs: dict[str, sessionlog.Log], sid: str) -> str:
    seen = set()
    while sid in logs and logs[sid].session.parent_id and sid not in seen:
        seen.add(sid)
        parent = logs[sid].session.parent_id
        if parent not in logs:
            break
        sid = parent
    return sid


def _ids(repo: Repo, tree: pygit2.Tree, start: int = 0) -> dict[str, str]:
    """{blob id: message id} of a log tree's messages from seq ``start``."""
    return {_blob_id(tree, seq): _key(codec.decode_message(data))
            for seq, data in sessionlog.iter_blobs(repo, tree, start)}


def _key(m: Message) -> str:
    """A message across versions of a log: its id (made from its place and time) and the agent's id."""
    return f"{m.id}|{m.native_id or ''}"


def _blob_id(tree: pygit2.Tree, seq: int) -> str:
    path = f"{log_layout.MESSAGES_DIR}/{log_layout.bucket_name(seq)}/{log_layout.entry_name(seq)}"
    return str(tree[path].id)


def find(ctx: Context) -> list[Lost]:
    merged = _merged_sessions(ctx)
    if not merged:
        return []
    logs = _logs(ctx.repo)
    families: dict[str, list[str]] = {}
    for sid in logs:
        families.setdefault(_root(logs, sid), []).append(sid)
    out = []
    for _root_id, members in sorted(families.items()):
        if not merged & set(members):
            continue
        held = _Held(ctx.repo, [logs[sid].commit.tree for sid in members])
        found, dropped = [], set()
        for sid in sorted(members):
            lost, gone = _walk(ctx.repo, logs[sid], held)
            dropped |= gone  # a rewind in one member drops on purpose what another's history holds
            found.append(lost)
        for lost in found:
            lost.by_commit = {c: kept for c, ids_ in lost.by_commit.items()
                              if (kept := [m for m in ids_ if m not in dropped])}
            if lost.by_commit:
                out.append(lost)
    return out


class _Held:
    """What the tips of a family hold: their blobs (read from the trees), and the messages' keys,
    decoded only when some older blob is not at a tip (a healthy store decodes nothing)."""

    def __init__(self, repo: Repo, trees: list[pygit2.Tree]) -> None:
        self.repo, self.trees = repo, trees
        git = repo.git
        self.blobs: set[str] = set()
        for tree in trees:
            if log_layout.MESSAGES_DIR in tree:
                for bucket in git[tree[log_layout.MESSAGES_DIR].id]:  # type: ignore[attr-defined]
                    self.blobs.update(str(e.id) for e in git[bucket.id])  # type: ignore[attr-defined]
        self._ids: set[str] | None = None

    @property
    def ids(self) -> set[str]:
        if self._ids is None:
            self._ids = {k for tree in self.trees for k in _ids(self.repo, tree).values()}
        return self._ids


def _walk(repo: Repo, log: sessionlog.Log, held: _Held) -> tuple[Lost, set[str]]:
    """The messages of ``log``'s history not held (each named once: ``held`` grows), by the
    newest commit holding them; and those a rewind dropped."""
    git = repo.git
    lost = Lost(log.session.id)
    seen_trees: set[str] = set()
    dropped: set[str] = set()
    for commit in git.walk(log.tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME):
        if commit.message.startswith("rewind to") and commit.parents:  # dropped on purpose
            n = sessionlog.count_messages(repo, commit.tree)
            dropped |= set(_ids(repo, commit.parents[0].tree, n).values())
        if log_layout.MESSAGES_DIR not in commit.tree:
            continue
        for bucket in git[commit.tree[log_layout.MESSAGES_DIR].id]:  # type: ignore[attr-defined]
            if str(bucket.id) in seen_trees:
                continue
            seen_trees.add(str(bucket.id))
            for entry in git[bucket.id]:  # type: ignore[attr-defined]
                blob = str(entry.id)
                if blob in held.blobs:
                    continue
                held.blobs.add(blob)  # looked at once
                mid = _key(codec.decode_message(git[entry.id].data))  # type: ignore[attr-defined]
                if mid not in held.ids:
                    lost.by_commit.setdefault(str(commit.id), []).append(mid)
                    held.ids.add(mid)
    return lost, dropped


def recover(ctx: Context, found: list[Lost]) -> list[dict[str, str]]:
    """Each lost message back, in a fork of its session made from the newest commit holding it."""
    made: list[dict[str, str]] = []
    moved: dict[str, list[str | None]] = {}
    for lost in found:
        for commit, mids in lost.by_commit.items():
            log = sessionlog.load_commit(ctx.repo, pygit2.Oid(hex=commit))
            fid, oid = pull_session.fork_log(
                ctx, lost.session, log, seed=f"recovered:{lost.session}:{commit}", at_id=None,
                fork_seq=0, title="recovered by doctor",
                summary=f"fork {lost.session[:12]}: {len(mids)} message(s) found in its history alone")
            if oid is not None:
                moved[refs.session_ref(fid)] = [None, str(oid)]
            made.append({"session": lost.session, "fork": fid, "from": commit, "messages": str(len(mids))})
    if moved:
        journal.record(ctx, journal.Entry("doctor", ctx.now_ms, f"doctor --fix: {len(moved)} fork(s) "
                                          "of messages in history alone", refs=moved))
        reindex(ctx, sessions={r[len(refs.SESSIONS):] for r in moved})
    return made
