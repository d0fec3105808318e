"""What `watch` does with changed paths: pure (no I/O, no clock), so it is tested by feeding paths.

A path under an agent's store becomes an ``Import`` once the file has been quiet for ``debounce``
seconds (or has been changing for ``max_wait``); a path in a worktree goes to that worktree's
journal at once. Paths inside ``.git`` are nobody's business.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Import:
    agent: str
    path: str


@dataclass(frozen=True)
class Journal:
    worktree: str  # worktree id
    paths: tuple[str, ...]  # relative to the worktree top, POSIX


@dataclass
class Plan:
    stores: Mapping[str, str]  # absolute store root -> agent
    worktrees: Mapping[str, str]  # absolute worktree top -> worktree id
    agent_files: Mapping[str, str] = field(default_factory=dict)  # file name in a worktree -> agent
    debounce: float = 0.15
    max_wait: float = 0.6
    pending: dict[str, tuple[str, float, float]] = field(default_factory=dict)  # path -> agent, first, last

    def _under(self, path: str, roots: Iterable[str]) -> str | None:
        best = None
        for root in roots:
            if (path == root or path.startswith(root.rstrip(os.sep) + os.sep)) and \
                    (best is None or len(root) > len(best)):
                best = root
        return best

    def classify(self, path: str) -> tuple[str, str, str] | None:
        """("agent", agent, path) or ("worktree", worktree id, relative path) or None."""
        path = os.path.normpath(path)
        root = self._under(path, self.stores)
        if root is not None:
            return ("agent", self.stores[root], path)
        top = self._under(path, self.worktrees)
        if top is None or path == top:
            return None
        rel = os.path.relpath(path, top).replace(os.sep, "/")
        if rel == ".git" or rel.startswith(".git/"):
            return None
        owner = self.agent_files.get(rel.rsplit("/", 1)[-1])
        if owner is not None:  # an agent's file kept in the worktree (Aider's history)
            return ("agent", owner, path)
        return ("worktree", self.worktrees[top], rel)

    def feed(self, paths: Iterable[str], now: float) -> list[Journal]:
        """Take changed paths; return the journal entries to write now (imports wait in ``due``)."""
        journal: dict[str, list[str]] = {}
        for p in paths:
            c = self.classify(p)
            if c is None:
                continue
            kind, who, what = c
            if kind == "agent":
                _agent, first, _last = self.pending.get(what, (who, now, now))
                self.pending[what] = (who, first, now)
            elif what not in journal.setdefault(who, []):
                journal[who].append(what)
        return [Journal(w, tuple(ps)) for w, ps in journal.items()]

    def retry(self, agent: str, path: str, now: float, after: float) -> None:
        """Import ``path`` again ``after`` seconds from ``now`` (an import that found its ref locked:
        a lock a killed writer left is broken once stale), unless it changes before."""
        self.pending.setdefault(path, (agent, now + after, now + after))

    def due(self, now: float) -> list[Import]:
        """Files quiet for ``debounce`` s, or changing for ``max_wait`` s: import them now."""
        out = []
        for path, (agent, first, last) in list(self.pending.items()):
            if now - last >= self.debounce or now - first >= self.max_wait:
                out.append(Import(agent, path))
                del self.pending[path]
        return out
