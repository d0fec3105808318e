"""CLI wiring: help everywhere, git-style errors (never a traceback), exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from oxide_git.cli import COMMANDS, load_all, main
from oxide_git.core.errors import LockTimeout
from oxide_git.core.model import Message, Part, Session
from oxide_git.git import refs
from oxide_git.store import writes as store
from tests.conftest import git, make_ctx, oxide


def _all_commands() -> list[list[str]]:
    out = []
    for name, cmd in load_all().items():
        out.append([name])
        for sub in getattr(cmd, "commands", {}):
            out.append([name, sub])
    return out


def test_the_command_table_names_each_command_where_it_is_defined() -> None:
    """Only the invoked command's module is imported: the table must be right and complete."""
    commands = load_all()
    assert sorted(commands) == sorted(COMMANDS)  # in the order they were first loaded: any
    for name, cmd in commands.items():
        assert cmd.callback is not None and cmd.callback.__module__ == f"oxide_git.cli.{COMMANDS[name]}"


@pytest.mark.parametrize("args", _all_commands(), ids=" ".join)
def test_every_command_has_help(args: list[str]) -> None:
    r = CliRunner().invoke(main, [*args, "-h"])
    assert r.exit_code == 0, r.output
    assert "Usage:" in r.output


def test_top_level_help_and_version(repo: Path) -> None:
    assert "Keep every AI coding-agent session" in oxide(repo, "-h").stdout
    assert oxide(repo, "--version").stdout.startswith("git oxide")


def _err(r) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    assert "Traceback" not in r.stderr
    return r.returncode, r.stderr


def test_errors_are_git_style(repo: Path, tmp_path: Path) -> None:
    code, err = _err(oxide(tmp_path, "list", check=False))
    assert code == 1 and err.startswith("error: not a git repository")
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    code, err = _err(oxide(bare, "checkpoint", check=False))
    assert code == 1 and "bare repository" in err and "hint:" in err
    code, err = _err(oxide(repo, "show", "nope", check=False))
    assert code == 1 and "error: session nope not found" in err and "hint:" in err
    ctx = make_ctx(repo)
    for sid in ("0" * 12 + "a" * 20, "0" * 12 + "a" * 19 + "b"):
        store.append(ctx, Session(id=sid, agent="codex"), [Message("user", (Part.text("x"),))])
    code, err = _err(oxide(repo, "show", "0000", check=False))
    assert code == 1 and "ambiguous" in err
    code, err = _err(oxide(repo, "rewind", "zzzz", "--yes", check=False))
    assert code == 1 and "checkpoint zzzz not found" in err
    code, _ = _err(oxide(repo, "frobnicate", check=False))
    assert code == 2


def test_corrupt_index_says_reindex(repo: Path) -> None:
    oxide(repo, "init")
    ctx = make_ctx(repo)
    store.append(ctx, Session(id="0" * 32, agent="codex"), [Message("user", (Part.text("x"),))])
    ctx.close()
    db = repo / ".git" / "oxide" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"this is not sqlite" * 100)
    code, err = _err(oxide(repo, "list", check=False))
    assert code == 1 and "corrupt" in err and "reindex" in err
    fixed = oxide(repo, "doctor", "--fix")
    assert "fixed: the index is unreadable" in fixed.stdout and "error:" not in fixed.stdout
    assert "00000000  codex" in oxide(repo, "list", "--all").stdout
    assert "ok: the store is consistent" in oxide(repo, "doctor").stdout


def test_locked_ref_times_out_clearly(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = make_ctx(repo)
    s = Session(id="0" * 32, agent="codex")
    store.append(ctx, s, [Message("user", (Part.text("x"),))])
    lock = repo / ".git" / "refs" / "oxide" / "sessions" / f"{s.id}.lock"
    lock.write_text("held by another process\n")
    monkeypatch.setattr(refs, "LOCK_BUDGET_S", 0.3)
    with pytest.raises(LockTimeout) as e:
        store.append(ctx, s, [Message("user", (Part.text("y"),))])
    assert "locked by another process" in e.value.message and e.value.hint
    lock.unlink()
    store.append(ctx, s, [Message("user", (Part.text("y"),))])


def test_checkpoint_prints_id_alone_on_stdout(repo: Path) -> None:
    (repo / "README.md").write_text("x\n")
    r = oxide(repo, "checkpoint", "-m", "m")
    cid = r.stdout.strip()
    assert len(cid) == 40 and "\n" not in cid
    assert "Checkpoint" in r.stderr
    assert git(repo, "cat-file", "-t", cid).strip() == "commit"


def test_man_page_names_every_command() -> None:
    """`git oxide --help` shows docs/git-oxide.1 (git turns --help into `man git-oxide`)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "git-oxide.1").read_text()
    for name, cmd in load_all().items():
        if not cmd.hidden:
            assert f"\\fB{name}" in page, f"{name} is missing from docs/git-oxide.1"
