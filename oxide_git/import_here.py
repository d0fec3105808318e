"""Sessions imported by path are this repository's: the worktree that imported them keeps them.

A transcript given on the command line (`git oxide import --agent A FILE`) was most often written
on another machine, or in a folder that is no worktree of this repository: its working folder
names no worktree here, and `list` (this worktree's sessions) did not show what the user had just
imported. Such a session is recorded as this worktree's (``worktree``), with the worktree that
took it in ``source["imported_by_path"]``; a later import of the same file keeps it there
(``import_writer``), and a session whose folder is a worktree here stays that worktree's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from . import logwrite, store
from .context import Context

KEY = "imported_by_path"


def adopt(ctx: Context, session_ids: Iterable[str]) -> list[str]:
    """The sessions of ``session_ids`` that belonged to no worktree, made this worktree's."""
    here = ctx.repo.worktree_id
    adopted = []
    for sid in session_ids:
        log = logwrite.tip(ctx.repo.objects, ctx.repo.common_dir, sid)
        if log is None or log.session.worktree is not None:
            continue
        s = log.session
        store.save(ctx, replace(s, worktree=here, source={**s.source, KEY: here}), {},
                   summary="imported into this worktree by path")
        adopted.append(sid)
    return adopted
