"""A worktree's checkpoints in time order, and where each line of a file first appeared in them.

``Timeline.walk`` goes back from a version of a file (the worktree's, or a commit's as it was at
the checkpoint its note names) through the worktree's checkpoints, newest first, as `git blame`
goes back through commits: git's line diff between each two states (``blame_diff``) says which
lines the later one added, and the interval between them says whose they are (``blame.calls``).
Only states whose version of the file differs are diffed, and only the lines not yet placed are
followed, so the cost is the changes to that file, not the number of checkpoints.
"""

from __future__ import annotations

import hashlib
from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple

from oxide_git.blame.calls import BEFORE, EITHER, HUMAN, Label, WorktreeCalls
from oxide_git.blame.diff import SAME, Diff
from oxide_git.blame.memo import digest as _digest
from oxide_git.blame.restores import Restores
from oxide_git.blame.restores import read as read_restores
from oxide_git.blame.versions import NONE, Version
from oxide_git.store.context import Context

if TYPE_CHECKING:
    from oxide_git.blame.lookups import Lookups


class State(NamedTuple):
    id: str
    kind: str
    session_id: str | None
    message_id: str | None
    tree: str
    created_at: int


# An interval a walk explained: (state index, its version's blob, the next one's, the interval's
# end: None for the walk's own end, its key in the memo)
Visit = tuple[int, str | None, str | None, int | None, bytes | None]


class Placed(NamedTuple):
    """Where a line was written: its label, the first checkpoint that has it (None: only the
    final version) and the last one that did not."""

    label: Label
    checkpoint: str | None = None
    before: str | None = None


BASE = "base"  # the kind of the state before the first checkpoint: the commit it was taken on
BEFORE_RESTORE = "before-rewind"  # the kind of the checkpoint a rewind or an undo takes first


class Timeline:
    """The checkpoints of one worktree (its id and path), oldest first, after a ``base`` state:
    the commit the first checkpoint was taken on (``default_base`` when there is none), whose
    uncommitted lines at the first checkpoint are older than oxide unless a replayed tool call
    wrote them."""

    def __init__(self, ctx: Context, objects: Lookups, worktree: str, path: str,
                 default_base: str | None = None, blobs: dict[str, Version] | None = None) -> None:
        self.ctx, self.objects, self.memo = ctx, objects, objects.memo
        self.worktree, self.path = worktree, path
        rows = ctx.index.query(
            "SELECT id, kind, session_id, message_id, tree, created_at, head FROM checkpoints "
            "WHERE worktree=? AND worktree_path=? ORDER BY created_at, rowid", (worktree, path))
        real = [State(r[0], r[1], r[2], r[3], r[4], int(r[5] or 0)) for r in rows]
        base = _base_state(objects, rows[0][6] if rows else default_base)
        self.states = ([base] if base else []) + real
        self.position = {s.id: i for i, s in enumerate(self.states) if s.kind != BASE}
        self.restores: Restores = {}  # before-rewind checkpoint -> the one restored after it
        if any(s.kind == BEFORE_RESTORE for s in real):
            self.restores = read_restores(str(ctx.repo.oxide_dir), worktree)
        self._calls: WorktreeCalls | None = None
        self._versions: dict[tuple[str, str], Version] = {}
        self._blobs: dict[str, Version] = blobs if blobs is not None else {}
        self._diffs: dict[tuple[str | None, str | None], Diff] = {}
        self._explained: dict[tuple[int, str, str | None], tuple[list[tuple[Version, Label]], Label]] = {}
        self._ikeys: dict[tuple[int, str, str | None, str | None, int], bytes] = {}
        self._prefix: list[bytes] | None = None
        governing: list[tuple[str, str | None] | None] = []
        for s in self.states:
            prev = governing[-1] if governing else None
            governing.append((s.session_id, s.message_id) if s.kind == "prompt" and s.session_id else prev)
        self.governing = governing

    @property
    def calls(self) -> WorktreeCalls:
        if self._calls is None:
            self._calls = WorktreeCalls(self.ctx, self.objects, self.worktree, self.path)
        return self._calls

    def prepare(self) -> None:
        """Read what a walk through this timeline will: its states' digest, and the sessions that
        worked in the worktree (``blame.prepare``: while `git blame` runs)."""
        self._states_digest(len(self.states))
        assert self.calls is not None

    def latest_message(self) -> int:
        """The newest message time of the sessions whose calls were read (0: none read)."""
        return self._calls.latest if self._calls is not None else 0

    def version(self, i: int, rel: str) -> Version:
        tree_id = self.states[i].tree
        key = (tree_id, rel)
        got = self._versions.get(key)
        if got is None:
            oid = self.objects.blob_at(tree_id, rel)
            got = self._versions[key] = NONE if oid is None else self.blob(oid)
        return got

    def blob(self, oid: str) -> Version:
        """The version of blob ``oid``, one for the whole run (versions recur: a commit's file is
        its checkpoint's, a checkpoint's is most often the one before's), its bytes read only if
        a diff or a replay needs them."""
        got = self._blobs.get(oid)
        if got is None:
            got = self._blobs[oid] = Version(oid, None, lambda: self.objects.blob(oid))
        return got

    def diff(self, old: Version, new: Version) -> Diff:
        key = (old.oid, new.oid)
        d = self._diffs.get(key)
        if d is None:
            if old.oid is not None and old.oid == new.oid:
                d = SAME
            else:
                kept = self.memo.get("diffs", key) if old.oid is not None or new.oid is not None else None
                if kept is not None:
                    d = Diff.of_hunks(*kept)
                else:
                    d = Diff(old.obj, new.obj)
                    if old.oid is not None or new.oid is not None:
                        self.memo.put("diffs", key, d.hunks())
            self._diffs[key] = d
        return d

    def walk(self, rel: str, final: Version, upto: int, t_final: int, lines: list[int],
             when_final: int | None = None, final_id: str | None = None,
             slot: str | None = None) -> dict[int, Placed]:
        """Where each of ``lines`` (0-based, of ``final``) first appeared, going back from the
        states before index ``upto``; ``final`` is the file as it was at ``t_final`` (in the
        checkpoint ``final_id``, if it is one's; ``slot`` names the walk in the memo otherwise,
        when it is not the worktree's).

        Kept in the memo (one walk a worktree, path and final checkpoint) by what it reads but the
        explanations of its intervals: the states it goes through, the final version, the lines;
        served only when each interval it explained has the same key again (the calls in it:
        with the same explanations, the same lines are followed through the same intervals)."""
        memo_slot = (self.worktree, self.path, rel, final_id if slot is None else slot)
        key = None
        if final.oid is not None:
            key = _digest(("walk", final.oid, self._states_digest(upto), upto, tuple(lines), when_final,
                           None if when_final else t_final))  # t_final: only a when then
            kept = self.memo.get("walks", memo_slot)
            if kept is not None and kept[0] == key:
                got = self._kept_walk(kept[1], kept[2], rel, t_final)
                if got is not None:
                    return got
        visits: list[Visit] = []
        out = self._walk(rel, final, upto, t_final, lines, when_final, final_id, visits)
        if key is not None and all(v[4] is not None for v in visits):
            labels: dict[Label, tuple[object, ...]] = {}  # shared: marshal writes each once
            rows = [(ln, labels.setdefault(p.label, _plain(p.label)), p.checkpoint, p.before)
                    for ln, p in out.items()]
            self.memo.put("walks", memo_slot, (key, visits, rows))
        return out

    def _kept_walk(self, visits: list[Visit],
                   rows: list[tuple[int, tuple[object, ...], str | None, str | None]], rel: str,
                   t_final: int) -> dict[int, Placed] | None:
        for i, prev, cur, t1, interval in visits:
            if i >= len(self.states) or self._interval_key(i, rel, prev, cur, t_final if t1 is None else t1) \
                    != interval:
                return None
        labels: dict[tuple[object, ...], Label] = {}
        out = {}
        for ln, lb, cp, before in rows:
            label = labels.get(lb)
            if label is None:
                label = labels[lb] = Label(*lb)  # type: ignore[arg-type]
            out[ln] = Placed(label, cp, before)
        return out

    def _states_digest(self, upto: int) -> bytes:
        """A digest of the states before index ``upto`` (one pass over them for the run)."""
        if self._prefix is None:
            h = hashlib.blake2b(digest_size=20)
            self._prefix = [h.digest()]
            for s in self.states:
                h.update(repr((s.id, s.kind, s.session_id, s.message_id, s.tree, s.created_at,
                               self.restores.get(s.id))).encode("utf-8", "surrogateescape"))
                self._prefix.append(h.digest())
        return self._prefix[min(upto, len(self.states))]

    def _interval_key(self, i: int, rel: str, prev: str | None, cur: str | None, t1: int) -> bytes | None:
        """The memo key of the explanation of the interval from state ``i`` to ``t1`` (None: two
        missing files, nothing to keep)."""
        if prev is None and cur is None:
            return None
        k = (i, rel, prev, cur, t1)
        got = self._ikeys.get(k)
        if got is None:
            s = self.states[i]
            got = self._ikeys[k] = self.calls.key(rel, prev, cur, s.created_at, t1, self.governing[i],
                                                  s.kind == BASE)
        return got

    def _walk(self, rel: str, final: Version, upto: int, t_final: int, lines: list[int],
              when_final: int | None, final_id: str | None,
              visits: list[Visit]) -> dict[int, Placed]:
        finals = sorted(set(lines))  # lines of final still followed ...
        pos = list(finals)  # ... and where each is in the version looked at (ascending)
        out: dict[int, Placed] = {}
        cur, cur_t = final, t_final
        at_final = True  # cur_t is still t_final
        nxt_id = final_id  # the checkpoint holding cur first (None: only final)
        i = min(upto, len(self.states)) - 1
        while i >= 0 and finals:
            # the file as the interval after state i began: a restore's target's, when a rewind or
            # an undo wrote it right after (state ``at``: where the walk goes on), else state i's
            at = self.restored(i, rel)
            prev = self.version(at, rel)
            if prev.oid is not None and prev.oid == cur.oid:
                cur_t, nxt_id, at_final = self.states[at].created_at, self.states[at].id or None, False
                i = at - 1
                continue
            mapped, added = self.diff(prev, cur).trace_sorted(pos)
            if added:
                # the interval's key, and its end: None for the clock's end (t_final, not in the key)
                visits.append((i, prev.oid, cur.oid, None if at_final else cur_t,
                               self._interval_key(i, rel, prev.oid, cur.oid, cur_t)))
                placed, back = self._place(i, rel, prev, cur, cur_t, [pos[j] for j in added])
                when = when_final if nxt_id == final_id and when_final else cur_t
                for j in added:
                    label = placed.get(pos[j])
                    if label is None:  # the replay found it in prev after all
                        mapped[j] = back[pos[j]]
                        continue
                    if label.when_ms is None or label.who in (HUMAN, EITHER):
                        label = _with_when(label, when)
                    out[finals[j]] = Placed(label, nxt_id, self.states[at].id or None)
                if back:  # lines the replay traced back may sit out of order among the others
                    kept = sorted((m, f) for m, f in zip(mapped, finals, strict=True) if m >= 0)
                    pos, finals = [m for m, _ in kept], [f for _, f in kept]
                else:  # every added line placed: cut them out, a run at a time, from the end
                    for a, b in reversed(runs(added)):
                        del mapped[a:b], finals[a:b]
                    pos = mapped
            else:
                pos = mapped
            cur, cur_t, nxt_id, at_final = prev, self.states[at].created_at, self.states[at].id or None, False
            i = at - 1
        for ln in finals:
            out[ln] = Placed(Label(BEFORE), nxt_id, None)
        return out

    def restored(self, i: int, rel: str) -> int:
        """The state whose version of ``rel`` a rewind or an undo wrote right after state ``i``
        (its before-rewind checkpoint), by the journal; ``i`` itself when none did (no restore,
        the path left as it was, or a target that is not an earlier state of this timeline)."""
        got = self.restores.get(self.states[i].id) if self.restores else None
        if got is None:
            return i
        target, kept = got
        if any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in kept):
            return i
        at = self.position.get(target)
        return at if at is not None and at < i else i

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
            t0, governing, unknown = self.states[i].created_at, self.governing[i], self.states[i].kind == BASE
            memo_key = self._interval_key(i, rel, prev.oid, cur.oid, t1)
            kept = self.memo.get("steps", memo_key) if memo_key is not None else None
            if kept is not None:
                got = self._explained[key] = self._kept_steps(kept, i, rel, prev, cur, t1)
                return got
            ex = self.calls.explain(rel, prev.text(), cur.text(), t0, t1, governing, unknown=unknown)
            steps = []
            for text, label in ex.steps:
                data = None if text is None else text.encode("utf-8", "surrogateescape")
                # most often the replay gives the next state itself: no hash, no diff
                version = NONE if data is None else cur if data == cur.obj else Version.of_bytes(data)
                steps.append((version, label))
            got = self._explained[key] = (steps, ex.rest)
            if memo_key is not None:
                versions = [prev, *(v for v, _ in steps), cur]
                for a, b in pairwise(versions):
                    self.diff(a, b)  # kept with the steps: a run that finds them needs no text
                self.memo.put("steps", memo_key, ([(v.oid, _plain(lb)) for v, lb in steps], _plain(ex.rest)))
        return got

    def _kept_steps(self, kept: tuple[list[tuple[str | None, tuple[object, ...]]], tuple[object, ...]],
                    i: int, rel: str, prev: Version, cur: Version, t1: int
                    ) -> tuple[list[tuple[Version, Label]], Label]:
        """The memo's steps as versions: a step's text, if a diff the memo lacks needs it, comes
        from the replay done again (the memo keeps ids, not texts)."""
        texts: list[bytes | None] | None = None

        def text_of(k: int) -> bytes:
            nonlocal texts
            if texts is None:
                ex = self.calls.explain(rel, prev.text(), cur.text(), self.states[i].created_at, t1,
                                        self.governing[i], unknown=self.states[i].kind == BASE)
                texts = [None if t is None else t.encode("utf-8", "surrogateescape") for t, _ in ex.steps]
            data = texts[k] if k < len(texts) else None
            if data is None:  # pragma: no cover - the same inputs replay to the same steps
                raise RuntimeError("a kept blame step replays differently")
            return data

        steps = []
        for k, (oid, label) in enumerate(kept[0]):
            if oid is None:
                version = NONE
            elif oid == cur.oid:
                version = cur
            else:
                version = Version(oid, None, lambda k=k: text_of(k))  # type: ignore[misc]
            steps.append((version, Label(*label)))  # type: ignore[arg-type]
        return steps, Label(*kept[1])  # type: ignore[arg-type]


def runs(ascending: list[int]) -> list[tuple[int, int]]:
    """Ascending distinct integers as runs of consecutive ones, (first, last + 1) each."""
    out: list[tuple[int, int]] = []
    for n in ascending:
        if out and out[-1][1] == n:
            out[-1] = (out[-1][0], n + 1)
        else:
            out.append((n, n + 1))
    return out


def _base_state(objects: Lookups, commit: str | None) -> State | None:
    if not commit:
        return None
    got = objects.commit(commit)
    if got is None:
        return None
    return State("", BASE, None, None, got[0], got[1] * 1000)


def _plain(label: Label) -> tuple[str | None, str | None, str | None, str | None, str | None, int | None]:
    return (label.who, label.session_id, label.message_id, label.agent, label.model, label.when_ms)


def _with_when(label: Label, when: int | None) -> Label:
    return Label(label.who, label.session_id, label.message_id, label.agent, label.model, when)
