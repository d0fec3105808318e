"""`git oxide list`'s table: a line per session, newest first, and the note under it.

The click command (``cli/sessions.py``) and the click-free form the console script runs
(``list_command.plain``) both print what ``listing`` returns. At 10,000 sessions it is built from
one query of the table's own columns (``Index.session_table``: the conversation's message count
worked out by SQLite) and one abbreviator over every id in the store, with no dict per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from oxide_git.core.ago import ago_ms
from oxide_git.core.text_table import table_text
from oxide_git.core.titles import display
from oxide_git.store.context import Context

HEADERS = ("ID", "AGENT", "MSGS", "WORKTREE", "BRANCH", "UPDATED", "TITLE")
TITLE_WIDTH = 60


class Listing(NamedTuple):  # not a dataclass: `list` imports no dataclasses (~10 ms)
    text: str  # the table on stdout ("" when no session is listed)
    note: str | None  # a line for stderr: what is not shown, or how to get a first session


def tree_order(rows: Sequence[Any], id_of: Any, parent_of: Any) -> list[tuple[int, Any]]:
    """Rows as (depth, row) in fork-tree order: each parent followed by its forks (a fork whose
    parent is not among ``rows`` stands at the top)."""
    ids = {id_of(r) for r in rows}
    by_parent: dict[str | None, list[Any]] = {}
    for r in rows:
        parent = parent_of(r)
        by_parent.setdefault(parent if parent in ids else None, []).append(r)
    out: list[tuple[int, Any]] = []

    def walk(pid: str | None, depth: int) -> None:
        for r in by_parent.get(pid, []):
            out.append((depth, r))
            walk(id_of(r), depth + 1)

    walk(None, 0)
    return out


def listing(ctx: Context, *, all_worktrees: bool = False, agent: str | None = None,
            tree: bool = False) -> Listing:
    """The table of this worktree's sessions (every worktree's with ``all_worktrees``), forks under
    their parents with ``tree``, and the note that goes with it."""
    rows = ctx.index.session_table(worktree=None if all_worktrees else ctx.repo.worktree_id, agent=agent)
    stored = ctx.index.session_count()
    note = _note(ctx, len(rows), stored, all_worktrees=all_worktrees, agent=agent)
    if not rows:
        return Listing("", note)
    # r: (id, agent, real_count, worktree, branch, updated_at, title, first_prompt, parent_id, native_id)
    every = ((r[0], r[9]) for r in rows) if len(rows) == stored else None  # one worktree: all of them
    abbrev = ctx.index.session_abbrev(every).of
    now = ctx.now_ms
    ordered = tree_order(rows, _id, _parent) if tree else [(0, r) for r in rows]
    merged: dict[str, list[str]] = {}
    if tree:
        from oxide_git.ops.merge_marks import merged_into

        merged = merged_into(ctx, [r[0] for r in rows])
    return Listing(table_text(HEADERS, [
        (abbrev(r[0]), r[1], r[2], r[3] or "-", r[4] or "-", ago_ms(r[5], now) if r[5] is not None else "-",
         ("  " * depth + "└ " if depth else "") + display(r[6], r[7], r[0], TITLE_WIDTH)
         + ("".join(f" (merged into {abbrev(t)})" for t in merged[r[0]]) if r[0] in merged else ""))
        for depth, r in ordered]), note)


def _id(row: Any) -> str:
    return str(row[0])


def _parent(row: Any) -> str | None:
    return row[8]


def _note(ctx: Context, shown: int, stored: int, *, all_worktrees: bool, agent: str | None) -> str | None:
    if not all_worktrees:
        hidden = (ctx.index.session_count(agent=agent) if agent else stored) - shown
        if hidden:
            return (f"{hidden} session(s) of other worktrees or other folders are not shown "
                    "(their WORKTREE is not this one's); `git oxide list --all` shows them")
        if not shown:
            return "No session yet; `git oxide import` finds this repository's sessions"
    elif not shown:
        return (f"No {agent + ' ' if agent else ''}session in this store; "
                "`git oxide import` finds this repository's sessions")
    return None
