"""`git oxide init --mcp claude|codex|opencode [--remove] [--dry-run]`: `git oxide mcp` registered in
the agent's own configuration, as the agent's own `mcp add` writes it (checked against the pinned
releases: Claude Code 2.1.332, Codex 0.171.0, OpenCode 1.18.33), every other entry kept.

The server runs `git oxide mcp` from PATH, so the entry is the same on every machine and goes where
the agent keeps a project's shared settings: Claude Code's `.mcp.json` (`claude mcp add --scope
project`), OpenCode's `opencode.json` at the top of the worktree. Only where `git-oxide` is not on
PATH does the entry name this machine's Python, and then it goes to a per-machine file instead:
Claude Code's local scope (`projects[<worktree>].mcpServers` in `~/.claude.json`, or
`$CLAUDE_CONFIG_DIR/.claude.json`), OpenCode's global config. Codex has one place, the user's own
`$CODEX_HOME/config.toml` (`[mcp_servers.git-oxide]`, as `codex mcp add` writes it). An entry of
ours in the other place is taken out. Files are written whole and atomically, keeping their mode.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oxide_git.core.errors import OxideError

NAME = "git-oxide"
PORTABLE = ["git", "oxide", "mcp"]
AGENTS = ("claude", "codex", "opencode")


@dataclass
class Change:
    agent: str
    path: str
    action: str  # add | update | remove | unchanged
    scope: str  # project (shared) | local (this machine) | user
    command: list[str]
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def describe(self) -> str:
        verb = {"add": "add", "update": "update", "remove": "remove", "unchanged": "keep"}[self.action]
        verb = ("would " + verb) if self.dry_run and self.action != "unchanged" else {
            "add": "added", "update": "updated", "remove": "removed", "unchanged": "kept"}[self.action]
        what = f"git oxide's MCP server for {self.agent}"
        where = {"project": "shared by the project", "local": "this machine's",
                 "user": "your own"}[self.scope]
        run = f" (runs `{' '.join(self.command)}`)" if self.action != "remove" else ""
        return f"{verb} {what} in {self.path} ({where}){run}"


def command(python: str | None = None) -> tuple[list[str], bool]:
    """The server's command and whether it is portable (``git oxide`` from PATH)."""
    if python is None and shutil.which("git-oxide"):
        return list(PORTABLE), True
    return [python or sys.executable, "-m", "oxide_git", "mcp"], False


# files ----------------------------------------------------------------------------------------

def _load_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        hint = ("it has comments or trailing commas, which git oxide does not rewrite: add the entry "
                "by hand, or run the agent's own `mcp add`" if path.suffix == ".jsonc"
                else "fix it, then run this again")
        raise OxideError(f"{path} is not valid JSON: {e}", hint=hint) from e
    if not isinstance(data, dict):
        raise OxideError(f"{path} is not a JSON object", hint="fix it, then run this again")
    return data


def _write(path: Path, text: str) -> None:
    """``text`` into ``path`` atomically (temp file + rename), keeping the file's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    tmp = path.with_name(f".{path.name}.oxide-tmp")
    tmp.write_text(text, encoding="utf-8")
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


def _json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _set_entry(path: Path, keys: list[str], entry: dict[str, Any] | None, *, dry_run: bool,
               drop_empty: bool = True, unlink_empty: bool = False) -> str:
    """Put ``entry`` (None: take it out) at ``keys`` + NAME in the JSON file; the action done.
    ``drop_empty``: a table our key was the last of goes too; ``unlink_empty``: and so does a file
    left holding nothing (a project file that only we wrote)."""
    if entry is None and not path.exists():
        return "unchanged"
    data = _load_json(path)
    node = data
    for k in keys:
        nxt = node.get(k)
        if nxt is None:
            if entry is None:
                return "unchanged"
            nxt = node[k] = {}
        if not isinstance(nxt, dict):
            raise OxideError(f"{path}: {'.'.join(keys)} is not a JSON object",
                             hint="fix it, then run this again")
        node = nxt
    old = node.get(NAME)
    if old == entry:
        return "unchanged"
    action = "remove" if entry is None else "add" if old is None else "update"
    if entry is None:
        node.pop(NAME, None)
        if drop_empty and not node and keys:  # our key was the last: leave no empty "mcpServers": {}
            parent = data
            for k in keys[:-1]:
                parent = parent[k]
            parent.pop(keys[-1], None)
    else:
        node[NAME] = entry
    if dry_run:
        return action
    if unlink_empty and not data:
        path.unlink()
    else:
        _write(path, _json_text(data))
    return action


# Claude Code --------------------------------------------------------------------------------

def _claude_state(environ: dict[str, str], home: Path) -> Path:
    conf = environ.get("CLAUDE_CONFIG_DIR")
    return Path(conf) / ".claude.json" if conf else home / ".claude.json"


def configure_claude(workdir: Path, environ: dict[str, str], home: Path, *, remove: bool = False,
                     dry_run: bool = False, python: str | None = None) -> list[Change]:
    argv, portable = command(python)
    entry = {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}
    shared, state = workdir / ".mcp.json", _claude_state(environ, home)
    local_keys = ["projects", str(workdir), "mcpServers"]
    out = []
    for path, keys, scope, ours in ((shared, ["mcpServers"], "project", portable),
                                    (state, local_keys, "local", not portable)):
        want = entry if ours and not remove else None
        # Claude Code keeps its own state in ~/.claude.json: our key alone changes, never an
        # emptied project entry of its (drop_empty only for .mcp.json).
        action = _set_entry(path, keys, want, dry_run=dry_run, drop_empty=path == shared,
                            unlink_empty=path == shared)
        if action != "unchanged" or want is not None:
            out.append(Change("claude", str(path), action, scope, argv, dry_run))
    return out


# Codex --------------------------------------------------------------------------------------

def _codex_config(environ: dict[str, str], home: Path) -> Path:
    return Path(environ.get("CODEX_HOME") or home / ".codex") / "config.toml"


def _toml_str(s: str) -> str:
    return json.dumps(s)  # a TOML basic string is a JSON string for what we write


def _is_our_table(header: str) -> bool:
    """``[mcp_servers.git-oxide]`` or one of its sub-tables, however quoted."""
    inner = header.strip()[1:-1].strip()
    parts = [p.strip().strip('"').strip("'") for p in inner.split(".")]
    return parts[:2] == ["mcp_servers", NAME]


def configure_codex(environ: dict[str, str], home: Path, *, remove: bool = False, dry_run: bool = False,
                    python: str | None = None) -> list[Change]:
    """``[mcp_servers.git-oxide]`` in the user's config.toml, replaced where it was or appended."""
    import tomllib

    path = _codex_config(environ, home)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise OxideError(f"{path} is not valid TOML: {e}", hint="fix it, then run this again") from e
    argv, _portable = command(python)  # config.toml is per user: either form is safe there
    want = None if remove else {"command": argv[0], "args": argv[1:]}
    old = (before.get("mcp_servers") or {}).get(NAME)
    if old == want or (old is None and want is None):
        return [] if want is None else [Change("codex", str(path), "unchanged", "user", argv, dry_run)]
    lines = text.splitlines()
    kept: list[str] = []
    at, skipping = None, False
    for line in lines:
        s = line.strip()
        if s.startswith("[") and not s.startswith("[[") and s.endswith("]"):
            skipping = _is_our_table(s)
            if skipping and at is None:
                at = len(kept)
        if not skipping:
            kept.append(line)
    block = [] if want is None else [f"[mcp_servers.{NAME}]", f"command = {_toml_str(argv[0])}",
                                     f"args = [{', '.join(_toml_str(a) for a in argv[1:])}]"]
    if at is None:
        at = len(kept)
        if block and kept and kept[-1].strip():
            block.insert(0, "")
    elif block and at < len(kept):
        block.append("")
    new_text = "\n".join(kept[:at] + block + kept[at:]).rstrip("\n") + "\n"
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    expected = {**before, "mcp_servers": {k: v for k, v in (before.get("mcp_servers") or {}).items()
                                          if k != NAME}}
    if want is not None:
        expected["mcp_servers"][NAME] = want
    if not expected["mcp_servers"]:
        expected.pop("mcp_servers")
    if after != expected:  # defined some other way (an inline table, dotted keys): not ours to edit
        raise OxideError(f"cannot change [mcp_servers.{NAME}] in {path} safely (it is not a table of "
                         "its own there)",
                         hint="edit it by hand, or use `codex mcp add` / `codex mcp remove`")
    if not dry_run:
        _write(path, new_text)
    action = "remove" if want is None else "add" if old is None else "update"
    return [Change("codex", str(path), action, "user", argv, dry_run)]


# OpenCode -----------------------------------------------------------------------------------

def _opencode_file(folder: Path, *, project: bool) -> Path:
    """The config file OpenCode's own `mcp add` picks in ``folder``: the first that exists, else
    opencode.json."""
    names = ["opencode.json", "opencode.jsonc"]
    if project:
        names += [".opencode/opencode.json", ".opencode/opencode.jsonc"]
    return next((folder / n for n in names if (folder / n).exists()), folder / names[0])


def configure_opencode(workdir: Path, environ: dict[str, str], home: Path, *, remove: bool = False,
                       dry_run: bool = False, python: str | None = None) -> list[Change]:
    argv, portable = command(python)
    entry = {"type": "local", "command": argv}
    config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "opencode"
    out = []
    for path, scope, ours in ((_opencode_file(workdir, project=True), "project", portable),
                              (_opencode_file(config_home, project=False), "local", not portable)):
        want = entry if ours and not remove else None
        data = _load_json(path) if path.exists() else {}
        v2 = isinstance(data.get("mcp"), dict) and isinstance(data["mcp"].get("servers"), dict)
        keys = ["mcp", "servers"] if v2 else ["mcp"]  # a file already in OpenCode's newer layout
        action = _set_entry(path, keys, want, dry_run=dry_run, unlink_empty=scope == "project")
        if action != "unchanged" or want is not None:
            out.append(Change("opencode", str(path), action, scope, argv, dry_run))
    return out


def configure(ctx: Any, agent: str, *, remove: bool = False, dry_run: bool = False) -> list[Change]:
    environ, home = dict(ctx.environ), ctx.home
    if agent == "claude":
        return configure_claude(ctx.repo.workdir, environ, home, remove=remove, dry_run=dry_run)
    if agent == "codex":
        return configure_codex(environ, home, remove=remove, dry_run=dry_run)
    if agent == "opencode":
        return configure_opencode(ctx.repo.workdir, environ, home, remove=remove, dry_run=dry_run)
    raise OxideError(f"no MCP configuration for {agent}", hint="agents: " + ", ".join(AGENTS))
