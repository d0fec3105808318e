"""The search index (``search_index``: tantivy, kept in step with the rows by ``search_log``):
every write seen by the next search, nothing found twice when the log is applied again, a
broken or foreign folder built anew, a new index.db never answered from the old one, two
processes catching up at once, filters that reject the best hits, and the snippets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oxide_git.core.model import Message, Part, Session
from oxide_git.store import search_index
from oxide_git.store import writes as store
from oxide_git.store.search_query import query_terms, search, snippet
from tests.conftest import make_ctx, oxide, wait_for
from tests.journeys.test_first_hour_safety import _as_unprivileged


def _msg(text: str, role: str = "user") -> Message:
    return Message(role, (Part.text(text),))


def _session(n: int, agent: str = "claude") -> Session:
    return Session(id=f"{n:012x}" + "c" * 20, agent=agent, worktree="main")


def _found(ctx, query: str, **kw):  # type: ignore[no-untyped-def]
    """(session number, seq) of each hit."""
    return sorted((int(h["session_id"][:12], 16), h["seq"]) for h in search(ctx.index, query, 1000, **kw))


def _folder(repo: Path) -> Path:
    return repo / ".git" / "oxide" / "search"


def test_every_write_is_seen_by_the_next_search(repo: Path) -> None:
    ctx = make_ctx(repo)
    a, b = _session(1), _session(2)
    store.append(ctx, a, [_msg("flaky retry loop"), _msg("the retry gives up", "assistant")])
    assert _found(ctx, "retry") == [(1, 0), (1, 1)]
    store.append(ctx, b, [_msg("a flaky test")])  # after the index was built: applied from the log
    assert _found(ctx, "flaky") == [(1, 0), (2, 0)]
    store.save(ctx, a, {0: _msg("rename the lexer")}, summary="replace")
    assert _found(ctx, "flaky") == [(2, 0)]
    assert _found(ctx, "lexer") == [(1, 0)]
    with ctx.index.write() as conn:
        ctx.index.delete_session(conn, b.id)
    assert _found(ctx, "flaky") == []
    left = ctx.index.query("SELECT count(*) FROM search_log")[0][0]
    assert left == 0  # applied and pruned


def test_no_hit_is_said_on_stderr_by_both_forms(repo: Path) -> None:
    """No hits: nothing on stdout (no lone header), a line on stderr, success; ``--json`` an empty
    list. The plain form and the click command (``--`` sends it there) print the same."""
    store.append(make_ctx(repo), _session(1), [_msg("flaky retry loop")])
    for args in (["search", "lexer"], ["search", "--", "lexer"]):
        r = oxide(repo, *args)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", "no message matches 'lexer'\n")
    assert json.loads(oxide(repo, "search", "lexer", "--json").stdout) == []
    assert oxide(repo, "search", "--", "flaky").stdout.startswith("SESSION")


def test_the_log_applied_again_finds_nothing_twice(repo: Path) -> None:
    """A crash between tantivy's commit and the note of how far it got: the note is older than the
    index, so the log is applied again; every entry is a delete and an add of the row as it is."""
    ctx = make_ctx(repo)
    store.append(ctx, _session(1), [_msg("parser one"), _msg("parser two")])
    assert len(search(ctx.index, "parser")) == 2
    applied = _folder(repo) / "applied"
    note = applied.read_text()
    store.append(ctx, _session(2), [_msg("parser three")])
    assert len(search(ctx.index, "parser")) == 3
    applied.write_text(note)  # the note of the last catch-up lost: back to the one before
    ctx.index.db.execute("INSERT INTO search_log(rid) SELECT rowid FROM messages")  # and its log kept
    assert len(search(ctx.index, "parser")) == 3
    assert len(search(ctx.index, "three")) == 1


@pytest.mark.parametrize("damage", ["garbage", "garbage, its note kept", "foreign note", "note cut short",
                                    "folder gone"])
def test_a_broken_or_foreign_search_folder_is_built_anew(repo: Path, damage: str) -> None:
    ctx = make_ctx(repo)
    store.append(ctx, _session(1), [_msg("parser one"), _msg("lexer two")])
    assert len(search(ctx.index, "parser")) == 1
    folder = _folder(repo)
    search_index._open.clear()
    if damage.startswith("garbage"):
        for f in folder.iterdir():
            if f.name != "applied":  # a new file in its place: the old one may be mapped in memory here
                f.with_name(f.name + ".tmp").write_bytes(b"\0garbage")
                f.with_name(f.name + ".tmp").replace(f)
        if damage == "garbage":
            (folder / "applied").unlink()
    elif damage == "foreign note":
        (folder / "applied").write_text("oxide-search-0 x 1\n")
    elif damage == "note cut short":
        (folder / "applied").write_text("oxide-sea")
    else:
        import shutil

        shutil.rmtree(folder)
    assert len(search(ctx.index, "parser")) == 1
    assert len(search(ctx.index, "lexer")) == 1


def test_a_new_index_is_never_answered_from_the_old_search_index(repo: Path) -> None:
    ctx = make_ctx(repo)
    store.append(ctx, _session(1), [_msg("parser one")])
    assert len(search(ctx.index, "parser")) == 1
    ctx.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{repo / '.git' / 'oxide' / 'index.db'}{suffix}").unlink(missing_ok=True)
    ctx = make_ctx(repo)  # rebuilt from git with a new epoch: its rowids mean other messages
    store.append(ctx, _session(2), [_msg("lexer two")])
    assert _found(ctx, "parser") == [(1, 0)] and _found(ctx, "lexer") == [(2, 0)]
    assert json.loads(oxide(repo, "search", "lexer", "--json").stdout)[0]["snippet"] == "[lexer] two"


@pytest.mark.process
def test_two_processes_catching_up_at_once_agree(repo: Path) -> None:
    ctx = make_ctx(repo)
    store.append(ctx, _session(1), [_msg(f"word{i % 7} common text {i}") for i in range(300)])
    ctx.close()
    cmd = [sys.executable, "-m", "oxide_git", "search", "common", "--json", "-n", "1000"]
    procs = [subprocess.Popen(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [o[1] for o in outs]
    assert [len(json.loads(o[0])) for o in outs] == [300, 300, 300]


def test_filters_that_reject_the_best_hits_still_fill_the_page(repo: Path) -> None:
    ctx = make_ctx(repo)
    # 300 short (best-ranked) claude hits, then the few long codex ones the filter keeps
    store.append(ctx, _session(1), [_msg("parser") for _ in range(300)])
    store.append(ctx, _session(2, "codex"), [_msg("the parser " + "filler " * 40) for _ in range(3)])
    hits = search(ctx.index, "parser", 2, agent="codex")
    assert len(hits) == 2 and {h["session_id"] for h in hits} == {_session(2).id}
    assert len(search(ctx.index, "parser", 50, offset=2, agent="codex")) == 1
    assert len(search(ctx.index, "parser", 1000)) == 303


def test_a_search_folder_it_cannot_write_is_searched_in_memory(repo: Path) -> None:
    prefix = _as_unprivileged()
    ctx = make_ctx(repo)
    store.append(ctx, _session(1), [_msg("parser one")])
    ctx.close()
    folder = _folder(repo)
    folder.mkdir()
    folder.chmod(0o555)
    lock = repo / ".git" / "oxide" / "search.lock"
    lock.touch()
    lock.chmod(0o444)
    try:
        env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
        r = subprocess.run([*prefix, "git", "oxide", "search", "parser", "--json"], cwd=repo, env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert [h["snippet"] for h in json.loads(r.stdout)] == ["[parser] one"]
    finally:
        folder.chmod(0o755)
        lock.chmod(0o644)


def test_query_words_are_the_index_tokens() -> None:
    assert query_terms("Flaky  RETRY") == [["flaky"], ["retry"]]
    assert query_terms("foo.bar --") == [["foo", "bar"]]  # a phrase; punctuation alone is no word
    assert query_terms("Café") == [["cafe"]]
    assert query_terms("") == []


def test_an_empty_or_punctuation_query_finds_nothing(repo: Path) -> None:
    ctx = make_ctx(repo)
    store.append(ctx, _session(1), [_msg("foo.bar and foo baz bar")])
    assert search(ctx.index, "") == [] and search(ctx.index, "--") == []
    assert [h["snippet"] for h in search(ctx.index, "foo.bar")] == ["[foo].[bar] and [foo] baz [bar]"]
    assert search(ctx.index, "bar.foo") == []  # a phrase: in that order only
    assert len(search(ctx.index, "café")) == 0
    store.append(ctx, _session(2), [_msg("un café crème")])
    assert [h["snippet"] for h in search(ctx.index, "cafe creme")] == ["un [café] [crème]"]


def test_snippets_show_the_words_around_the_best_window() -> None:
    terms = [["parser"], ["fails"]]
    assert snippet("the parser fails", terms) == "the [parser] [fails]"
    long = " ".join(f"w{i}" for i in range(40))
    text = long + " the parser fails here " + long
    assert snippet(text, terms) == "…w39 the [parser] [fails] here w0 w1 w2 w3 w4 w5 w6…"
    assert snippet("  parser at the start, then " + long, terms) == "  [parser] at the start, then w0 w1 w2 w3 w4 w5 w6…"
    assert snippet("", terms) == "" and snippet("!!", terms) == "!!"


def test_a_long_text_is_cut_around_its_first_hit() -> None:
    text = "x " * 5000 + "the parser fails" + " y" * 5000
    got = snippet(text, [["parser"], ["fails"]])
    assert got == "…x the [parser] [fails] y y y y y y y y…"
    assert snippet("parser " + "z " * 3000, [["parser"]]).startswith("[parser] z z")


def test_the_watch_daemon_catches_up_in_children(repo: Path) -> None:
    """The daemon lives for days, and tantivy's writer leaves ~50 MB in glibc's arenas each time
    it works: the daemon's imports are indexed by children (it never maps tantivy itself), and a
    search over its socket then finds them."""
    from tests.hooks.test_hooks import SID_NATIVE, claude_line
    from tests.watch.test_watch_socket import served, start

    oxide(repo, "init")
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "p"
    projects.mkdir(parents=True)
    pid = start(repo)
    try:
        (projects / f"{SID_NATIVE.format(7)}.jsonl").write_text(claude_line(repo, 7, "a zanzibar prompt"))
        ctx = make_ctx(repo)
        wait_for(lambda: ctx.index.query("SELECT count(*) FROM messages")[0][0] == 1)
        wait_for(lambda: search_index.pending(ctx.index.db, ctx.index.path) == 0)
        assert "tantivy" not in Path(f"/proc/{pid}/maps").read_text()
        # the child that did it was reaped (no zombie left beside a daemon that runs for days)
        wait_for(lambda: not Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
        with (projects / f"{SID_NATIVE.format(7)}.jsonl").open("a") as f:
            f.write(claude_line(repo, 7, "a second zanzibar prompt"))
        wait_for(lambda: ctx.index.query("SELECT count(*) FROM messages")[0][0] == 2)
        hits = json.loads(served(repo, "search", "zanzibar", "--json").stdout)
        assert len(hits) == 2
    finally:
        oxide(repo, "watch", "--stop")
    log = ctx.repo.oxide_dir / "log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")


def test_a_child_that_cannot_catch_up_says_why_in_the_log(repo: Path) -> None:
    oxide_dir = make_ctx(repo).repo.oxide_dir
    oxide_dir.mkdir(parents=True, exist_ok=True)
    bad = oxide_dir / "not-an-index.db"
    bad.write_bytes(b"not SQLite at all" * 100)
    assert search_index.catch_up_in_child(bad).wait(timeout=60) == 1
    assert "search: catching up failed" in (oxide_dir / "log").read_text()
