"""The files `git oxide import PATH...` names, and the agent that reads each.

With ``--agent``, a folder is searched for that agent's files (its ``FILE_PATTERNS`` or
``expand_dir``), and a file that looks like another agent's (``agents.recognise``) is refused
before anything is read into the store: a Claude Code transcript given as a Codex rollout would
otherwise become a one-message Codex session. Without ``--agent``, each file's agent is told from
its content, and a folder keeps the files some agent recognises as its own.
"""

from __future__ import annotations

from pathlib import Path

from oxide_git.agents import AGENT_NAMES, file_patterns
from oxide_git.agents import agent as agent_module
from oxide_git.agents.recognise import instead, kind, recognise
from oxide_git.core.errors import OxideError, Refused


def expand(agent: str, paths: list[Path]) -> list[tuple[str, Path]]:
    """Files given on the command line: folders are searched for the agent's files."""
    patterns = file_patterns(agent)
    expand_dir = getattr(agent_module(agent), "expand_dir", None)
    out: list[tuple[str, Path]] = []
    for p in paths:
        if p.is_dir():
            listed = expand_dir(p) if expand_dir else None
            if listed is not None:
                out += [(agent, f) for f in listed]
                continue
            for pat in patterns:
                out += [(agent, f) for f in sorted(p.rglob(pat)) if f.is_file()]
        elif p.exists():
            out.append((agent, p))
        else:
            raise OxideError(f"{p}: no such file or directory")
    return out


def files(agent: str | None, paths: list[Path]) -> list[tuple[str, Path]]:
    """(agent, file) for every file ``paths`` name: of ``agent``, or of the agent each looks like."""
    if agent is not None:
        items = expand(agent, paths)
        _refuse_others(agent, items)
        return items
    out: list[tuple[str, Path]] = []
    for p in paths:
        if p.is_dir():
            out += _recognised_in(p)
        elif p.exists():
            out.append((_agent_of(p), p))
        else:
            raise OxideError(f"{p}: no such file or directory")
    return out


def _refuse_others(agent: str, items: list[tuple[str, Path]]) -> None:
    """Refused: a file that looks like another agent's and not like ``agent``'s (one that looks
    like none, a format no importer knows yet, is read as ``agent``'s: its importer says what it
    could not read)."""
    wrong: list[tuple[Path, str]] = []
    for _a, f in items:
        seen = instead(agent, f)
        if seen:
            wrong.append((f, seen[0]))
    if not wrong:
        return
    f, other = wrong[0]
    more = f" ({len(wrong) - 1} more file(s) like it)" if len(wrong) > 1 else ""
    raise Refused(f"{f}: this looks like {kind(other)}, not {kind(agent)}{more}; nothing was imported",
                  hint=f"--agent {other}, or leave --agent out: the agent is told from each file")


def _agent_of(path: Path) -> str:
    seen = recognise(path)
    if len(seen) == 1:
        return seen[0]
    if seen:
        raise OxideError(f"{path}: this looks like {' and like '.join(kind(a) for a in seen)}",
                         hint="name the agent: git oxide import --agent NAME FILE")
    raise OxideError(f"{path}: not a transcript of an agent git oxide knows ({', '.join(AGENT_NAMES)})",
                     hint="if an agent wrote it, name it: git oxide import --agent NAME FILE")


def _recognised_in(folder: Path) -> list[tuple[str, Path]]:
    """The files in ``folder`` some agent would import there (``expand``) and recognises as its own."""
    candidates: dict[Path, list[str]] = {}
    for name in AGENT_NAMES:
        for _a, f in expand(name, [folder]):
            candidates.setdefault(f, []).append(name)
    out: list[tuple[str, Path]] = []
    for f, names in candidates.items():
        seen = recognise(f, names)
        if seen:
            out.append((seen[0], f))
    return out
