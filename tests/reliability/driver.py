"""A writer process for the crash and concurrency trials: appends and checkpoints, acking each.

    python driver.py REPO SESSION_ID PREFIX N_MESSAGES CHECKPOINT_EVERY [FILE]

After each append that returned it prints ``M <text>``; after each checkpoint ``C <ref> <tree>``
(flushed), so a parent that kills it knows exactly what was acknowledged. Checkpoints write
``FILE`` (default ``PREFIX.txt``) with the message count first, so each one has its own tree.
Exits 1 with an ``error:`` line on an ``OxideError``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main() -> int:
    repo, sid, prefix, n, every = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    fname = sys.argv[6] if len(sys.argv) > 6 else f"{prefix}.txt"
    from oxide_git.core.errors import OxideError
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.git.repo import find_repo
    from oxide_git.ops.checkpoint import checkpoint
    from oxide_git.store import writes as store
    from oxide_git.store.context import Context

    session = Session(id=sid, agent="claude", native_id="n-" + sid[-6:], title="reliability")
    try:
        for i in range(n):
            ctx = Context(find_repo(Path(repo)), int(time.time() * 1000), dict(os.environ))
            text = f"{prefix}-{i}"
            store.append(ctx, session, [Message("user", (Part.text(text),), created_at=ctx.now_ms)])
            print(f"M {text}", flush=True)
            if every and (i + 1) % every == 0:
                Path(repo, fname).write_text(f"{prefix} {i}\n")
                cp = checkpoint(ctx, text=text, session=None)
                print(f"C {cp.ref} {cp.tree}", flush=True)
            ctx.close()
    except OxideError as e:
        print(f"error: {e.message}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
