"""Where Gemini CLI keeps a project's sessions: ``$GEMINI_CLI_HOME/.gemini/tmp/<slug>/chats/``.

``projects.json`` maps a project folder to its slug; each slug folder holds ``.project_root``
(the folder it belongs to), which is what Gemini itself trusts when the registry lacks a folder.
Releases before the slugs used ``tmp/<sha256 of the folder>/``, one ``.json`` per session, which
0.61 still reads. A sub-agent's file is ``chats/<parent session id>/<its id>.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from oxide_git.agents import AgentEnv, jsonline
from oxide_git.core.model import from_iso, session_id_for

PROJECT_ROOT = ".project_root"


def gemini_dir(env: AgentEnv) -> Path:
    home = env.environ.get("GEMINI_CLI_HOME")
    return (Path(home).expanduser() if home else env.home) / ".gemini"


def project_hash(folder: str) -> str:
    return hashlib.sha256(folder.encode()).hexdigest()


def _registry(root: Path) -> dict[str, str]:
    try:
        data = json.loads((root / "projects.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in projects.items()} if isinstance(projects, dict) else {}


def owner(folder: Path) -> str | None:
    """The project folder a slug folder belongs to (its ``.project_root``)."""
    try:
        return (folder / PROJECT_ROOT).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeError):
        return None


def project_dirs(env: AgentEnv) -> dict[Path, str]:
    """This project's folders under ``tmp/`` -> the project folder each belongs to."""
    tmp = gemini_dir(env) / "tmp"
    out: dict[Path, str] = {}
    for path, slug in _registry(gemini_dir(env)).items():
        if env.belongs(path) and (tmp / slug).is_dir() and owner(tmp / slug) in (None, path):
            out[tmp / slug] = path
    try:
        folders = sorted(p for p in tmp.iterdir() if p.is_dir())
    except OSError:
        folders = []
    for folder in folders:
        root = owner(folder)
        if root is not None and env.belongs(root):
            out.setdefault(folder, root)
    for w in env.worktrees:  # the sha256-named folders of older releases
        legacy = tmp / project_hash(str(w))
        if legacy.is_dir():
            out.setdefault(legacy, str(w))
    return out


def session_files(folder: Path) -> list[Path]:
    """A project folder's session files, a sub-agent's after its parent's; a ``.json`` that a
    resume turned into a ``.jsonl`` of the same name is left out (Gemini reads the newer one)."""
    chats = folder / "chats"
    try:
        names = sorted(os.listdir(chats))
    except OSError:
        return []
    have = set(names)
    out: list[Path] = []
    for n in names:
        newer = n + "l" in have  # a .json the CLI went on with as .jsonl
        if n.startswith("session-") and (n.endswith(".jsonl") or (n.endswith(".json") and not newer)):
            out.append(chats / n)
    for n in names:
        side = chats / n
        if not n.startswith("session-") and side.is_dir():
            out.extend(sorted(p for p in side.glob("*.jsonl") if p.is_file()))
    return out


def cwd_of(path: Path, project: str | None, env: AgentEnv | None) -> str | None:
    """The project folder of a session file: its slug folder's owner, else (an old sha256 folder)
    the worktree whose hash names it."""
    folder = path.parent.parent if path.parent.name == "chats" else path.parent.parent.parent
    root = owner(folder)
    if root:
        return root
    if env is not None:
        for w in env.worktrees:
            if project_hash(str(w)) in (folder.name, project):
                return str(w)
    return None


def slugify(text: str) -> str:
    return re.sub(r"^-|-$", "", re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", text.lower()))) or "project"


def slug_for(env: AgentEnv, cwd: str) -> tuple[Path, bool]:
    """The slug folder Gemini uses for ``cwd`` (an existing one, else a free name, as Gemini claims
    one) and whether it has to be made."""
    root = gemini_dir(env)
    tmp = root / "tmp"
    known = _registry(root)
    slug = known.get(cwd)
    if slug and owner(tmp / slug) in (None, cwd):
        return tmp / slug, not (tmp / slug / PROJECT_ROOT).exists()
    for folder, path in project_dirs(env).items():
        if path == cwd and folder.name != project_hash(cwd):
            return folder, False
    base = slugify(os.path.basename(cwd) or "project")
    taken = set(known.values())
    n = 0
    while True:
        name = base if n == 0 else f"{base}-{n}"
        n += 1
        if name in taken or (owner(tmp / name) not in (None, cwd)):
            continue
        return tmp / name, owner(tmp / name) is None


def parent_link(chats: Path, parent: str, agent_id: str) -> tuple[str | None, str | None]:
    """A sub-agent's parent session (its oxide id, from the parent's own file) and the parent's
    ``invoke_agent`` call that ran it (the tool call whose ``agentId`` it is)."""
    needle = f'"agentId":"{agent_id}"'.encode()
    for f in sorted(chats.glob(f"session-*-{parent[:8]}.jsonl")):
        try:
            with f.open("rb") as fh:
                head = jsonline.loads(fh.readline())
                call = None
                for raw in fh:
                    if needle in raw:
                        call = _call_of(raw, agent_id) or call
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(head, dict) and head.get("sessionId") == parent:
            start = head.get("startTime")
            return session_id_for("gemini", parent, from_iso(start) if isinstance(start, str) else None), call
    return None, None


def _call_of(raw: bytes, agent_id: str) -> str | None:
    try:
        obj = jsonline.loads(raw)
    except (ValueError, RecursionError):
        return None
    for tc in obj.get("toolCalls") or [] if isinstance(obj, dict) else []:
        if isinstance(tc, dict) and tc.get("agentId") == agent_id and isinstance(tc.get("id"), str):
            return str(tc["id"])
    return None
