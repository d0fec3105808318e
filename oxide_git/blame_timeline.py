"""A worktree's checkpoints in time order, and where each line of a file first appeared in them.

``Timeline.walk`` goes back from a version of a file (the worktree's, or a commit's as it was at
the checkpoint its note names) through the worktree's checkpoints, newest first, as `git blame`
goes back through commits: git's line diff between each two states (``blame_diff``) says which
lines the later one added, and the interval between them says whose they are (``blame_calls``).
Only states whose version of the file differs are diffed, and only the lines not yet placed are
followed, so the cost is the changes to that file, not the number of checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pygit2

from .blame_calls import BEFORE, EITHER, HUMAN, Label, WorktreeCalls
from .blame_diff import SAME, Diff
from .context import Context


@dataclass(frozen=True)
class State:
    id: str
    kind: str
    session_id: str | None
    message_id: str | None
    tree: str
    created_at: int


class Version:
    """One version of a file (its blob id and bytes), or no file."""

    __slots__ = ("_text", "obj", "oid")

    def __init__(self, oid: pygit2.Oid | None, obj: bytes | None) -> None:
        self.oid, self.obj = oid, obj
        self._text: str | None = None

    @classmethod
    def of_bytes(cls, data: bytes) -> Version:
        return cls(pygit2.hash(data), data)

    def text(self) -> str | None:
        if self._text is None and self.obj is not None:
            self._text = self.obj.decode("utf-8", "surrogateescape")
        return self._text


NONE = Version(None, None)


@dataclass(frozen=True)
class Placed:
    """Where a line was written: its label, the first checkpoint that has it (None: only the
    final version) and the last one that did not."""

    label: Label
    checkpoint: str | None = None
    before: str | None = None


BASE = "base"  # the kind of the state before the first checkpoint: the commit it was taken on


class Timeline:
    """The checkpoints of one worktree (its id and path), oldest first, after a ``base`` state:
    the commit the first checkpoint was taken on (``default_base`` when there is none), whose
    uncommitted lines at the first checkpoint are older than oxide unless a replayed tool call
    wrote them."""

    def __init__(self, ctx: Context, worktree: str, path: str, default_base: str | None = None,
                 blobs: dict[pygit2.Oid, Version] | None = None) -> None:
        self.ctx, self.worktree, self.path = ctx, worktree, path
        rows = ctx.index.query(
            "SELECT id, kind, session_id, message_id, tree, created_at, head FROM checkpoints "
            "WHERE worktree=? AND worktree_path=? ORDER BY created_at, rowid", (worktree, path))
        real = [State(r[0], r[1], r[2], r[3], r[4], int(r[5] or 0)) for r in rows]
        base = _base_state(ctx, rows[0][6] if rows else default_base)
        self.states = ([base] if base else []) + real
        self.position = {s.id: i for i, s in enumerate(self.states) if s.kind != BASE}
        self._calls: WorktreeCalls | None = None
        self._versions: dict[tuple[str, str], Version] = {}
        self._blobs: dict[pygit2.Oid, Version] = blobs if blobs is not None else {}
        self._trees: dict[str, Any] = {}
        self._diffs: dict[tuple[Any, Any], Diff] = {}
        self._explained: dict[tuple[int, str, Any], tuple[list[tuple[Version, Label]], Label]] = {}
        governing: list[tuple[str, str | None] | None] = []
        for s in self.states:
            prev = governing[-1] if governing else None
            governing.append((s.session_id, s.message_id) if s.kind == "prompt" and s.session_id else prev)
        self.governing = governing

    @property
    def calls(self) -> WorktreeCalls:
        if self._calls is None:
            self._calls = WorktreeCalls(self.ctx, self.worktree, self.path)
        return self._calls

    def latest_message(self) -> int:
        """The newest message time of the sessions whose calls were read (0: none read)."""
        return self._calls.latest if self._calls is not None else 0

    def version(self, i: int, rel: str) -> Version:
        tree_id = self.states[i].tree
        key = (tree_id, rel)
        got = self._versions.get(key)
        if got is None:
            git = self.ctx.repo.git
            tree = self._trees.get(tree_id)
            if tree is None:
                obj = git.get(tree_id)
                tree = self._trees[tree_id] = obj.peel(pygit2.Tree) if obj is not None else None
            got = NONE
            if tree is not None:
                try:
                    entry = tree[rel]
                except KeyError:
                    entry = None
                if entry is not None and entry.type_str == "blob":
                    got = self.blob(entry.id)
            self._versions[key] = got
        return got

    def blob(self, oid: pygit2.Oid) -> Version:
        """The version of blob ``oid``, read once for the whole run (versions recur: a commit's
        file is its checkpoint's, a checkpoint's is most often the one before's)."""
        got = self._blobs.get(oid)
        if got is None:
            _kind, data = self.ctx.repo.git.odb.read(oid)
            got = self._blobs[oid] = Version(oid, data)
        return got

    def diff(self, old: Version, new: Version) -> Diff:
        key = (old.oid, new.oid)
        d = self._diffs.get(key)
        if d is None:
            same = old.oid is not None and old.oid == new.oid
            d = self._diffs[key] = SAME if same else Diff(old.obj, new.obj)
        return d

    def walk(self, rel: str, final: Version, upto: int, t_final: int, lines: list[int],
             when_final: int | None = None, final_id: str | None = None) -> dict[int, Placed]:
        """Where each of ``lines`` (0-based, of ``final``) first appeared, going back from the
        states before index ``upto``; ``final`` is the file as it was at ``t_final`` (in the
        checkpoint ``final_id``, if it is one's)."""
        finals = sorted(set(lines))  # lines of final still followed ...
        pos = list(finals)  # ... and where each is in the version looked at (ascending)
        out: dict[int, Placed] = {}
        cur, cur_t = final, t_final
        nxt_id = final_id  # the checkpoint holding cur first (None: only final)
        for i in range(min(upto, len(self.states)) - 1, -1, -1):
            if not finals:
                break
            prev = self.version(i, rel)
            if prev.oid is not None and prev.oid == cur.oid:
                cur_t, nxt_id = self.states[i].created_at, self.states[i].id or None
                continue
            mapped, added = self.diff(prev, cur).trace_sorted(pos)
            if added:
                placed, back = self._place(i, rel, prev, cur, cur_t, [pos[j] for j in added])
                when = when_final if nxt_id == final_id and when_final else cur_t
                for j in added:
                    label = placed.get(pos[j])
                    if label is None:  # the replay found it in prev after all
                        mapped[j] = back[pos[j]]
                        continue
                    if label.when_ms is None or label.who in (HUMAN, EITHER):
                        label = _with_when(label, when)
                    out[finals[j]] = Placed(label, nxt_id, self.states[i].id or None)
                if back:  # lines the replay traced back may sit out of order among the others
                    kept = sorted((m, f) for m, f in zip(mapped, finals, strict=True) if m >= 0)
                    pos, finals = [m for m, _ in kept], [f for _, f in kept]
                else:  # every added line placed: cut them out, a run at a time, from the end
                    for a, b in reversed(runs(added)):
                        del mapped[a:b], finals[a:b]
                    pos = mapped
            else:
                pos = mapped
            cur, cur_t, nxt_id = prev, self.states[i].created_at, self.states[i].id or None
        for ln in finals:
            out[ln] = Placed(Label(BEFORE), nxt_id, None)
        return out

    def _place(self, i: int, rel: str, prev: Version, cur: Version, t1: int,
               added: list[int]) -> tuple[dict[int, Label], dict[int, int]]:
        """Labels of the lines ``added`` to ``cur`` since state ``i`` (by the replayed steps of
        the calls in between), and the lines the replay traces back to ``prev`` after all."""
        steps, rest = self._steps(i, rel, prev, cur, t1)
        versions = [prev, *(v for v, _ in steps), cur]
        labels = [*(lb for _, lb in steps), rest]
        out: dict[int, Label] = {}
        pending = {ln: ln for ln in added}  # line of cur -> its line in versions[k + 1]
        for k in range(len(versions) - 2, -1, -1):
            kept, new = self.diff(versions[k], versions[k + 1]).trace(sorted(set(pending.values())))
            fresh = set(new)
            for ln, pos in list(pending.items()):
                if pos in fresh:
                    out[ln] = labels[k]
                    del pending[ln]
                else:
                    pending[ln] = kept[pos]
            if not pending:
                break
        return out, pending

    def _steps(self, i: int, rel: str, prev: Version, cur: Version, t1: int
               ) -> tuple[list[tuple[Version, Label]], Label]:
        key = (i, rel, cur.oid)
        got = self._explained.get(key)
        if got is None:
            ex = self.calls.explain(rel, prev.text(), cur.text(), self.states[i].created_at, t1,
                                    self.governing[i], unknown=self.states[i].kind == BASE)
            steps = []
            for text, label in ex.steps:
                data = None if text is None else text.encode("utf-8", "surrogateescape")
                # most often the replay gives the next state itself: no hash, no diff
                version = NONE if data is None else cur if data == cur.obj else Version.of_bytes(data)
                steps.append((version, label))
            got = self._explained[key] = (steps, ex.rest)
        return got


def runs(ascending: list[int]) -> list[tuple[int, int]]:
    """Ascending distinct integers as runs of consecutive ones, (first, last + 1) each."""
    out: list[tuple[int, int]] = []
    for n in ascending:
        if out and out[-1][1] == n:
            out[-1] = (out[-1][0], n + 1)
        else:
            out.append((n, n + 1))
    return out


def _base_state(ctx: Context, commit: str | None) -> State | None:
    if not commit:
        return None
    obj = ctx.repo.git.get(commit)
    if not isinstance(obj, pygit2.Commit):
        return None
    return State("", BASE, None, None, str(obj.tree_id), obj.commit_time * 1000)


def _with_when(label: Label, when: int | None) -> Label:
    return Label(label.who, label.session_id, label.message_id, label.agent, label.model, when)
