"""`git oxide init --mcp claude|codex|opencode`: the entry each agent's own `mcp add` writes (checked
against the pinned releases in tests/compat/test_mcp.py), the user's other entries kept, --remove,
--dry-run, --json, per-machine files where git-oxide is not on PATH, files it cannot edit safely."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import oxide

OURS_CLAUDE = {"type": "stdio", "command": "git", "args": ["oxide", "mcp"], "env": {}}
OURS_OPENCODE = {"type": "local", "command": ["git", "oxide", "mcp"]}
CODEX_BEFORE = """# my settings
model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]

[profiles.fast]
model = "o4-mini"
"""


def _files(repo: Path, home: Path) -> dict[str, bytes | None]:
    paths = {"mcp": repo / ".mcp.json", "opencode": repo / "opencode.json",
             "codex": home / ".codex" / "config.toml", "claude_state": home / ".claude" / ".claude.json"}
    return {k: (p.read_bytes() if p.exists() else None) for k, p in paths.items()}


def test_entries_as_the_agents_write_them_others_kept_and_removed_again(repo: Path, isolated_env: Path) -> None:
    home = isolated_env
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": {"command": "docs"}}}))
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(CODEX_BEFORE)
    (repo / "opencode.json").write_text(json.dumps({"$schema": "https://opencode.ai/config.json",
                                                    "mcp": {"docs": {"type": "local", "command": ["docs"]}},
                                                    "model": "fake/fake-model"}))
    out = json.loads(oxide(repo, "init", "--mcp", "claude", "--mcp", "codex", "--mcp", "opencode",
                           "--json").stdout)
    assert [(c["agent"], c["action"], c["scope"]) for c in out["mcp"]] == [
        ("claude", "add", "project"), ("codex", "add", "user"), ("opencode", "add", "project")]
    mcp = json.loads((repo / ".mcp.json").read_text())
    assert mcp["mcpServers"] == {"docs": {"command": "docs"}, "git-oxide": OURS_CLAUDE}
    codex = (home / ".codex" / "config.toml").read_text()
    assert codex.startswith(CODEX_BEFORE.rstrip("\n"))  # the user's lines and comments as they were
    parsed = tomllib.loads(codex)
    assert parsed["mcp_servers"]["git-oxide"] == {"command": "git", "args": ["oxide", "mcp"]}
    assert parsed["mcp_servers"]["docs"]["command"] == "npx" and parsed["profiles"]["fast"]["model"] == "o4-mini"
    oc = json.loads((repo / "opencode.json").read_text())
    assert oc["mcp"]["git-oxide"] == OURS_OPENCODE and oc["model"] == "fake/fake-model"
    assert oc["mcp"]["docs"] == {"type": "local", "command": ["docs"]}
    assert not (home / ".claude" / ".claude.json").exists()  # portable: nothing per machine

    before = _files(repo, home)
    again = json.loads(oxide(repo, "init", "--mcp", "claude", "--mcp", "codex", "--mcp", "opencode",
                             "--json").stdout)
    assert {c["action"] for c in again["mcp"]} == {"unchanged"} and _files(repo, home) == before

    removed = oxide(repo, "init", "--mcp", "claude", "--mcp", "codex", "--mcp", "opencode", "--remove")
    assert "removed git oxide's MCP server for codex" in removed.stderr
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"docs": {"command": "docs"}}}
    assert tomllib.loads((home / ".codex" / "config.toml").read_text()) == tomllib.loads(CODEX_BEFORE)
    assert (home / ".codex" / "config.toml").read_text().rstrip("\n") == CODEX_BEFORE.rstrip("\n")
    assert "git-oxide" not in json.loads((repo / "opencode.json").read_text())["mcp"]


def test_a_file_that_held_only_ours_goes_with_it(repo: Path, isolated_env: Path) -> None:
    oxide(repo, "init", "--mcp", "claude", "--mcp", "opencode", "--mcp", "codex")
    assert (repo / ".mcp.json").exists() and (repo / "opencode.json").exists()
    oxide(repo, "init", "--mcp", "claude", "--mcp", "opencode", "--mcp", "codex", "--remove")
    assert not (repo / ".mcp.json").exists() and not (repo / "opencode.json").exists()
    assert "mcp_servers" not in tomllib.loads((isolated_env / ".codex" / "config.toml").read_text())


def test_dry_run_says_what_and_writes_nothing(repo: Path, isolated_env: Path) -> None:
    r = oxide(repo, "init", "--mcp", "claude", "--mcp", "codex", "--mcp", "opencode", "--dry-run")
    assert "would add git oxide's MCP server for claude in" in r.stderr and "(runs `git oxide mcp`)" in r.stderr
    assert _files(repo, isolated_env) == dict.fromkeys(("mcp", "opencode", "codex", "claude_state"))
    assert not (repo / ".git" / "oxide").exists()  # not even oxide's own folder
    bad = oxide(repo, "init", "--hooks", "--dry-run", check=False)
    assert bad.returncode == 2 and "--dry-run goes with --mcp" in bad.stderr


@pytest.mark.process
def test_without_git_oxide_on_path_the_entry_is_this_machines(repo: Path, isolated_env: Path) -> None:
    """The command then names this Python: Claude Code's local scope and OpenCode's global file,
    never the project's shared files; a shared entry of ours is taken out."""
    home = isolated_env
    oxide(repo, "init", "--mcp", "claude", "--mcp", "opencode")  # portable first, from PATH
    state = home / ".claude" / ".claude.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"numStartups": 3, "projects": {str(repo): {"allowedTools": ["Bash"]}}}))
    os.chmod(state, 0o600)
    env = {k: v for k, v in os.environ.items()}
    env["PATH"] = "/usr/bin:/bin"
    r = subprocess.run([sys.executable, "-m", "oxide_git", "init", "--mcp", "claude", "--mcp", "opencode",
                        "--json"], cwd=repo, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    changes = {(c["agent"], c["scope"]): c["action"] for c in json.loads(r.stdout)["mcp"]}
    assert changes == {("claude", "project"): "remove", ("claude", "local"): "add",
                       ("opencode", "project"): "remove", ("opencode", "local"): "add"}
    ours = [sys.executable, "-m", "oxide_git", "mcp"]
    data = json.loads(state.read_text())
    assert data["numStartups"] == 3 and data["projects"][str(repo)]["allowedTools"] == ["Bash"]
    assert data["projects"][str(repo)]["mcpServers"]["git-oxide"] == {
        "type": "stdio", "command": ours[0], "args": ours[1:], "env": {}}
    assert stat.S_IMODE(state.stat().st_mode) == 0o600  # Claude Code's own mode kept
    assert not (repo / ".mcp.json").exists() and not (repo / "opencode.json").exists()
    glob = json.loads((home / ".config" / "opencode" / "opencode.json").read_text())
    assert glob["mcp"]["git-oxide"] == {"type": "local", "command": ours}
    r = subprocess.run([sys.executable, "-m", "oxide_git", "init", "--mcp", "claude", "--remove"], cwd=repo,
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(state.read_text())
    assert data["projects"][str(repo)] == {"allowedTools": ["Bash"], "mcpServers": {}}


def test_files_it_cannot_edit_safely_are_left_as_they_are(repo: Path, isolated_env: Path) -> None:
    jsonc = repo / "opencode.jsonc"
    jsonc.write_text('{\n  // my comment\n  "model": "fake/fake-model",\n}\n')
    r = oxide(repo, "init", "--mcp", "opencode", check=False)
    assert r.returncode == 1 and "opencode.jsonc is not valid JSON" in r.stderr and "hint:" in r.stderr
    assert jsonc.read_text().startswith('{\n  // my comment') and not (repo / "opencode.json").exists()
    cfg = isolated_env / ".codex" / "config.toml"
    cfg.parent.mkdir()
    inline = 'mcp_servers = { git-oxide = { command = "old" } }\n'
    cfg.write_text(inline)
    r = oxide(repo, "init", "--mcp", "codex", check=False)
    assert r.returncode == 1 and "cannot change [mcp_servers.git-oxide]" in r.stderr
    assert cfg.read_text() == inline
    (repo / ".mcp.json").write_text("{not json")
    r = oxide(repo, "init", "--mcp", "claude", check=False)
    assert r.returncode == 1 and ".mcp.json is not valid JSON" in r.stderr
    assert (repo / ".mcp.json").read_text() == "{not json"
