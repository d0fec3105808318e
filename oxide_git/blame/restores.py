"""What a rewind or an undo put back, for `git oxide blame`: a file a restore wrote holds its lines
as they were in the checkpoint restored, and keeps their attribution there.

Both take a ``before-rewind`` checkpoint of the worktree, then write the files of the target
checkpoint; the worktree's undo journal (``<git-common-dir>/oxide/worktrees/<id>/journal.jsonl``,
``journal``) names both: ``files_before`` the checkpoint taken first, ``files_after`` the one
restored, and (from the journal's newer lines on) ``files_kept`` the paths it did not write. So the
interval after that before-rewind checkpoint starts from the target's version of a file, and the
walk goes on back from the target (``blame.timeline``). Read as plain JSON lines, whatever other
fields a line has; a line that does not parse is skipped, as ``journal`` skips it.
"""

from __future__ import annotations

import json
import os

# before-rewind checkpoint id -> (the checkpoint restored right after it, the paths left as they were)
Restores = dict[str, tuple[str, tuple[str, ...]]]


def read(oxide_dir: str, worktree: str) -> Restores:
    """The restores journaled in worktree ``worktree`` (its oxide id)."""
    out: Restores = {}
    try:
        with open(os.path.join(oxide_dir, "worktrees", worktree, "journal.jsonl"), "rb") as f:
            data = f.read()
    except OSError:
        return out
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        before, after, kept = entry.get("files_before"), entry.get("files_after"), entry.get("files_kept")
        if isinstance(before, str) and isinstance(after, str) and before != after:
            paths = tuple(sorted(p for p in kept if isinstance(p, str))) if isinstance(kept, list) else ()
            out[before] = (after, paths)
    return out
