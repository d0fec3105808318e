from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from oxide_git.core import codec
from oxide_git.core.errors import Ambiguous, NotFound
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import logread, logwrite, sessionlog
from oxide_git.store import writes as store
from oxide_git.store.search_query import search
from tests.conftest import fsck_clean, git, make_ctx, oxide


def _msg(i: int, role: str = "user") -> Message:
    return Message(role, (Part.text(f"message {i}"),), created_at=1_767_225_600_000 + i)


def _session(sid: str = "0" * 12 + "a" * 20, **kw: object) -> Session:
    return Session(id=sid, agent="claude", native_id="native-" + sid[-4:], title="demo", **kw)  # type: ignore[arg-type]


def _count_objects(root: Path) -> int:
    out = git(root, "count-objects", "-v")
    fields = dict(line.split(": ") for line in out.splitlines())
    return int(fields["count"]) + int(fields["in-pack"])


def test_append_and_read_back(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    store.append(ctx, s, [_msg(i) for i in range(300)])
    store.append(ctx, s, [_msg(300, "assistant")])
    log = sessionlog.load(ctx.repo, s.id)
    assert log is not None and log.count == 301
    msgs = list(sessionlog.iter_messages(ctx.repo, log.commit.tree))
    assert [q for q, _ in msgs] == list(range(301))
    assert msgs[300][1].role == "assistant" and msgs[5][1].text() == "message 5"
    ids = [m.id for _, m in msgs]
    assert len(set(ids)) == 301 and ids == sorted(ids)  # unique and time-ascending
    assert git(repo, "ls-tree", "--name-only", f"refs/oxide/sessions/{s.id}:messages").split() == ["000000", "000001"]
    fsck_clean(repo)


def test_append_writes_constant_objects(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    batch = [_msg(i) for i in range(5000)]
    store.append(ctx, s, batch)
    git(repo, "gc", "-q")
    before = _count_objects(repo)
    store.append(ctx, s, [_msg(5000)])
    after_one = _count_objects(repo)
    store.append(ctx, s, [_msg(5001)])
    after_two = _count_objects(repo)
    # blob + bucket tree + messages tree + session blob + root tree + commit
    assert after_one - before <= 6
    assert after_two - after_one == after_one - before


def test_a_source_read_whole_again_writes_only_what_changed(repo: Path) -> None:
    """An OpenCode database is parsed whole on every change and every message placed again: the
    write stores only the messages that differ (each import used to write a pack of them all)."""
    ctx = make_ctx(repo)
    s = _session()
    msgs = {i: _msg(i) for i in range(500)}
    store.save(ctx, s, msgs, summary="import")
    git(repo, "gc", "-q")
    before = _count_objects(repo)
    msgs[499] = _msg(499, "assistant")  # the last answer grew as it streamed
    msgs[500] = _msg(500)
    store.save(ctx, s, msgs, summary="import again")
    # two blobs, bucket 000001, messages tree, session blob, root tree, commit
    assert _count_objects(repo) - before <= 7
    log = sessionlog.load(ctx.repo, s.id)
    assert log is not None and log.count == 501
    assert [m.role for _q, m in sessionlog.iter_messages(ctx.repo, log.commit.tree, 499)] == ["assistant", "user"]
    fsck_clean(repo)


def test_concurrent_appends_lose_nothing(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    store.append(ctx, s, [_msg(0)])
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from tests.conftest import make_ctx\n"
        "from oxide_git.store import writes as store\n"
        "from oxide_git.core.model import Message, Part, Session\n"
        "from pathlib import Path\n"
        "w = int(sys.argv[1])\n"
        "ctx = make_ctx(Path(%r))\n"
        "s = Session(id=%r, agent='claude', native_id='n', title='demo')\n"
        "for i in range(25):\n"
        "    store.append(ctx, s, [Message('user', (Part.text(f'w{w}-{i}'),))])\n"
    ) % (str(Path(__file__).parents[2]), str(repo), s.id)
    procs = [subprocess.Popen(["python3" if False else os.sys.executable, "-c", code, str(w)]) for w in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    log = sessionlog.load(ctx.repo, s.id)
    texts = [m.text() for _, m in sessionlog.iter_messages(ctx.repo, log.commit.tree)]
    assert len(texts) == 101
    for w in range(4):
        mine = [t for t in texts if t.startswith(f"w{w}-")]
        assert mine == [f"w{w}-{i}" for i in range(25)]  # each writer's order kept, none lost or doubled
    fsck_clean(repo)


def test_reindex_rebuilds_identical_output(repo: Path) -> None:
    ctx = make_ctx(repo)
    store.append(ctx, _session(), [_msg(i) for i in range(10)])
    store.append(ctx, _session("1" * 12 + "b" * 20), [_msg(i) for i in range(3)])
    (repo / "README.md").write_text("x")
    oxide(repo, "checkpoint", "-m", "one")
    outputs = [oxide(repo, *cmd).stdout for cmd in (
        ["list", "--json", "--all"], ["show", "native-aaaa", "--json"], ["checkpoints", "--json"])]
    db = ctx.repo.oxide_dir / "index.db"
    ctx.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    again = [oxide(repo, *cmd).stdout for cmd in (
        ["list", "--json", "--all"], ["show", "native-aaaa", "--json"], ["checkpoints", "--json"])]
    assert again == outputs
    assert len(json.loads(outputs[0])) == 2
    shown = json.loads(outputs[1])
    assert shown["session"]["message_count"] == 10
    assert shown["messages"][3]["parts"] == [{"type": "text", "text": "message 3"}]


def test_incremental_reindex_sees_appends_and_truncation(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    store.append(ctx, s, [_msg(i) for i in range(600)])
    # another process appends behind the index's back (e.g. a fetch): only git changes
    objects, common = ctx.repo.objects, ctx.repo.common_dir
    log = logread.tip(objects, common, s.id)
    logwrite.commit(objects, common, s, {600: codec.encode_message(_msg(600))}, now_ms=1, summary="x", base=log, expected=log.commit)
    from oxide_git.store.reindex import reindex

    res = reindex(ctx)
    assert res.sessions_updated == 1 and res.messages_indexed == 601 - 512
    assert ctx.index.query("SELECT count(*) FROM messages")[0][0] == 601
    log = logread.tip(objects, common, s.id)
    logwrite.commit(objects, common, s, {}, now_ms=2, summary="cut", base=log, expected=log.commit,
                    truncate_at=100)
    reindex(ctx)
    assert ctx.index.query("SELECT count(*) FROM messages")[0][0] == 100
    assert sessionlog.load(ctx.repo, s.id).count == 100


def test_resolve_prefixes(repo: Path) -> None:
    ctx = make_ctx(repo)
    store.append(ctx, _session("0" * 12 + "a" * 20), [_msg(0)])
    store.append(ctx, _session("0" * 12 + "a" * 19 + "b"), [_msg(0)])
    with pytest.raises(Ambiguous):
        ctx.index.resolve_session("000000")
    assert ctx.index.resolve_session("0" * 12 + "a" * 20) == "0" * 12 + "a" * 20
    assert ctx.index.resolve_session("native-aaab") == "0" * 12 + "a" * 19 + "b"
    with pytest.raises(NotFound):
        ctx.index.resolve_session("zzz")


def test_unknown_fields_survive(repo: Path) -> None:
    from oxide_git.core import codec

    data = codec.encode_message(_msg(1))
    import msgpack

    obj = msgpack.unpackb(data)
    obj["future_field"] = {"x": 1}
    m = codec.decode_message(msgpack.packb(obj))
    assert m.unknown == {"future_field": {"x": 1}}
    assert msgpack.unpackb(codec.encode_message(m))["future_field"] == {"x": 1}


def test_future_schema_is_refused() -> None:
    import msgpack

    from oxide_git.core import codec
    from oxide_git.core.errors import UnsupportedPayload

    with pytest.raises(UnsupportedPayload):
        codec.decode_message(msgpack.packb({"v": 99, "role": "user", "parts": []}))
    with pytest.raises(UnsupportedPayload):
        codec.decode_message(b"\xc1garbage")


def test_search_finds_words_and_follows_replacements(repo: Path) -> None:
    ctx = make_ctx(repo)
    s = _session()
    store.append(ctx, s, [Message("user", (Part.text("refactor the parser"),)), _msg(1)])
    hits = search(ctx.index, "parser")
    assert [(h["session_id"], h["seq"]) for h in hits] == [(s.id, 0)]
    assert "[parser]" in hits[0]["snippet"]
    store.save(ctx, s, {0: Message("user", (Part.text("rename the lexer"),))}, summary="replace")
    assert search(ctx.index, "parser") == []
    assert len(search(ctx.index, "lexer")) == 1
    store.save(ctx, s, {}, summary="cut", truncate_at=0)
    assert search(ctx.index, "lexer") == []


def test_list_json_from_sqlite_matches_the_python_rows(repo: Path) -> None:
    from oxide_git.ops.browse import list_sessions, list_sessions_json

    ctx = make_ctx(repo)
    store.append(ctx, _session(created_at=1_767_225_600_123, updated_at=1_767_225_601_999,
                               worktree="main", branch="main", redactions={"openai": 2}),
                 [_msg(0)])
    store.append(ctx, Session(id="1" * 12 + "b" * 20, agent="codex", title="ünïcode ✓"), [_msg(1)])
    py = list_sessions(ctx, all_worktrees=True)
    sql = json.loads(list_sessions_json(ctx, all_worktrees=True))
    assert sql == py
    assert py[0]["created_at"] == "2026-01-01T00:00:00.123Z"


def test_a_reindex_of_some_sessions_reads_only_those(repo: Path) -> None:
    """What a pull moved is reindexed, the store's other rows left as they are: a ref deleted
    outside git oxide is seen by a reindex of that session (or a whole one), not of another."""
    from oxide_git.store.reindex import reindex

    ctx = make_ctx(repo)
    a, b = _session(), _session("1" * 12 + "b" * 20)
    store.append(ctx, a, [_msg(0)])
    store.append(ctx, b, [_msg(1)])
    git(repo, "update-ref", "-d", f"refs/oxide/sessions/{a.id}")
    res = reindex(ctx, sessions={b.id}, checkpoints=False)
    assert (res.sessions_updated, res.sessions_removed) == (0, 0)
    assert {r["id"] for r in ctx.index.session_rows()} == {a.id, b.id}
    res = reindex(ctx, sessions={a.id}, checkpoints=False)
    assert res.sessions_removed == 1
    assert {r["id"] for r in ctx.index.session_rows()} == {b.id}


def test_a_dry_runs_scratch_view_reads_its_own_objects_and_writes_none_to_the_store(repo: Path) -> None:
    import pygit2

    from oxide_git.core.errors import OxideError
    from oxide_git.store import snapshots

    ctx = make_ctx(repo)
    s = _session()
    store.append(ctx, s, [_msg(i) for i in range(3)])
    tip = sessionlog.load(ctx.repo, s.id)
    assert tip is not None
    before = _count_objects(repo)
    with snapshots.scratch(ctx.repo) as view:
        objects = view.objects  # the scratch store: written here, the real one read by alternates
        tree = logwrite.build_tree(objects, tip.as_base().tree, s, {3: codec.encode_message(_msg(3))})
        oid = pygit2.Oid(raw=objects.write_commit(tree, [tip.tip.raw], "scratch\n", logwrite.signature_at(1)))
        log = sessionlog.load_commit(view, oid)
        at = sessionlog.message_at(view, log.commit.tree, 3)
        assert log.count == 4 and at is not None and at.text() == "message 3"
        assert [q for q, _m in sessionlog.iter_messages(view, log.commit.tree)] == [0, 1, 2, 3]
        assert sessionlog.load_required(view, s.id).count == 3  # the ref is the real one's
        with pytest.raises(OxideError):  # the real store never got the scratch commit
            sessionlog.load_commit(ctx.repo, oid)
    assert _count_objects(repo) == before
