"""A hostile remote: what a teammate's push (or anyone with write access) can put in a shared bare
repository, met by the real `git oxide` in a real clone. Each case is refused or handled with a
`warning:` naming the remote and the ref, nothing already in the store changes, and every command
stays under 100 MB of resident memory whatever the remote holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oxide_git.core import codec
from oxide_git.core.model import Message, Part, Session
from oxide_git.store import writes as store

from ..conftest import fsck_clean, git, make_ctx, new_repo, oxide
from . import report
from .remote_kit import (
    MB,
    Run,
    commit,
    literally,
    measured,
    mktree,
    set_ref,
    store_state,
    with_entry,
    write_zero_blob,
)

pytestmark = pytest.mark.slow
SID = "019c18a520e8" + "a" * 20
PEAK_MB = 100
FIGURES: list[tuple[str, str, Run]] = []


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A's clone has pushed a session that B has pulled; the shared bare remote between them."""
    a = new_repo(tmp_path / "a")
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(a, "remote", "add", "origin", str(bare))
    git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    for r in (a, b):
        oxide(r, "init")
    ctx = make_ctx(a)
    store.append(ctx, Session(SID, "claude", title="shared work"),
                 [Message("user", (Part.text(t),), created_at=1) for t in ("hello", "world")])
    oxide(a, "push")
    oxide(b, "pull")
    return a, b, bare


def _log_tip(bare: Path, sid: str = SID) -> tuple[str, str]:
    tip = git(bare, "rev-parse", f"refs/oxide/sessions/{sid}").strip()
    return tip, git(bare, "rev-parse", f"{tip}^{{tree}}").strip()


def _append_raw(bare: Path, blob: str, seq: int = 2, sid: str = SID) -> str:
    """The remote's session log with one more message entry, ``blob``, as a push would leave it."""
    tip, tree = _log_tip(bare, sid)
    tree = with_entry(bare, tree, ["messages", f"{seq // 256:06d}", f"{seq:08d}.msgpack"], "100644",
                      "blob", blob)
    new = commit(bare, tree, [tip], f"append 1 message(s)\n\nOxide-Session: {sid}\n")
    set_ref(bare, f"refs/oxide/sessions/{sid}", new)
    return new


def _meet(b: Path, name: str, *cmds: tuple[str, ...]) -> dict[str, Run]:
    """Run each command in B, keep its figures, and check it stayed bounded and clean."""
    runs = {}
    for cmd in cmds:
        r = measured(b, *cmd)
        FIGURES.append((name, " ".join(cmd), r))
        print(f"{name:<28} {' '.join(cmd):<22} exit {r.returncode}  {r.seconds:6.2f} s  {r.peak_mb:6.1f} MB"
              f"  {r.out.strip().splitlines()[-3:]}")
        assert "Traceback" not in r.out, r.out
        assert r.returncode in (0, 1), r.out
        assert r.peak_mb <= PEAK_MB, f"{name}: git oxide {' '.join(cmd)} peaked at {r.peak_mb:.0f} MB"
        runs[cmd[0]] = runs[" ".join(cmd)] = r
    return runs


READERS = (("reindex", "--full"), ("list", "--all", "--json"), ("show", SID[:14]),
           ("export", SID[:14], "--format", "markdown"))


def _unchanged(b: Path, before: dict[str, str]) -> None:
    after = store_state(b)
    for k in before:
        assert after[k] == before[k], f"{k} changed"


def test_a_gigabyte_message_is_refused_unread(team: tuple[Path, Path, Path]) -> None:
    """A session's new message is 1 GiB of zeros (1 MB on the wire): refused from its header."""
    a, b, bare = team
    honest = _honest_session(a)  # before the remote is made hostile: a push meets it too
    blob = write_zero_blob(bare / "objects", 1024 * MB)
    _append_raw(bare, blob)
    before = store_state(b)
    report.add("hostile_tried")
    pull = _meet(b, "1 GiB message", ("pull",))["pull"]
    assert f"warning: origin refs/oxide/sessions/{SID}: blob messages/000000/00000002.msgpack is 1 GiB, " \
           "over the 8 MiB" in pull.stderr, pull.stderr
    _only_honest_came(b, before, honest)
    _meet(b, "1 GiB message", *READERS)
    report.add("hostile_refused")
    # the limit is the user's to raise, but a log this build cannot read is still not taken
    git(b, "config", "oxide.maxRemoteObjectSize", "2g")
    before = store_state(b)
    pull = _meet(b, "1 GiB message, limit 2g", ("pull",))["pull"]
    assert f"warning: origin refs/oxide/sessions/{SID}: session log entry " in pull.stderr
    assert "larger than the 268435456 git oxide reads, left alone" in pull.stderr, pull.stderr
    _unchanged(b, before)
    # a store that took it anyway (an older git oxide): every reader refuses it from its header
    set_ref(b, f"refs/oxide/sessions/{SID}", git(b, "rev-parse", f"refs/oxide/remotes/origin/sessions/{SID}").strip())
    runs = _meet(b, "1 GiB message taken", *READERS)
    assert "larger than the 268435456 git oxide reads" in runs["reindex"].stderr
    assert runs["show"].returncode == 1 and "error:" in runs["show"].stderr  # (not indexed: reindex said why)
    fsck_clean(b)


def _honest_session(a: Path) -> str:
    """A teammate's honest session pushed alongside the hostile ref: the same pull must bring it."""
    sid = "019c18a520e8" + "d" * 20
    store.append(make_ctx(a), Session(sid, "claude", title="honest"),
                 [Message("user", (Part.text("honest work"),), created_at=2)])
    r = oxide(a, "push", "--json", check=False)  # rejected: the session the remote rewrote
    assert json.loads(r.stdout)["updated"][f"refs/oxide/sessions/{sid}"] == "new", r.stdout + r.stderr
    return sid


def _only_honest_came(b: Path, before: dict[str, str], honest: str) -> None:
    """The honest session arrived; every other ref and index row is as it was."""
    after = store_state(b)
    new_refs = set(after["refs"].splitlines()) - set(before["refs"].splitlines())
    gone = set(before["refs"].splitlines()) - set(after["refs"].splitlines())
    assert not gone, f"refs changed: {gone}"
    assert {r.split()[0] for r in new_refs} <= {f"refs/oxide/sessions/{honest}", "refs/notes/oxide"}, new_refs
    assert f"refs/oxide/sessions/{honest}" in {r.split()[0] for r in new_refs}
    listed = json.loads(oxide(b, "list", "--all", "--json").stdout)
    assert {r["id"] for r in listed} == {SID, honest}
    assert [r["message_count"] for r in listed if r["id"] == SID] == [2]





def _raw_ref(bare: Path, name: str, oid: str) -> None:
    """A ref written as a file, as a remote could hold it whatever git's checks say."""
    p = bare / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(oid + "\n")


def _raw_tree(entries: list[tuple[bytes, bytes, bytes]]) -> bytes:
    return b"".join(m + b" " + n + b"\0" + o for m, n, o in entries)


def _write_obj(bare: Path, kind: str, data: bytes) -> str:
    import pygit2

    g = pygit2.Repository(str(bare))
    t = {"blob": pygit2.enums.ObjectType.BLOB, "tree": pygit2.enums.ObjectType.TREE}[kind]
    return str(g.odb.write(t, data))


def _million_log(bare: Path, sid: str, n: int, blob: str) -> str:
    """A session log of ``n`` messages, every one the blob ``blob`` (so it is cheap to build)."""
    raw = bytes.fromhex(blob)
    buckets = []
    for b in range((n + 255) // 256):
        entries = [(b"100644", f"{q:08d}.msgpack".encode(), raw) for q in range(b * 256, min(n, b * 256 + 256))]
        buckets.append((b"40000", f"{b:06d}".encode(), bytes.fromhex(_write_obj(bare, "tree", _raw_tree(entries)))))
    msgs = _write_obj(bare, "tree", _raw_tree(buckets))
    session = literally(bare, "blob", codec.encode_session(Session(sid, "claude", title="many")))
    root = mktree(bare, [("040000", "tree", msgs, "messages"), ("100644", "blob", session, "session.msgpack")])
    c = commit(bare, root, [], f"import\n\nOxide-Session: {sid}\n")
    set_ref(bare, f"refs/oxide/sessions/{sid}", c)
    return c


def test_a_million_one_byte_messages(team: tuple[Path, Path, Path]) -> None:
    """A log of a million messages whose blobs are one byte (not a payload): refused at the first
    that does not decode. The same log of a million valid one-letter messages is taken, and every
    command on it stays under 100 MB."""
    from .conftest import trials

    a, b, bare = team
    honest = _honest_session(a)  # before the remote is made hostile: a push meets it too
    n = trials(1_000_000, 20_000)
    bad_sid, good_sid = "019c18a520e8" + "e" * 20, "019c18a520e8" + "f" * 20
    _million_log(bare, bad_sid, n, literally(bare, "blob", b"\x80"))
    before = store_state(b)
    report.add("hostile_tried")
    pull = _meet(b, f"{n} one-byte blobs", ("pull",))["pull"]
    assert f"warning: origin refs/oxide/sessions/{bad_sid}: message 0: " in pull.stderr, pull.stderr
    _only_honest_came(b, before, honest)
    report.add("hostile_refused")
    one = literally(bare, "blob", codec.encode_message(Message("user", (Part.text("x"),), created_at=3)))
    _million_log(bare, good_sid, n, one)
    report.add("hostile_tried")
    runs = _meet(b, f"{n} one-letter messages", ("pull",), ("reindex", "--full"),
                 ("list", "--all", "--json"), ("show", good_sid[:14]), ("export", good_sid[:14]))
    listed = {r["id"]: r for r in json.loads(oxide(b, "list", "--all", "--json").stdout)}
    assert listed[good_sid]["message_count"] == n
    assert runs["show"].stdout.count("\n  x\n") == n  # every message shown, one at a time
    assert runs["export"].stdout.count("\n\nx\n") == n
    report.add("hostile_refused")


def _deep_tree(bare: Path, depth: int) -> str:
    tree = mktree(bare, [("100644", "blob", literally(bare, "blob", b"bottom\n"), "f")])
    raw = bytes.fromhex(tree)
    for _ in range(depth):
        raw = bytes.fromhex(_write_obj(bare, "tree", _raw_tree([(b"40000", b"d", raw)])))
    return raw.hex()


def test_trees_nested_thousands_deep(team: tuple[Path, Path, Path]) -> None:
    """5,000 folders in folders, in a session log, in the notes and in a checkpoint."""
    a, b, bare = team
    honest = _honest_session(a)  # before the remote is made hostile: a push meets it too
    deep = _deep_tree(bare, 5000)
    tip, tree = _log_tip(bare)
    log = commit(bare, with_entry(bare, tree, ["deep"], "040000", "tree", deep), [tip],
                 f"append\n\nOxide-Session: {SID}\n")
    set_ref(bare, f"refs/oxide/sessions/{SID}", log)
    head = git(bare, "rev-parse", "main").strip()
    notes = commit(bare, mktree(bare, [("040000", "tree", deep, head[:2])]), [], "notes\n")
    set_ref(bare, "refs/notes/oxide", notes)
    cp_tree = with_entry(bare, git(bare, "rev-parse", "main^{tree}").strip(), ["deep"], "040000", "tree", deep)
    cp = commit(bare, cp_tree, [head], "oxide: checkpoint\n\nOxide-Kind: manual\n")
    set_ref(bare, f"refs/oxide/checkpoints/manual/{cp}", cp)
    before = store_state(b)
    report.add("hostile_tried", 3)
    pull = _meet(b, "trees 5000 deep", ("pull", "--checkpoints"))["pull"]
    for ref in (f"refs/oxide/sessions/{SID}", "refs/notes/oxide", f"refs/oxide/checkpoints/manual/{cp}"):
        assert f"warning: origin {ref}: its trees are nested more than 256 deep" in pull.stderr, pull.stderr
    _only_honest_came(b, before, honest)
    _meet(b, "trees 5000 deep", *READERS)
    report.add("hostile_refused", 3)
    # a store that took them anyway (an older git oxide): readers and rewind refuse, never crash
    set_ref(b, "refs/notes/oxide", notes)
    set_ref(b, f"refs/oxide/checkpoints/manual/{cp}", cp)
    _meet(b, "trees 5000 deep taken", ("reindex",), ("doctor",))
    r = _meet(b, "trees 5000 deep taken", ("rewind", cp, "--code", "--yes", "--force"))["rewind"]
    assert r.returncode == 1 and "error: refusing a tree nested more than 256 folders deep" in r.stderr, r.stderr
    assert not (b / "deep").exists()


def test_ref_names_and_targets_that_are_not_ours(team: tuple[Path, Path, Path]) -> None:
    a, b, bare = team
    honest = _honest_session(a)  # before the remote is made hostile: a push meets it too
    tip, _tree = _log_tip(bare)
    blob = literally(bare, "blob", b"not a commit\n")
    planted = {
        "refs/oxide/evil": (tip, "not a ref git oxide shares"),
        "refs/oxide/sessions/has.dot": (tip, "not a session id"),
        "refs/oxide/sessions/a/b": (tip, "not a session id"),
        f"refs/oxide/sessions/{'9' * 32}": (tip, f"its log names session {SID}"),
        f"refs/oxide/sessions/{'8' * 32}": (blob, "it points at a blob, not a commit"),
        "refs/oxide/checkpoints/manual/notahash": (tip, "not a checkpoint name"),
        f"refs/oxide/checkpoints/manual/{'0' * 40}": (tip, "not a checkpoint (its name is not the commit"),
        "refs/oxide/memory": (blob, "it points at a blob, not a commit"),
    }
    for name, (oid, _why) in planted.items():
        _raw_ref(bare, name, oid)
    before = store_state(b)
    report.add("hostile_tried", len(planted))
    pull = _meet(b, "names not ours", ("pull", "--checkpoints"))["pull"]
    for name, (_oid, why) in planted.items():
        line = next((ln for ln in pull.stderr.splitlines() if ln.startswith(f"warning: origin {name}:")), "")
        assert why in line, f"{name}: {pull.stderr}"
    _only_honest_came(b, before, honest)
    assert not git(b, "for-each-ref", "refs/oxide/evil", "refs/oxide/sessions/a").strip()
    report.add("hostile_refused", len(planted))


def test_commit_chains_with_impossible_parents(team: tuple[Path, Path, Path]) -> None:
    """Parents that are missing, a tree, or a loop made with `git replace` on the remote: the
    remote cannot send the first two (one bad ref no longer fails the whole pull) and the loop
    is not sent (upload-pack ignores replace refs); nothing here loops or changes."""
    a, b, bare = team
    honest = _honest_session(a)  # before the remote is made hostile: a push meets it too
    tip, tree = _log_tip(bare)
    cases = {}
    cases["missing parent"] = commit(bare, tree, ["1234567890" * 4], f"x\n\nOxide-Session: {SID}\n")
    cases["a tree as parent"] = commit(bare, tree, [tree], f"x\n\nOxide-Session: {SID}\n")
    sids = {}
    for i, (what, oid) in enumerate(cases.items()):
        sids[what] = f"019c18a520e8{i:04d}" + "c" * 16
        _raw_ref(bare, f"refs/oxide/sessions/{sids[what]}", oid)
    # a cycle: the session's commit replaced by one whose parent is itself
    loop = commit(bare, tree, [tip], f"loop\n\nOxide-Session: {SID}\n")
    git(bare, "replace", tip, loop)
    assert git(bare, "log", "-1", "--format=%H %P", tip).split() == [tip, tip]  # its own parent there
    before = store_state(b)
    report.add("hostile_tried", len(cases) + 1)
    pull = _meet(b, "impossible parents", ("pull",))["pull"]
    for what, sid in sids.items():
        line = next((ln for ln in pull.stderr.splitlines()
                     if ln.startswith(f"warning: origin refs/oxide/sessions/{sid}: cannot be fetched")), "")
        assert line, f"{what}: {pull.stderr}"
    _only_honest_came(b, before, honest)
    assert not git(b, "for-each-ref", "refs/replace/").strip()
    assert git(b, "log", "--format=%H %P", f"refs/oxide/sessions/{SID}").split() == [tip]
    _meet(b, "impossible parents", *READERS)
    report.add("hostile_refused", len(cases) + 1)
    fsck_clean(b)
