"""Checkpoints leave the machine without the secrets of the worktree (``checkpoint_screen``): pushed
by `push --checkpoints` and by the pre-push hook to real bare remotes, every object there scanned;
a teammate's clone pulls, blames and rewinds; the local checkpoint keeps the real bytes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from oxide_git.git import refs
from oxide_git.mcp import tools as mcp_tools
from oxide_git.store import writes as store
from tests.blame_helpers import Clock, FakeAgent, exact_blame, human_edit
from tests.conftest import git, make_ctx, oxide
from tests.hooks.test_hooks import idle
from tests.planted import NEEDLES, PLANTED
from tests.store.test_redact import _all_objects

SID = "0" * 12 + "c" * 20
EVERY_RULE = "\n".join(t for t, _s in PLANTED.values()) + "\n"
# secret by name only: no rule fires on these values, the name alone keeps them home
BY_NAME = {".env": "DB_HOST=db-internal-Quokka17\nFEATURE=on\n", "deploy.pem": "Wombat-cert-body-17\n",
           "id_rsa": "Numbat-key-body-17\n", ".npmrc": "registry=https://npm.example/Bilby17\n",
           ".pypirc": "[pypi]\nusername = Dingo17\n", "credentials-prod.json": '{"who": "Platypus17"}\n',
           "tls/server.key": "Echidna-key-17\n", "secrets/db.txt": "Kookaburra17\n"}
NAME_NEEDLES = ["Quokka17", "Wombat-cert", "Numbat-key", "Bilby17", "Dingo17", "Platypus17", "Echidna-key",
                "Kookaburra17"]
EDIT = "\n# pasted for a quick test\n" + EVERY_RULE


def plant(root: Path) -> dict[str, bytes]:
    """Secrets of every rule in an untracked file, an uncommitted edit of a tracked file and a new
    source file; secret-named files (``secrets/*`` by ``oxide.secretFiles``). Returns them."""
    git(root, "config", "oxide.secretFiles", "secrets/*")
    (root / "notes.txt").write_text(EVERY_RULE)
    with open(root / "src" / "app.py", "a") as f:
        f.write(EDIT)
    (root / "src" / "settings.py").write_text("DEBUG = True\n" + EVERY_RULE + "PORT = 8080\n")
    for rel, text in BY_NAME.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return {rel: (root / rel).read_bytes() for rel in ["notes.txt", "src/app.py", "src/settings.py", *BY_NAME]}


def leaks(bare: Path) -> list[str]:
    blob = _all_objects(bare)
    return [n for n in NEEDLES + NAME_NEEDLES if n.encode() in blob]


@pytest.fixture
def shared(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    oxide(repo, "init")
    return repo, bare


def test_the_issue_repro_pushes_no_secret(shared: tuple[Path, Path]) -> None:
    repo, bare = shared
    aws, gh = PLANTED["aws_access_key_id"][1], PLANTED["github_token"][1]
    (repo / ".env").write_text(f"AWS_ACCESS_KEY_ID={aws}\n")
    (repo / "src" / "app.py").write_text(f"print('hi')\ntoken = \"{gh}\"\n")
    cp = oxide(repo, "checkpoint", "-m", "x").stdout.strip()
    r = oxide(repo, "push", "--checkpoints", "origin")
    blob = _all_objects(bare)
    assert aws.encode() not in blob and gh.encode() not in blob
    assert f"checkpoint {cp[:12]} sent redacted: .env withheld: a secret by its name (.env*); " \
           "src/app.py redacted (github_token)" in r.stderr
    twin = git(bare, "rev-parse", refs.checkpoint_ref("manual", cp)).strip()
    assert twin != cp  # the same ref name, a twin commit
    msg = git(bare, "log", "-1", "--format=%B", twin)
    assert "Oxide-Redacted: .env, src/app.py" in msg and f"Oxide-Checkpoint: {cp}" in msg
    assert git(bare, "show", f"{twin}:src/app.py") == "print('hi')\ntoken = \"[REDACTED:github_token]\"\n"
    assert git(bare, "ls-tree", "--name-only", twin).split() == [".gitignore", "README.md", "src"]
    assert git(repo, "rev-parse", refs.checkpoint_ref("manual", cp)).strip() == cp  # local: the real one
    out = json.loads(oxide(repo, "push", "--checkpoints", "--json", "origin").stdout)
    assert out["updated"] == {}  # a repeat push sends nothing again
    assert out["screened"] == [{"checkpoint": cp, "ref": refs.checkpoint_ref("manual", cp), "sent_as": "twin",
                                "twin": twin, "files": [
                                    {"action": "withheld", "path": ".env", "pattern": ".env*",
                                     "rules": {"secret_file": 1}},
                                    {"action": "redacted", "path": "src/app.py", "rules": {"github_token": 1}}]}]


def test_every_rule_every_place_by_push_then_teammate_pulls_blames_and_rewinds(
        shared: tuple[Path, Path], tmp_path: Path) -> None:
    repo, bare = shared
    oxide(repo, "hooks", "install")
    clock = Clock()
    a = FakeAgent(repo, clock, SID)
    a.prompt("start")
    ctx = make_ctx(repo, clock.t)
    store.set_current_session(ctx, SID)
    ctx.close()
    real = plant(repo)
    (repo / "plan.md").write_text("the plan, nothing secret\n")  # untracked and clean: sent as it is
    a.prompt("write the app")
    a.write("app.txt", "one\ntwo\n")
    a.say("done")
    human_edit(repo, clock, "app.txt", "one\ntwo\nthree\n")
    git(repo, "add", "app.txt")
    git(repo, "commit", "-q", "-m", "app")  # the secrets stay out of the commit
    idle(repo)
    commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "push", "-q", "origin", "main")  # the code the teammate blames
    cps = [ln.split()[1] for ln in git(repo, "for-each-ref", "--format=%(refname) %(objectname)",
                                       refs.CHECKPOINTS).splitlines()]
    r = json.loads(oxide(repo, "push", "--checkpoints", "--json").stdout)
    assert not leaks(bare)
    twins = {s["checkpoint"]: s for s in r["screened"]}
    assert twins and all(s["sent_as"] == "twin" for s in twins.values())
    files = {f["path"]: f for s in twins.values() for f in s["files"]}
    assert {p: f["action"] for p, f in files.items()} == {
        "notes.txt": "redacted", "src/app.py": "redacted", "src/settings.py": "redacted",
        **dict.fromkeys(BY_NAME, "withheld")}
    assert set(files["notes.txt"]["rules"]) == set(PLANTED)  # every rule fired
    assert files["secrets/db.txt"]["pattern"] == "secrets/*"  # the configured list

    # the teammate: pull, see what was taken out, blame, rewind
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    oxide(b, "init")
    (b / ".env").write_text("MINE=1\n")
    oxide(b, "pull", "--checkpoints")
    listed = {c["id"]: c for c in json.loads(oxide(b, "checkpoints", "--json").stdout)}
    assert set(cps) <= set(listed)  # the real ids, which the notes name
    last = max((listed[c] for c in twins), key=lambda c: c["created_at"])
    assert {s["path"] for s in last["skipped"] if s.get("redacted")} == set(real)
    assert f"checkpoint {last['id'][:7]}" in oxide(b, "checkpoints").stderr
    ctx = make_ctx(b, clock.tick())
    try:
        res = exact_blame(ctx, "app.txt")
        shown = mcp_tools.call(ctx, "checkpoints", {})["checkpoints"]
    finally:
        ctx.close()
    assert set(next(c for c in shown if c["id"] == last["id"])["redacted"]) == set(real)
    assert [(ln.text, ln.who, ln.session_id) for ln in res.lines] == [
        ("one", "agent", SID), ("two", "agent", SID), ("three", "human", None)]
    assert {ln.commit for ln in res.lines} == {commit}
    app_before = (b / "src" / "app.py").read_bytes()
    out = oxide(b, "rewind", last["id"], "--code", "--yes", "--force")
    assert "left alone: .env (withheld when it was pushed: a secret by its name (.env*))" in out.stderr
    assert "left alone: src/app.py (redacted when it was pushed (" in out.stderr
    assert (b / ".env").read_text() == "MINE=1\n"  # the teammate's own file, untouched
    assert (b / "src" / "app.py").read_bytes() == app_before
    assert not (b / "notes.txt").exists() and (b / "app.txt").read_text() == "one\ntwo\nthree\n"
    assert (b / "plan.md").read_text() == "the plan, nothing secret\n"  # the rest is restored
    oxide(b, "undo", "--yes")
    assert not (b / "plan.md").exists() and (b / ".env").read_text() == "MINE=1\n"

    # here, the real checkpoint: a rewind restores every secret byte for byte
    for rel in real:
        (repo / rel).write_text("gone\n")
    oxide(repo, "rewind", last["id"], "--code", "--yes")
    assert {rel: (repo / rel).read_bytes() for rel in real} == real


def test_the_pre_push_hook_sends_twins_only(shared: tuple[Path, Path]) -> None:
    repo, bare = shared
    oxide(repo, "hooks", "install")
    git(repo, "config", "oxide.push", "true")
    git(repo, "config", "oxide.pushCheckpoints", "true")
    plant(repo)
    cp = oxide(repo, "checkpoint", "-m", "before the push").stdout.strip()
    idle(repo)
    git(repo, "push", "-q", "origin", "main")  # a plain git push: the hook pushes refs/oxide/*
    name = refs.checkpoint_ref("manual", cp)
    deadline = time.monotonic() + 30
    while name not in git(bare, "for-each-ref", "--format=%(refname)") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert git(bare, "rev-parse", name).strip() != cp
    assert not leaks(bare)
    log = (repo / ".git" / "oxide" / "log").read_text()
    assert f"background push to origin: checkpoint {cp[:12]} sent redacted" in log


def test_mcp_answers_about_checkpoints_carry_no_secret(shared: tuple[Path, Path]) -> None:
    repo, _bare = shared
    plant(repo)
    oxide(repo, "checkpoint", "-m", "with " + PLANTED["github_token"][0])
    ctx = make_ctx(repo)
    try:
        answers = [mcp_tools.call(ctx, "checkpoints", {}),
                   mcp_tools.call(ctx, "checkpoints", {"path": "notes.txt"}),
                   *(mcp_tools.call(ctx, "blame", {"path": p}) for p in ["notes.txt", "src/settings.py", *BY_NAME])]
    finally:
        ctx.close()
    text = json.dumps(answers)
    assert answers[1]["checkpoints"] and "[WITHHELD:secret_file]" in text
    assert [n for n in NEEDLES + NAME_NEEDLES if n in text] == []
