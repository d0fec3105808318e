"""What `list`, `show` and the picker count as a session's messages: the index's ``real`` column,
worked out as each row is written, kept by a fork and by a rebuild from git."""

from __future__ import annotations

from pathlib import Path

from oxide_git.core.model import Message, Part, Session
from oxide_git.ops.fork import fork
from oxide_git.store import writes as store
from oxide_git.store.reindex import reindex
from tests.conftest import NOW_MS, make_ctx

# The definition the column replaced, as one query over parts and texts: kept here as the oracle.
_JOINED = ("SELECT count(DISTINCT p.seq) FROM parts p JOIN messages m ON m.session_id = p.session_id "
           "AND m.seq = p.seq WHERE p.session_id=? AND p.type != 'other' "
           "AND (p.type != 'text' OR trim(m.text, ' ' || char(9, 10, 13)) != '')")


def _messages() -> list[Message]:
    return [
        Message("user", (Part.text("fix the parser"),)),  # real
        Message("user", (Part.text(" \t\r\n"),)),  # only blanks: not counted
        Message("system", (Part.other("progress", {"type": "progress"}),)),  # a record kept whole
        Message("assistant", (Part.reasoning("thinking"), Part.tool_call("c1", "Bash", {"command": "ls"}))),
        Message("user", (Part.tool_result("c1", "a.py"),)),  # real
        Message("assistant", (Part.text(""), Part.other("hook", {}))),  # empty text and a record: not counted
        Message("assistant", (Part.other("x", {}), Part.text("done"))),  # a record and text: counted
        Message("user", ()),  # no parts at all
    ]


def test_the_count_is_what_the_joined_definition_gives_and_survives_fork_and_reindex(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = Session("0" * 12 + "c" * 20, "claude", native_id="counts", cwd=str(repo), worktree="main")
    store.append(ctx, s, _messages())
    want = ctx.index.query(_JOINED, (s.id,))[0][0]
    assert want == 4
    assert ctx.index.real_message_counts([s.id]) == {s.id: 4}
    forked = fork(make_ctx(repo, NOW_MS + 10), s.id, at="5")  # the first five messages: 3 of them real
    ctx = make_ctx(repo, NOW_MS + 20)
    assert ctx.index.real_message_counts([forked.id]) == {forked.id: 3}
    assert ctx.index.query(_JOINED, (forked.id,))[0][0] == 3
    reindex(ctx, full=True)
    ctx = make_ctx(repo, NOW_MS + 30)
    assert ctx.index.real_message_counts() == {s.id: 4, forked.id: 3}
