"""What an import did, per file and in all: sessions, messages, problems, and the record types the
importers did not know (format drift), which the import cursors keep for `doctor`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class FileReport:
    agent: str
    path: str
    state: str  # new, grown, changed, unchanged, failed
    sessions: list[str] = field(default_factory=list)
    messages: int = 0
    problems: list[str] = field(default_factory=list)
    # (record type, agent version) -> how many records of a type the importer does not know
    unknown: dict[tuple[str, str | None], int] = field(default_factory=dict)
    unknown_at_resume: dict[tuple[str, str | None], int] = field(default_factory=dict)
    held: list[str] = field(default_factory=list)  # what oxide wrote itself, with nothing new yet
    # Read before as another agent's file (`import --agent` named the wrong one before it was
    # refused): that agent, and the sessions that import made, left in the store for `rm`.
    earlier_agent: str | None = None
    earlier_sessions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        del d["unknown_at_resume"], d["held"]
        d["unknown"] = [{"type": k, "version": v, "count": n} for (k, v), n in self.unknown.items()]
        return d


@dataclass
class ImportReport:
    files: list[FileReport] = field(default_factory=list)
    dry_run: bool = False

    @property
    def messages(self) -> int:
        return sum(f.messages for f in self.files)

    @property
    def sessions(self) -> int:
        return len({s for f in self.files for s in f.sessions})

    @property
    def problems(self) -> list[str]:
        return [p for f in self.files for p in f.problems]

    def unknown(self) -> dict[tuple[str, str, str | None], int]:
        """(agent, record type, agent version) -> count, over every file."""
        out: dict[tuple[str, str, str | None], int] = {}
        for f in self.files:
            for (kind, version), n in f.unknown.items():
                key = (f.agent, kind, version)
                out[key] = out.get(key, 0) + n
        return out

    def warnings(self) -> list[str]:
        """The problems as the user reads them: a file's lines that failed alike (a binary or
        random file: hundreds of "not JSON") make one line with their count, not one each.
        ``problems`` keeps every line (``--json``)."""
        out: list[str] = []
        for f in self.files:
            lines: dict[str, list[str]] = {}
            order: list[str] = []
            for p in f.problems:
                mine = p.startswith(f.path + ":")
                at, _, what = p[len(f.path) + 1:].partition(": ") if mine else ("", "", "")
                if at.isdigit() and what:
                    if what not in lines:
                        order.append(what)
                    lines.setdefault(what, []).append(at)
                else:
                    order.append(p)
            for key in order:
                at_lines = lines.get(key)
                if at_lines is None:
                    out.append(key)
                elif len(at_lines) == 1:
                    out.append(f"{f.path}:{at_lines[0]}: {key}")
                else:
                    shown = ", ".join(at_lines[:3]) + (", …" if len(at_lines) > 3 else "")
                    out.append(f"{f.path}: {key} ({len(at_lines)} lines: {shown})")
        return out + self.drift_warnings()

    def earlier_warnings(self) -> list[str]:
        """One line per file read before as another agent's: what became of what that made."""
        out = []
        for f in self.files:
            if f.earlier_agent is None:
                continue
            ids, n = f.earlier_sessions, len(f.earlier_sessions)
            if n == 1:
                left = (f"; the {f.earlier_agent} session made then is left as it was "
                        f"(`git oxide rm {ids[0]}` removes it)")
            else:
                left = (f"; the {n} {f.earlier_agent} sessions made then are left as they were "
                        f"(`git oxide rm ID` removes one: {', '.join(ids)})" if n else "")
            out.append(f"{f.path} was imported before as {f.earlier_agent}'s, now as {f.agent}'s{left}")
        return out

    def drift_warnings(self) -> list[str]:
        """One line per record type no importer knows: format drift is never silent."""
        out = []
        for (agent, kind, version), n in sorted(self.unknown().items(), key=lambda x: (x[0][0], x[0][1])):
            what = "record" if n == 1 else "records"
            made = f" ({version})" if version else ""
            out.append(f"{n} {agent} {what} of unknown type '{kind}'{made} kept as other parts")
        return out


def count_unknown(cur: dict[str, Any] | None, report: FileReport) -> dict[str, list[list[Any]]]:
    """The file's unknown record types as its cursor keeps them (``doctor`` sums them), and
    ``report.unknown`` made what this import added. A file that grew is read again from the last
    restart point, so the counts are kept both at that point and at the end of what was read."""
    def load(key: str) -> dict[tuple[str, str | None], int]:
        return {(k, v): int(n) for k, v, n in (cur or {}).get("state", {}).get(key, [])}

    def dump(c: dict[tuple[str, str | None], int]) -> list[list[Any]]:
        return [[k, v, n] for (k, v), n in sorted(c.items(), key=lambda x: x[0][0]) if n]

    base, before = load("unknown_at_resume"), load("unknown")
    at_resume = {k: base.get(k, 0) + report.unknown_at_resume.get(k, 0)
                 for k in base.keys() | report.unknown_at_resume.keys()}
    total = {k: base.get(k, 0) + report.unknown.get(k, 0) for k in base.keys() | report.unknown.keys()}
    report.unknown = {k: n - before.get(k, 0) for k, n in total.items() if n > before.get(k, 0)}
    return {"unknown": dump(total), "unknown_at_resume": dump(at_resume)}
