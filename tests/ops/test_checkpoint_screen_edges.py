"""The checkpoint screen's cases one by one, in-process: which files a twin redacts or withholds and
what it keeps, the settings, the real id -> twin map, and what a pull accepts."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oxide_git.core.secret_files import SecretNames
from oxide_git.git import refs
from oxide_git.ops import checkpoint_screen, share
from oxide_git.ops.checkpoint import checkpoint
from oxide_git.ops.doctor import diagnose
from oxide_git.store.redact import Redactor
from tests.conftest import git, make_ctx, new_repo
from tests.planted import PLANTED
from tests.store.test_redact import _all_objects
from tests.store.test_secretgate import _FRAGMENTS

GH = PLANTED["github_token"][1]


@pytest.fixture
def shared(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    return repo, bare


def take(root: Path, text: str = "") -> str:
    ctx = make_ctx(root)
    try:
        return checkpoint(ctx, text=text).id
    finally:
        ctx.close()


def push(root: Path) -> share.ShareResult:
    ctx = make_ctx(root)
    try:
        return share.push(ctx, "origin", checkpoints=True)
    finally:
        ctx.close()


def remote_tree(bare: Path, cp: str, owner: str = "manual") -> dict[str, str]:
    ref = refs.checkpoint_ref(owner, cp)
    names = git(bare, "ls-tree", "-r", "--name-only", ref).split()
    return {n: git(bare, "cat-file", "-p", f"{ref}:{n}") for n in names}


def test_secret_names_defaults_config_and_exemptions() -> None:
    names = SecretNames(["secrets/*, !.env.example", "vault.txt"])
    assert names.match(".env") == ".env*" and names.match("deep/.env.local") == ".env*"
    assert names.match("a/b.pem") == "*.pem" and names.match("id_rsa.pub") == "id_rsa*"
    assert names.match("credentials-x.json") == "credentials*.json" and names.match("x/.npmrc") == ".npmrc"
    assert names.match("secrets/db") == "secrets/*" and names.match("x/secrets/db") is None
    assert names.match("x/vault.txt") == "vault.txt"
    assert names.match(".env.example") is None and names.match("src/app.py") is None


def test_a_tracked_secret_file_edited_keeps_the_committed_version_and_binary_hits_are_withheld(
        shared: tuple[Path, Path]) -> None:
    repo, bare = shared
    (repo / ".env.example").write_text("KEY=changeme\n")
    git(repo, "add", ".env.example")
    git(repo, "commit", "-q", "-m", "example")
    git(repo, "config", "--add", "oxide.secretFiles", "!.env.example")
    git(repo, "config", "--add", "oxide.secretFiles", "local.cfg")
    (repo / ".env.example").write_text(f"KEY={GH}\n")  # exempt by name, still read by the rules
    (repo / "local.cfg").write_text("nothing a rule sees\n")
    (repo / "blob.bin").write_bytes(b"\0\1\2" + GH.encode() + b"\0")
    (repo / "clean.txt").write_text("just words\n")
    cp = take(repo)
    res = push(repo)
    files = {f["path"]: f for f in res.screened[0]["files"]}
    assert {p: f["action"] for p, f in files.items()} == {
        ".env.example": "redacted", "blob.bin": "withheld", "local.cfg": "withheld"}
    tree = remote_tree(bare, cp)
    assert tree[".env.example"] == "KEY=[REDACTED:github_token]\n"
    assert "blob.bin" not in tree and "local.cfg" not in tree and tree["clean.txt"] == "just words\n"
    assert GH.encode() not in _all_objects(bare)


def test_withhold_setting_sends_no_such_checkpoint_and_clean_ones_go_as_they_are(
        shared: tuple[Path, Path]) -> None:
    repo, bare = shared
    clean = take(repo, "nothing here")
    git(repo, "config", "oxide.checkpointSecrets", "withhold")
    (repo / "notes.txt").write_text(f"token {GH}\n")
    dirty = take(repo)
    res = push(repo)
    assert res.screened == [{"checkpoint": dirty, "ref": refs.checkpoint_ref("manual", dirty),
                             "sent_as": "withheld", "why": "oxide.checkpointSecrets is withhold",
                             "files": [{"action": "redacted", "path": "notes.txt",
                                        "rules": {"github_token": 1}}]}]
    assert res.notes == [f"checkpoint {dirty[:12]} withheld: notes.txt redacted (github_token) "
                         "(oxide.checkpointSecrets is withhold)"]
    pushed = git(bare, "for-each-ref", "--format=%(refname) %(objectname)", refs.CHECKPOINTS).split()
    assert pushed == [refs.checkpoint_ref("manual", clean), clean]


def test_redaction_off_still_keeps_secret_files_home_and_a_message_is_redacted(
        shared: tuple[Path, Path]) -> None:
    repo, bare = shared
    (repo / "id_rsa").write_text("key body\n")
    cp = take(repo, f"try {GH}")
    res = push(repo)
    twin = res.screened[0]["twin"]
    msg = git(bare, "log", "-1", "--format=%B", twin)
    assert "try [REDACTED:github_token]" in msg and "Oxide-Redacted: id_rsa\n" in msg
    git(repo, "config", "oxide.redact", "false")  # a new digest: screened again, rules off
    (repo / "notes.txt").write_text(f"{GH}\n")
    cp2 = take(repo)
    res = push(repo)
    again = {s["checkpoint"]: s for s in res.screened}
    assert again[cp2]["files"] == [{"action": "withheld", "path": "id_rsa", "pattern": "id_rsa*",
                                    "rules": {"secret_file": 1}}]
    assert cp in again  # screened again under the new rules
    assert "key body" not in _all_objects(bare).decode("utf-8", "replace")


def test_a_checkpoint_before_the_first_commit(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".env").write_text("A=1\n")
    (root / "a.txt").write_text(f"{GH}\n")
    cp = take(root)
    ctx = make_ctx(root)
    try:
        got = checkpoint_screen.Screen(ctx).checkpoint(refs.checkpoint_ref("manual", cp), pygit2.Oid(hex=cp))
        twin = ctx.repo.git[got.send]
        assert twin.parent_ids == [] and sorted(e.name for e in twin.tree) == ["a.txt"]
        assert ctx.repo.git[twin.tree["a.txt"].id].data == b"[REDACTED:github_token]\n"
    finally:
        ctx.close()


def test_the_map_spares_a_second_screen_and_a_lost_twin_is_built_again_the_same(
        shared: tuple[Path, Path]) -> None:
    repo, _bare = shared
    for i in range(30):
        (repo / f"f{i}.txt").write_text(f"file {i}\n")
    (repo / "notes.txt").write_text(f"{GH}\n")
    first = take(repo)
    ctx = make_ctx(repo)
    try:
        screened = checkpoint_screen.screen_all(ctx)
        assert [s.fresh for s in screened] == [True]
        twin = screened[0].send
        assert [s.fresh for s in checkpoint_screen.screen_all(ctx)] == [False]
        # a later checkpoint on the same HEAD reads only what changed since
        (repo / "f3.txt").write_text("changed\n")
        second = take(repo)
        sc = checkpoint_screen.Screen(ctx)
        prior = next(s for s in checkpoint_screen._load(ctx, sc.digest)[0].values())
        got = sc.checkpoint(refs.checkpoint_ref("manual", second), pygit2.Oid(hex=second), prior)
        assert sc.scanned == 2 and [f["path"] for f in got.files] == ["notes.txt"]  # f3.txt and notes.txt
        # the map lost a line and the twin its object: built again, the same commit
        path = ctx.repo.oxide_dir / checkpoint_screen.CACHE_FILE
        path.write_text("{cut by a crash\n")
        loose = ctx.repo.common_dir / "objects" / twin[:2] / twin[2:]
        loose.unlink()
        again = {s.id: s for s in checkpoint_screen.screen_all(ctx)}
        assert again[first].send == twin and again[first].fresh and twin in ctx.repo.git
    finally:
        ctx.close()


def test_a_teammate_takes_a_twin_under_its_real_id_and_nothing_else(shared: tuple[Path, Path],
                                                                    tmp_path: Path) -> None:
    repo, bare = shared
    git(repo, "push", "-q", "origin", "main")
    (repo / ".env").write_text("A=1\n")
    cp = take(repo)
    twin = push(repo).screened[0]["twin"]
    b = new_repo(tmp_path / "b")
    git(b, "remote", "add", "origin", str(bare))
    # a forged ref: a twin under a name that is not the checkpoint it stands for
    git(bare, "update-ref", refs.checkpoint_ref("manual", "f" * 40), twin)
    ctx = make_ctx(b)
    try:
        res = share.pull(ctx, "origin", checkpoints=True)
        assert res.updated == {refs.checkpoint_ref("manual", cp): "new"}
        assert any("f" * 40 in p and "not a checkpoint" in p for p in res.problems)
        row = ctx.index.checkpoint_rows()[0]
        assert row["id"] == cp and row["skipped"] == [
            {"path": ".env", "redacted": "withheld",
             "reason": "withheld when it was pushed: a secret by its name (.env*)"}]
        assert not [f for f in diagnose(ctx)["findings"] if "index is behind" in f["message"]]
        back = share.push(ctx, "origin", checkpoints=True)  # the teammate pushes the twin back as it is
        assert not back.rejected and not back.problems and back.screened == []
        assert git(bare, "rev-parse", refs.checkpoint_ref("manual", cp)).strip() == twin
    finally:
        ctx.close()


def test_the_map_file_is_one_json_line_per_checkpoint(shared: tuple[Path, Path]) -> None:
    repo, _bare = shared
    (repo / "x.pem").write_text("x\n")
    cp = take(repo)
    push(repo)
    lines = (repo / ".git" / "oxide" / checkpoint_screen.CACHE_FILE).read_text().splitlines()
    d = json.loads(lines[0])
    assert len(lines) == 1 and d["id"] == cp and d["send"] != cp and d["parent"] and d["tree"]


def test_an_export_shows_a_secret_files_name_not_its_lines(repo: Path) -> None:
    from oxide_git.core.model import Message, Part, Session
    from oxide_git.export import sessions as export
    from oxide_git.store import writes as store

    sid = "0" * 12 + "e" * 20
    ctx = make_ctx(repo)
    try:
        store.append(ctx, Session(sid, "claude"), [Message("user", (Part.text("go"),), created_at=1)])
        (repo / ".env").write_text("DB_HOST=Quokka-internal\n")
        (repo / "notes.txt").write_text("plain words\n")
        checkpoint(ctx, session=sid)
        view = export.load(ctx, sid, patches=True)
    finally:
        ctx.close()
    patch = view.checkpoints[0].patch or ""
    assert "(a secret file by its name: not exported)" in patch and "+plain words" in patch
    assert "Quokka" not in patch


def test_the_map_is_rewritten_when_it_holds_mostly_what_is_gone(shared: tuple[Path, Path]) -> None:
    repo, _bare = shared
    path = repo / ".git" / "oxide" / checkpoint_screen.CACHE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"digest": "old", "id": f"{i:040x}"}) + "\n" for i in range(100)))
    cp = take(repo)
    ctx = make_ctx(repo)
    try:
        assert [s.id for s in checkpoint_screen.screen_all(ctx)] == [cp]
    finally:
        ctx.close()
    assert [json.loads(ln)["id"] for ln in path.read_text().splitlines()] == [cp]


def test_a_pulled_note_on_a_commit_not_fetched_here_links_nothing(repo: Path) -> None:
    """A teammate pulls the notes before the code: `checkpoints` lists, no error."""
    from oxide_git.store import retention

    g = make_ctx(repo).repo.git
    sig = pygit2.Signature("x", "x@x", 0, 0)
    g.create_note(json.dumps({"oxide": 1, "sessions": [], "checkpoints": ["a" * 40]}), sig, sig, "b" * 40,
                  refs.NOTES, True)
    assert retention.linked_ids(g) == set()


def test_outgoing_refs_follow_the_checkpoints(shared: tuple[Path, Path]) -> None:
    """What a push sends is one wildcard over refs/oxide/outgoing/checkpoints/: each checkpoint's
    twin or itself, none for a withheld one, and none once the checkpoint is gone."""
    repo, bare = shared
    clean = take(repo, "clean")
    (repo / ".env").write_text("A=1\n")
    dirty = take(repo)
    res = push(repo)
    twin = res.screened[0]["twin"]
    out = checkpoint_screen.OUTGOING + "manual/"
    listed = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", out).splitlines()
    assert dict(ln.split() for ln in listed) == {out + clean: clean, out + dirty: twin}
    git(repo, "update-ref", "-d", refs.checkpoint_ref("manual", clean))  # as gc removes it
    push(repo)
    assert git(repo, "for-each-ref", "--format=%(refname)", out).split() == [out + dirty]
    assert git(bare, "for-each-ref", "--format=%(refname)", refs.OUTGOING).strip() == ""  # never sent as such


@settings(max_examples=int(os.environ.get("OXIDE_GATE_EXAMPLES", "300")), deadline=None)
@given(text=st.lists(st.sampled_from([*_FRAGMENTS, "\n", "=", '"token": "', "password: "]), max_size=12)
       .map("".join))
def test_the_gate_never_clears_a_file_the_rules_would_change(text: str) -> None:
    """The screen asks the message gate about a file's raw bytes before it reads the text."""
    r = Redactor()
    if r.text(text, Counter()) != text:
        assert r.gate.maybe(text.encode("utf-8"))
