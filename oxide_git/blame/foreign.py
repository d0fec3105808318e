"""Other tools' attribution notes, for the committed lines oxide has no checkpoint for: a Git AI
authorship log on ``refs/notes/ai`` (git-ai, ``authorship/3.0.0``) or an Agent Trace record on
``refs/notes/agent-trace``. Their line numbers are those of the file in the noted commit (`git
blame`'s original line). `blame` says where such an answer comes from (``LineBlame.source``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oxide_git.blame.calls import AGENT, EITHER, HUMAN, Label
from oxide_git.git.refs import AGENT_TRACE_NOTES, AI_NOTES, read_raw

GIT_AI, AGENT_TRACE = "git-ai note", "agent-trace note"
_KIND = {"ai": AGENT, "human": HUMAN, "mixed": EITHER}


def parse_git_ai(text: str) -> tuple[dict[str, list[tuple[str, list[tuple[int, int]]]]], dict[str, Any]]:
    """({path: [(key, [(first, last)])]}, metadata) of an authorship log, as git-ai reads it."""
    lines = text.splitlines()
    cut = lines.index("---")  # ValueError: not an authorship log
    files: dict[str, list[tuple[str, list[tuple[int, int]]]]] = {}
    path: str | None = None
    for line in lines[:cut]:
        line = line.rstrip()
        if not line:
            continue
        if line.startswith("  "):
            key, _, spec = line[2:].partition(" ")
            if path is None or not spec:
                raise ValueError(f"not an attestation line: {line!r}")
            ranges = []
            for part in spec.split(","):
                if part:
                    a, _, b = part.partition("-")
                    ranges.append((int(a), int(b or a)))
            files[path].append((key, ranges))
        else:
            path = line[1:-1] if len(line) > 1 and line[0] == line[-1] == '"' else line
            files.setdefault(path, [])
    meta = json.loads("\n".join(lines[cut + 1:]))
    if not isinstance(meta, dict):
        raise ValueError("the metadata is not a JSON object")
    return files, meta


def git_ai_labels(text: str, path: str) -> dict[int, Label]:
    """{line: label} of ``path`` in a Git AI authorship log (latest entry wins, as git-ai reads)."""
    files, meta = parse_git_ai(text)
    out: dict[int, Label] = {}
    for key, ranges in files.get(path, []):
        if key.startswith("h_"):
            label = Label(HUMAN)
        else:
            table = meta.get("sessions") if key.startswith("s_") else meta.get("prompts")
            rec = (table or {}).get(key.split("::")[0]) or {}
            agent_id = rec.get("agent_id") or {}
            label = Label(AGENT, agent=agent_id.get("tool") or "agent", model=agent_id.get("model"))
        for a, b in ranges:
            out.update(dict.fromkeys(range(a, b + 1), label))
    return out


def agent_trace_labels(text: str, path: str) -> dict[int, Label]:
    """{line: label} of ``path`` in an Agent Trace record (a range's contributor over its
    conversation's); ``unknown`` says nothing."""
    rec = json.loads(text)
    out: dict[int, Label] = {}
    for f in rec.get("files") or []:
        if f.get("path") != path:
            continue
        for conv in f.get("conversations") or []:
            for r in conv.get("ranges") or []:
                c = r.get("contributor") or conv.get("contributor") or {}
                who = _KIND.get(str(c.get("type")))
                if who is None:
                    continue
                model = c.get("model_id")
                label = Label(who, agent=(model or "ai/").split("/")[0] if who != HUMAN else None,
                              model=model.split("/", 1)[-1] if model else None)
                out.update(dict.fromkeys(range(int(r["start_line"]), int(r["end_line"]) + 1), label))
    return out


class ForeignNotes:
    """The notes of both refs, read once per commit (nothing when neither ref exists)."""

    def __init__(self, repo: Any, common: Path) -> None:
        self.repo = repo  # its ``git`` (pygit2) is opened only when a ref exists
        self.refs = [(ref, src) for ref, src in ((AI_NOTES, GIT_AI), (AGENT_TRACE_NOTES, AGENT_TRACE))
                     if _exists(common, ref)]
        self._seen: dict[tuple[str, str], dict[int, tuple[Label, str]]] = {}

    def label(self, commit: str, path: str, line: int) -> tuple[Label, str] | None:
        """The label of ``line`` (in ``path`` as ``commit`` has it) and the note it came from."""
        if not self.refs:
            return None
        key = (commit, path)
        if key not in self._seen:
            got: dict[int, tuple[Label, str]] = {}
            for ref, src in reversed(self.refs):  # the Git AI log wins where both say something
                try:
                    text = self.repo.git.lookup_note(commit, ref).message
                    labels = git_ai_labels(text, path) if src == GIT_AI else agent_trace_labels(text, path)
                except Exception:  # no note, or one that does not parse: it says nothing
                    continue
                got.update({n: (lb, src) for n, lb in labels.items()})
            self._seen[key] = got
        return self._seen[key].get(line)


def _exists(common: Path, ref: str) -> bool:
    try:
        return read_raw(common, ref) is not None
    except Exception:
        return False
