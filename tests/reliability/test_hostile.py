"""Hostile and broken input: fuzzed transcripts, untrusted trees and logs, awkward paths and disks."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import Problem, Resumable, registry
from oxide_git.core.errors import OxideError, UntrustedTree
from oxide_git.git import restore
from oxide_git.ops.rewind import rewind

from ..conftest import FIXTURES, fsck_clean, git, make_ctx
from . import report
from .conftest import assert_clean_exit, doctor_heals, run_oxide, trials
from .test_crash import _init

pytestmark = pytest.mark.slow
CORPUS = Path(__file__).with_name("corpus")
TREE, BLOB, LINK = (pygit2.enums.FileMode.TREE, pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.LINK)

# ---------------------------------------------------------------- importers under hypothesis

SEEDS = {
    "claude": sorted((FIXTURES / "claude").glob("*.jsonl")),
    "codex": sorted((FIXTURES / "codex").glob("*.json*")),
    "aider": sorted((FIXTURES / "aider").glob("*.md")),
    "opencode": sorted((FIXTURES / "opencode" / "export").glob("*.json")),
}
FILENAMES = {
    "claude": "50000000-0000-4000-8000-000000000005.jsonl",
    "codex": "rollout-2025-08-01T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl",
    "aider": ".aider.chat.history.md",
    "opencode": "session__fuzz__ses_48923d15fffeOT94hSKIr52KgW.json",
}
MAX_INPUT = 64 * 1024

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True)
    | st.text(max_size=40) | st.sampled_from(["user", "assistant", "system", "text", "tool_use",
                                              "tool_result", "message", "response_item", "", "0"]),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=12), kids, max_size=5),
    max_leaves=20)


def _mutate_json_line(line: bytes, data: st.DataObject) -> bytes:
    try:
        obj = json.loads(line)
    except ValueError:
        return line
    if isinstance(obj, dict) and obj:
        path_obj = obj
        for _ in range(data.draw(st.integers(0, 3))):  # descend a few levels
            kids = [k for k, v in path_obj.items() if isinstance(v, dict) and v]
            if not kids:
                break
            path_obj = path_obj[data.draw(st.sampled_from(kids))]
        key = data.draw(st.sampled_from(sorted(path_obj)))
        if data.draw(st.booleans()):
            path_obj[key] = data.draw(json_values)
        else:
            del path_obj[key]
    return json.dumps(obj).encode()


@st.composite
def fuzz_input(draw: st.DrawFn, agent: str) -> bytes:
    mode = draw(st.sampled_from(["binary", "bytes", "lines", "json"]))
    if mode == "binary":
        return draw(st.binary(max_size=2048))
    seed = draw(st.sampled_from(SEEDS[agent])).read_bytes()
    if mode == "bytes":
        buf = bytearray(seed)
        for _ in range(draw(st.integers(1, 8))):
            pos = draw(st.integers(0, len(buf)))
            op = draw(st.sampled_from(["insert", "delete", "flip", "truncate"]))
            if op == "insert":
                buf[pos:pos] = draw(st.binary(min_size=1, max_size=16))
            elif op == "delete":
                del buf[pos:pos + draw(st.integers(1, 64))]
            elif op == "flip" and pos < len(buf):
                buf[pos] ^= 1 << draw(st.integers(0, 7))
            else:
                del buf[pos:]
        return bytes(buf[:MAX_INPUT])
    lines = seed.split(b"\n")
    if mode == "lines":
        picks = draw(st.lists(st.integers(0, len(lines) - 1), max_size=40))
        return b"\n".join(lines[i] for i in picks)[:MAX_INPUT]
    data = draw(st.data())
    if len(lines) == 1 or agent == "opencode":  # one JSON document
        return _mutate_json_line(seed, data)[:MAX_INPUT]
    idx = draw(st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=6))
    for i in idx:
        lines[i] = _mutate_json_line(lines[i], data)
    return b"\n".join(lines)[:MAX_INPUT]


def _parse_all(agent: str, path: Path) -> int:
    """Every event of ``path``, then again from each resumable offset; only Problems or OxideError."""
    mod = registry()[agent]
    n = 0
    resumes: list[Resumable] = []
    try:
        for ev in mod.parse(path):
            n += 1
            if isinstance(ev, Resumable):
                resumes.append(ev)
            elif isinstance(ev, Problem):
                assert isinstance(ev.text, str)
        for r in resumes[-3:]:
            for _ev in mod.parse(path, offset=r.offset, state=r.state):
                n += 1
    except OxideError:
        pass
    return n


def _keep_finding(agent: str, data: bytes) -> Path:
    CORPUS.mkdir(exist_ok=True)
    p = CORPUS / f"{agent}-{hashlib.sha1(data).hexdigest()[:16]}.bin"
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("agent", ["claude", "codex", "aider", "opencode"])
def test_importers_under_fuzz(agent: str, tmp_path: Path) -> None:
    assert agent in registry() and SEEDS[agent]
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    path = tmp_path / FILENAMES[agent]

    examples = int(os.environ.get("OXIDE_FUZZ_EXAMPLES") or trials(1500, 120))  # `make fuzz`: more

    @settings(max_examples=examples, deadline=2000, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=fuzz_input(agent))
    def one(data: bytes) -> None:
        path.write_bytes(data)
        report.add("fuzz_execs")
        try:
            _parse_all(agent, path)
        except Exception:
            report.add("fuzz_crashes")
            _keep_finding(agent, data)
            raise

    one()
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    assert grown_mb < 512, f"{agent}: parsing fuzzed inputs grew the process by {grown_mb:.0f} MB"


def test_corpus_findings_stay_fixed(tmp_path: Path) -> None:
    for p in sorted(CORPUS.glob("*.bin")):
        agent = p.name.split("-", 1)[0]
        path = tmp_path / FILENAMES[agent]
        path.write_bytes(p.read_bytes())
        report.add("fuzz_execs")
        _parse_all(agent, path)


# ---------------------------------------------------------------- untrusted checkpoint trees

def _raw_tree(g: pygit2.Repository, entries: list[tuple[int, bytes, pygit2.Oid]]) -> pygit2.Oid:
    body = b"".join(f"{mode:o} ".encode() + name + b"\0" + oid.raw for mode, name, oid in entries)
    return g.odb.write(pygit2.enums.ObjectType.TREE, body)


def _checkpoint_of(g: pygit2.Repository, tree: pygit2.Oid) -> str:
    sig = pygit2.Signature("x", "x@x", 0, 0)
    c = g.create_commit(None, sig, sig, "oxide: evil\n\nOxide-Kind: manual\nOxide-Worktree: main\n"
                        "Oxide-Branch: main\n", tree, [g.head.target])
    g.references.create(f"refs/oxide/checkpoints/manual/{c}", c)
    return str(c)


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        if ".git" in dirs and Path(dirpath) == root:
            dirs.remove(".git")
        for f in files:
            p = Path(dirpath, f)
            out[str(p.relative_to(root))] = p.read_bytes() if not p.is_symlink() else os.readlink(p).encode()
    return out


def test_hostile_trees_are_refused(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo")
    (root / ".gitignore").write_text("build\n")  # also ignores a symlink named build
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "ignore")
    outside = tmp_path / "outside"
    outside.mkdir()
    g = pygit2.Repository(str(root))
    evil = g.create_blob(b"pwned")
    inner = _raw_tree(g, [(0o100644, b"evil", evil)])
    head = [(e.filemode, e.name.encode(), e.id) for e in g.head.peel(pygit2.Commit).tree]

    def with_entries(*extra: tuple[int, bytes, pygit2.Oid]) -> pygit2.Oid:
        return _raw_tree(g, sorted(head + list(extra), key=lambda e: e[1] + (b"/" if e[0] == 0o40000 else b"")))

    names = [b"..", b".git", b".GIT", b".git.", b".git ", b"git~1", b"GIT~1", b".g\xe2\x80\x8cit",
             b".\xef\xbb\xbfgit", b".git::$INDEX_ALLOCATION", b"../escape", b"/abs", b"a/../../x", b"C:x"]
    cases: dict[str, pygit2.Oid] = {}
    for n in names:
        cases[f"dir {n!r}"] = with_entries((0o40000, n, inner))
        cases[f"file {n!r}"] = with_entries((0o100644, n, evil))
    # a symlink out of the worktree and a write through it, in one raw tree (duplicate name)
    link = g.create_blob(str(outside).encode())
    cases["symlink then dir of same name"] = with_entries((0o120000, b"zlink", link), (0o40000, b"zlink", inner))
    # an ignored symlinked folder already in the worktree, and a tree that writes below it
    os.symlink(outside, root / "build")
    cases["write below a symlinked folder"] = with_entries((0o40000, b"build", inner))
    before_outside = _snapshot(outside)
    step = trials(1, 3)  # quick mode: every third spelling, and both symlink cases
    picked = [k for i, k in enumerate(cases) if i % step == 0 or "symlink" in k]
    for name, tree in ((k, cases[k]) for k in picked):
        report.add("hostile_tried")
        cid = _checkpoint_of(g, tree)
        r = run_oxide(root, "reindex")
        assert_clean_exit(r, f"reindex with {name}")
        r = run_oxide(root, "rewind", cid, "--code", "--yes", "--force")
        assert_clean_exit(r, f"rewind to {name}")
        assert r.returncode == 1, f"{name}: rewind was not refused\n{r.stdout}{r.stderr}"
        assert "refusing" in r.stderr or "unsafe" in r.stderr or "symlink" in r.stderr, r.stderr
        report.add("hostile_refused")
        assert _snapshot(outside) == before_outside, f"{name}: wrote outside the worktree"
        assert not (root / ".git" / "evil").exists() and not (tmp_path / "evil").exists()
        assert not (tmp_path / "escape").exists() and not Path("/abs").exists()
    # a symlink in the worktree replaced by a folder in the checkpoint: the link goes, not its target
    os.unlink(root / "build")
    os.symlink(outside, root / "tracked_link")
    cp = json.loads(run_oxide(root, "checkpoint", "--json").stdout)
    tree = with_entries((0o40000, b"tracked_link", inner))
    cid = _checkpoint_of(g, tree)
    report.add("hostile_tried")
    r = run_oxide(root, "rewind", cid, "--code", "--yes", "--force")
    assert_clean_exit(r, "symlink replaced by a folder")
    report.add("hostile_refused")
    assert _snapshot(outside) == before_outside
    if r.returncode == 0:
        assert (root / "tracked_link").is_dir() and not (root / "tracked_link").is_symlink()
        assert (root / "tracked_link" / "evil").read_bytes() == b"pwned"
    assert run_oxide(root, "rewind", cp["id"], "--code", "--yes", "--force").returncode == 0
    fsck_ok = subprocess.run(["git", "fsck", "--connectivity-only"], cwd=root, capture_output=True)
    assert fsck_ok.returncode == 0
    doctor_heals(root)


def test_enormous_blob_is_refused(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = make_ctx(repo)
    g = ctx.repo.git
    big = g.create_blob(b"x" * 4096)
    tb = g.TreeBuilder(g.head.peel(pygit2.Commit).tree)
    tb.insert("huge.bin", big, BLOB)
    cid = _checkpoint_of(g, tb.write())
    from oxide_git.store.reindex import reindex

    reindex(ctx)
    monkeypatch.setattr(restore, "MAX_BLOB", 1024)  # the real bound is 1 GiB; same code path
    report.add("hostile_tried")
    with pytest.raises(UntrustedTree):
        rewind(make_ctx(repo), cid, conversation=False, force=True)
    report.add("hostile_refused")
    assert not (repo / "huge.bin").exists()


def _session_log(g: pygit2.Repository, sid: str, entries: dict[bytes, bytes]) -> None:
    """A session log commit with a valid session.msgpack and hostile message entries."""
    from oxide_git.core import codec
    from oxide_git.core.model import Session

    s = Session(id=sid, agent="claude", native_id="bomb", title="bomb")
    bucket = _raw_tree(g, sorted((0o100644, name, g.create_blob(data)) for name, data in entries.items()))
    msgs = _raw_tree(g, [(0o40000, b"000000", bucket)])
    root = _raw_tree(g, [(0o40000, b"messages", msgs), (0o100644, b"session.msgpack",
                                                          g.create_blob(codec.encode_session(s)))])
    sig = pygit2.Signature("git oxide", "oxide@localhost", 0, 0)
    c = g.create_commit(None, sig, sig, f"bomb\n\nOxide-Session: {sid}\n", root, [])
    g.references.create(f"refs/oxide/sessions/{sid}", c, force=True)


def test_msgpack_bombs_and_broken_logs(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo")
    g = pygit2.Repository(str(root))
    bombs = {
        "array32 of 4G": b"\xdd\xff\xff\xff\xff",
        "map32 of 4G": b"\xdf\xff\xff\xff\xff",
        "str32 of 4G": b"\xdb\xff\xff\xff\xff",
        "deep nesting": b"\x91" * 200_000,
        "ext type": b"\xc7\x05\x01hello",
        "not a dict": b"\x93\x01\x02\x03",
        "future schema": b"\x81\xa1v\xcd\xff\xff",
        "garbage": os.urandom(4096),
    }
    cases: dict[str, dict[bytes, bytes]] = {k: {b"00000000.msgpack": v} for k, v in bombs.items()}
    cases["non-numeric entry name"] = {b"zz.msgpack": b"\x80"}
    cases["entry that is a tree"] = {}
    for i, (name, entries) in enumerate(cases.items()):
        report.add("hostile_tried")
        sid = f"{i:012d}" + "b" * 20
        t = time.monotonic()
        if entries:
            _session_log(g, sid, entries)
        else:
            from oxide_git.core import codec
            from oxide_git.core.model import Session

            sub = _raw_tree(g, [(0o100644, b"x", g.create_blob(b"x"))])
            bucket = _raw_tree(g, [(0o40000, b"00000000.msgpack", sub)])
            msgs = _raw_tree(g, [(0o40000, b"000000", bucket)])
            s = Session(id=sid, agent="claude", native_id="t", title="t")
            rt = _raw_tree(g, [(0o40000, b"messages", msgs),
                               (0o100644, b"session.msgpack", g.create_blob(codec.encode_session(s)))])
            sig = pygit2.Signature("x", "x@x", 0, 0)
            g.references.create(f"refs/oxide/sessions/{sid}", g.create_commit(None, sig, sig, "t", rt, []))
        cmds = [["reindex"], ["reindex", "--full"], ["show", sid[:14], "--json"], ["doctor"], ["list", "--json"]]
        for cmd in cmds[:trials(5, 3)]:
            r = run_oxide(root, *cmd, timeout=60)
            assert_clean_exit(r, f"{' '.join(cmd)} on {name}")
        assert time.monotonic() - t < 60, f"{name}: too slow"
        report.add("hostile_refused")
        subprocess.run(["git", "update-ref", "-d", f"refs/oxide/sessions/{sid}"], cwd=root, check=True)
    assert run_oxide(root, "reindex").returncode == 0


# ---------------------------------------------------------------- awkward paths, disks, permissions

AWKWARD = ["with space.txt", "new\nline.txt", "tab\there.txt", "ünïcödé.txt", "x" * 250, "-dash.txt",
           "quote\"'.txt", "star*?.txt", "dir with space/inner file.txt"]


def test_awkward_paths_round_trip(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo")
    names: list[bytes] = [os.fsencode(n) for n in AWKWARD] + [b"latin1-\xe9\xff.txt"]
    for n in names:
        p = root / os.fsdecode(n)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"v1 " + n)
    (root / "Case.txt").write_text("case\n")
    report.add("hostile_tried", len(names) + 1)
    r = run_oxide(root, "checkpoint", "--json", "-m", "awkward")
    assert_clean_exit(r, "checkpoint of awkward names")
    cp1 = json.loads(r.stdout)
    # a name that is not UTF-8 cannot go into a pygit2 tree: it is reported as skipped
    assert any("latin1" in s["path"] for s in cp1["skipped"]), cp1["skipped"]
    latin1 = "latin1-\udce9\udcff.txt"
    snap1 = {k: v for k, v in _snapshot(root).items() if k != latin1}
    for n in names:
        (root / os.fsdecode(n)).write_bytes(b"v2")
    os.rename(root / "Case.txt", root / "case.TXT")  # a case-only rename
    (root / ("x" * 250)).unlink()
    r = run_oxide(root, "checkpoint", "--json")
    assert_clean_exit(r, "second checkpoint")
    r = run_oxide(root, "rewind", cp1["id"], "--code", "--yes")
    assert_clean_exit(r, "rewind with awkward names")
    assert r.returncode == 0
    assert {k: v for k, v in _snapshot(root).items() if k != latin1} == snap1, "awkward names did not round-trip"
    report.add("hostile_refused", len(names) + 1)
    fsck_clean(root)
    doctor_heals(root)


@contextlib.contextmanager
def _mounted(kind: str, target: Path, size: str = "") -> Iterator[bool]:
    """A tmpfs of ``size`` or a read-only bind mount over ``target``; False when mounting is denied."""
    if kind == "tmpfs":
        cmd = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)]
        ok = subprocess.run(cmd, capture_output=True).returncode == 0
    else:
        ok = (subprocess.run(["mount", "--bind", str(target), str(target)], capture_output=True).returncode == 0
              and subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], capture_output=True).returncode == 0)
    try:
        yield ok
    finally:
        if ok or kind != "tmpfs":
            subprocess.run(["umount", str(target)], capture_output=True)


def test_full_disk_reports_clearly(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    with _mounted("tmpfs", disk, "3m") as ok:
        if not ok:
            pytest.skip("cannot mount a tmpfs here")
        root = _init(disk / "repo")
        transcript = FIXTURES / "claude" / "compaction.jsonl"
        (root / "big.txt").write_bytes(os.urandom(256 * 1024))  # something for checkpoint to store
        with contextlib.suppress(OSError), open(disk / "filler", "wb", buffering=0) as f:  # fill the disk
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        for cmd in (["checkpoint"], ["import", "--agent", "claude", str(transcript)], ["reindex", "--full"],
                    ["doctor", "--fix"]):
            report.add("hostile_tried")
            r = run_oxide(root, *cmd)
            assert_clean_exit(r, f"{cmd[0]} on a full disk")
            report.add("hostile_refused")
        (disk / "filler").unlink()
        r = run_oxide(root, "import", "--agent", "claude", str(transcript))
        assert r.returncode == 0, r.stderr
        fsck_clean(root)
        doctor_heals(root)


def test_read_only_worktree_and_unreadable_files(tmp_path: Path) -> None:
    root = _init(tmp_path / "repo")
    (root / "a.txt").write_text("one\n")
    cp = json.loads(run_oxide(root, "checkpoint", "--json").stdout)
    (root / "a.txt").write_text("two\n")
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    fifo = root / "fifo"
    os.mkfifo(fifo)
    report.add("hostile_tried", 2)
    r = run_oxide(root, "checkpoint", "--json", timeout=30)  # a FIFO must not hang it
    assert_clean_exit(r, "checkpoint with a fifo and a dangling symlink")
    report.add("hostile_refused", 2)
    os.unlink(fifo)
    src = root / "src"
    src.mkdir()
    (src / "f.txt").write_text("x\n")
    with _mounted("ro", src) as ok:
        if not ok:
            pytest.skip("cannot remount read-only here")
        report.add("hostile_tried")
        tree = pygit2.Repository(str(root))
        blob = tree.create_blob(b"new\n")
        tb = tree.TreeBuilder(tree[cp["id"]].peel(pygit2.Commit).tree)
        sub = tree.TreeBuilder()
        sub.insert("f.txt", blob, BLOB)
        tb.insert("src", sub.write(), TREE)
        cid = _checkpoint_of(tree, tb.write())
        r = run_oxide(root, "rewind", cid, "--code", "--yes", "--force")
        assert_clean_exit(r, "rewind into a read-only folder")
        report.add("hostile_refused")
    fsck_clean(root)
    doctor_heals(root)
