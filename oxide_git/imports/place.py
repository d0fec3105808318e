"""Where an import puts a transcript's messages: the import cursor belongs to what the tip holds.

A file's cursor remembers, besides the byte offset and the parser's state, the next sequence
number of each session and the log commit the import left at the session's tip (``tips``). While
the tip is still that commit, the next lines go on at the cursor's numbers (O(appended)). When the
tip moved since (a pull fast-forwarded or merged it, a rewind or an undo moved it, another file or
a hook appended to it, or the cursor is new), the numbers are not trusted: the messages the tip
already holds (the same ``model.message_key``) are written again at their own place, every other one after the
tip's last message. A place in a log then never holds two different messages, and nothing a
transcript holds is left out because "the file did not change".

When the tip no longer descends from the commit the cursor remembers (the session was replaced),
``replaced`` says so and the file is read whole again, so every line the tip lacks comes back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from oxide_git.core import codec
from oxide_git.core.model import merge_key, message_key
from oxide_git.git import refs
from oxide_git.store import logread

if TYPE_CHECKING:
    from oxide_git.core.model import Message
    from oxide_git.git.objects import Objects
    from oxide_git.store.context import Context


@dataclass
class Placement:
    """The messages a session's tip holds (by ``key``: their seqs, in order) and the next free seq.

    Two messages with one key (the same content said twice) are two messages: each placed one
    takes the next place of its key not taken yet. ``floor``: the first place a file's messages
    can be at (where its cursor's numbers start: a grown file is read from its restart point,
    and what it wrote before that point is not read again).

    What a merge brought (``model.merge_key``: a merged message, the merge's marker) is the
    merge's: the agent's copy of it (the file `resume --into` wrote, which the agent then went
    on) is matched by that key too, and is not written over it (its line ids are the agent's,
    another agent's record handed over is Claude's or Codex's rendition, and it lacks the merge's
    marks); the agent's own turns after it go after the tip."""

    held: dict[str, list[int]] = field(default_factory=dict)
    next: int = 0
    floor: int = 0
    merged: set[int] = field(default_factory=set)  # the places of what a merge brought
    taken: set[int] = field(default_factory=set)
    _projection: _Projection | None = field(default=None, repr=False)

    @classmethod
    def of_tip(cls, objects: Objects, tip: logread.Tip, floor: int = 0) -> Placement:
        held: dict[str, list[int]] = {}
        merged: set[int] = set()
        for seq, data in logread.blobs_at(objects, tip.tree, range(floor, tip.count)):
            m = codec.decode_message(data)
            held.setdefault(message_key(m), []).append(seq)
            mk = merge_key(m)
            if mk is not None:
                held.setdefault(mk, []).append(seq)
                held.setdefault(_echo_key(m), []).append(seq)
                merged.add(seq)
        return cls(held, tip.count, floor, merged)

    def _find(self, m: Message, taken: set[int] | _Taken,
              get: Callable[[str], list[int] | None]) -> int | None:
        for key in (message_key, merge_key, _echo_key):
            if key is _echo_key and not self.merged:
                break  # only what a merge brought is held under it
            k = key(m)
            seqs = get(k) if k is not None else None
            while seqs and seqs[0] in taken:
                seqs.pop(0)
            if seqs:
                return seqs.pop(0)
        return None

    def _seq(self, m: Message) -> tuple[int, bool]:
        """(the place of ``m``, whether it is a merge's copy that is left as the merge wrote it)."""
        seq = self._find(m, self.taken, self.held.get)
        if seq is not None:
            self.taken.add(seq)
            return seq, seq in self.merged
        self.next += 1
        return self.next - 1, False

    def place(self, msgs: Iterable[Message]) -> list[tuple[int, list[Message]]]:
        """``msgs`` placed: runs of consecutive seqs, ``(start, messages)``."""
        runs: list[tuple[int, list[Message]]] = []
        for m in msgs:
            seq, keep = self._seq(m)
            if keep:
                continue
            if runs and runs[-1][0] + len(runs[-1][1]) == seq:
                runs[-1][1].append(m)
            else:
                runs.append((seq, [m]))
        self._projection = None
        return runs

    def note(self, m: Message) -> None:
        """``m`` is pending (not placed yet): where the next free seq would be once it is, kept as
        each message comes (``projected``, asked at every restart point of a file, is O(1))."""
        if self._projection is None:
            self._projection = _Projection(self)
        p = self._projection
        seq = self._find(m, p.taken, p.get)
        if seq is None:
            p.new += 1
        else:
            p.taken.add(seq)

    def projected(self) -> int:
        """The next free seq once the messages ``note``d since the last ``place`` are placed."""
        return self.next + (self._projection.new if self._projection is not None else 0)


class _Projection:
    """The places pending messages would take: copies of only the keys they touch, and the places
    taken seen through ``_Taken`` (nothing of the placement is copied whole)."""

    def __init__(self, of: Placement) -> None:
        self.held, self.copies = of.held, dict[str, list[int]]()
        self.taken = _Taken(of.taken)
        self.new = 0

    def get(self, k: str) -> list[int] | None:
        if k not in self.copies:
            if k not in self.held:
                return None
            self.copies[k] = list(self.held[k])
        return self.copies[k]


class _Taken:
    """The places taken: those of ``base`` and those added here (``base`` is not copied)."""

    def __init__(self, base: set[int]) -> None:
        self.base, self.more = base, set[int]()

    def __contains__(self, seq: object) -> bool:
        return seq in self.base or seq in self.more

    def add(self, seq: int) -> None:
        self.more.add(seq)


_CORE = {"text": ("text",), "reasoning": ("text",), "tool_call": ("call_id", "name", "input"),
         "tool_result": ("call_id", "output", "is_error")}


def _echo_key(m: Message) -> str:
    """A message as an agent without message ids (Codex) gives back what `resume --into` wrote:
    its role, time and what it says (texts, calls, results), without the agent's own records and
    fields around them. Only what a merge brought is held under it (``Placement.merged``)."""
    said = [[p.type, *(p.get(k) for k in _CORE[p.type])] for p in m.parts if p.type in _CORE]
    body = json.dumps(said, sort_keys=True, default=str, ensure_ascii=False)
    return f"e:{m.role}:{m.created_at}:{hashlib.sha1(body.encode('utf-8', 'surrogatepass')).hexdigest()[:20]}"


def tips_now(ctx: Context, sids: Iterable[str]) -> dict[str, str]:
    """{session: the commit at its ref} (a removed session is left out): what a cursor keeps."""
    out = {}
    for sid in sids:
        oid = refs.read_raw(ctx.repo.common_dir, refs.session_ref(sid))
        if oid is not None:
            out[sid] = oid.hex()
    return out


def removed(ctx: Context, tips: Mapping[str, str]) -> bool:
    """Whether a session a cursor remembers has no log any more (`rm`): a file that grows after it
    is read whole (its parser has no restart point without the session), the session back whole."""
    return any(refs.read_raw(ctx.repo.common_dir, refs.session_ref(sid)) is None for sid in tips)


def replaced(ctx: Context, tips: Mapping[str, str] | None) -> bool:
    """Whether a session's tip no longer descends from the commit a cursor remembers (``tips``):
    the log was replaced (a pull, an undo, a removal and a new import), so the file must be read
    whole. The index's record of each tip answers the common case without git; a removed session
    is not a replaced one (a removal stays: nothing is imported again for it)."""
    if not tips:
        return False
    known = ctx.index.session_tips(tips)
    moved = [sid for sid, rec in tips.items() if known.get(sid) != rec]
    if not moved:
        return False
    git = None
    for sid in moved:
        now = refs.read_raw(ctx.repo.common_dir, refs.session_ref(sid))
        if now is None or now.hex() == tips[sid]:
            continue
        git = git or ctx.repo.git
        try:
            import pygit2

            if not git.descendant_of(pygit2.Oid(raw=now), pygit2.Oid(hex=tips[sid])):
                return True
        except (KeyError, ValueError, pygit2.GitError):
            return True  # what it remembers is gone (collected): read whole
    return False
