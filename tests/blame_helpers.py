"""Building sessions whose tool calls really change files in a real repository, with checkpoints
taken as the hooks take them: for the blame tests."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from oxide_git.core.model import Message, Part, Session
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.store import writes as store

from .conftest import make_ctx


class Clock:
    """Milliseconds that only go forward and never fall behind the real clock (the git hooks
    take their checkpoints at the real time)."""

    def __init__(self, start: int | None = None) -> None:
        self.t = start if start is not None else int(time.time() * 1000) - 3_600_000

    def tick(self, ms: int = 1) -> int:
        self.t = max(self.t + ms, int(time.time() * 1000))
        return self.t


class FakeAgent:
    """A session in ``repo`` whose calls are applied to the files as the agent's tools would."""

    def __init__(self, repo: Path, clock: Clock, sid: str, agent: str = "claude", model: str = "model-x") -> None:
        self.repo, self.clock, self.agent, self.model = repo, clock, agent, model
        self.session = Session(id=sid, agent=agent, native_id="n-" + sid[-6:], cwd=str(repo),
                               worktree="main", model=model)
        self.n = 0
        self.prompt_ids: list[str] = []

    def ctx(self) -> Any:
        return make_ctx(self.repo, self.clock.t)

    def _append(self, *messages: Message) -> dict[int, Message]:
        ctx = self.ctx()
        try:
            return store.append(ctx, self.session, list(messages))
        finally:
            ctx.close()

    def prompt(self, text: str, *, checkpoint_it: bool = True) -> str:
        placed = self._append(Message("user", (Part.text(text),), created_at=self.clock.tick()))
        mid = next(iter(placed.values())).id
        self.prompt_ids.append(mid)
        if checkpoint_it:
            self.clock.tick(5)
            take(self.repo, self.clock, kind="prompt", session=self.session.id, message_id=mid)
        return mid

    def call(self, name: str, args: dict[str, Any], apply: Any = None, *, error: bool = False) -> None:
        self.n += 1
        cid = f"call-{self.n}"
        self._append(Message("assistant", (Part.tool_call(cid, name, args),), created_at=self.clock.tick(),
                             model=self.model))
        self.clock.tick(2)
        if apply is not None and not error:
            apply()
        self._append(Message("user", (Part.tool_result(cid, "ok", is_error=error),), created_at=self.clock.tick(3)))

    def write(self, rel: str, content: str) -> None:
        self.call("Write", {"file_path": str(self.repo / rel), "content": content},
                  lambda: _write(self.repo / rel, content))

    def edit(self, rel: str, old: str, new: str, *, replace_all: bool = False) -> None:
        def go() -> None:
            p = self.repo / rel
            text = p.read_text()
            assert old in text, (old, text)
            _write(p, text.replace(old, new) if replace_all else text.replace(old, new, 1))
        self.call("Edit", {"file_path": str(self.repo / rel), "old_string": old, "new_string": new,
                           "replace_all": replace_all}, go)

    def shell(self, command: str, effect: Any = None) -> None:
        self.call("Bash", {"command": command}, effect)

    def say(self, text: str) -> None:
        self._append(Message("assistant", (Part.text(text),), created_at=self.clock.tick(), model=self.model))


def _write(p: Path, content: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(content)


def human_edit(repo: Path, clock: Clock, rel: str, content: str) -> None:
    clock.tick()
    _write(repo / rel, content)
    st = os.stat(repo / rel)
    os.utime(repo / rel, ns=(st.st_atime_ns, clock.t * 1_000_000))


def take(repo: Path, clock: Clock, **kw: Any) -> str:
    ctx = make_ctx(repo, clock.t)
    try:
        return checkpoint(ctx, **kw).id
    finally:
        ctx.close()


def memo_file(repo: Path, rel: str = "notes.txt") -> Path:
    from oxide_git.blame.memo import memo_path

    return Path(memo_path(str(repo / ".git"), rel))


def lines_of(res: Any) -> list[dict[str, Any]]:
    """Everything a blame answers, line by line."""
    return [{**ln._asdict(), "short": {k: res.id(k) for k in (ln.session_id, ln.checkpoint, ln.commit)}}
            for ln in res.lines]


def exact_blame(ctx: Any, rel: str, **kw: Any) -> Any:
    """``blame_file`` with what the memo holds (``blame_memo``), checked against the memo-less
    answer, the answer with the memo empty, and the answer from the memo that run filled (which
    must hold all that run needs: nothing is added to it)."""
    from oxide_git.blame.attribution import blame_file

    res = blame_file(ctx, rel, **kw)
    want = lines_of(res)
    memo = memo_file(ctx.repo.workdir, os.path.relpath(os.path.join(ctx.repo.workdir, rel), ctx.repo.workdir))

    def again(**env: str) -> Any:
        other = type(ctx)(ctx.repo, ctx.now_ms, {**ctx.environ, **env})
        try:
            return blame_file(other, rel, **kw)
        finally:
            other.close()

    assert lines_of(again(OXIDE_BLAME_MEMO="0")) == want
    memo.unlink(missing_ok=True)
    assert lines_of(again()) == want
    filled = memo.read_bytes() if memo.exists() else None
    assert lines_of(again()) == want
    assert (memo.read_bytes() if memo.exists() else None) == filled  # all of it was kept
    return res


def commit(repo: Path, *args: str) -> str:
    """``git add -A`` and ``git commit`` with the hooks' queued jobs run: the new commit's id."""
    from tests.hooks.test_hooks import idle

    from .conftest import git

    git(repo, "add", "-A")
    git(repo, "commit", "-q", *args)
    idle(repo)
    return git(repo, "rev-parse", "HEAD").strip()
