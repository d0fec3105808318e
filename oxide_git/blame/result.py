"""What `git oxide blame` answers: each line's ``LineBlame`` (who wrote it, in which session, turn
and checkpoint), the file's ``BlameResult`` with ids as people type them and as JSON, and the
``summary`` of its lines by agent, by session, and yours.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from oxide_git.blame.calls import AGENT, BEFORE, EITHER, HUMAN

WHO = (AGENT, HUMAN, EITHER, BEFORE)


class LineBlame(NamedTuple):
    number: int  # 1-based, in the blamed version
    text: str
    who: str  # agent | human | agent or user | before oxide
    session_id: str | None = None
    message_id: str | None = None  # the prompt of the turn that wrote it
    agent: str | None = None
    model: str | None = None
    commit: str | None = None  # the commit that brought it (None: not committed)
    checkpoint: str | None = None  # the first checkpoint holding it (None: none yet)
    when_ms: int | None = None
    before_checkpoint: str | None = None  # the last checkpoint without it (rewind there to undo it)
    source: str | None = None  # another tool's note it comes from (``blame_foreign``), else oxide's own


class BlameResult:
    """A file's lines, blamed (``short``: full id -> as people type it)."""

    def __init__(self, path: str, rev: str | None, lines: list[LineBlame],
                 short: dict[str, str] | None = None, commit_short: Any = None) -> None:
        self.path, self.rev, self.lines = path, rev, lines
        self.short: dict[str, str] = short if short is not None else {}
        self._commit_short = commit_short
        self.after_now = False  # a call it read is dated after now
        self.missing: dict[str, Any] | None = None  # checkpoints lines need, not here (``attribution``)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlameResult) and (self.path, self.rev, self.lines, self.short) == (
            other.path, other.rev, other.lines, other.short)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        return (f"BlameResult(path={self.path!r}, rev={self.rev!r}, lines={self.lines!r}, "
                f"short={self.short!r})")

    def id(self, full: str | None) -> str | None:
        """``full`` as people type it: a session's or checkpoint's shortest unique prefix, a
        commit's abbreviation as git makes it (worked out when first asked for)."""
        if full is None:
            return None
        got = self.short.get(full)
        if got is None and self._commit_short is not None:  # not a session's or checkpoint's: a commit
            got = self.short[full] = self._commit_short(full)
        return got or full

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: ids as `list` and `show` print them (shortest unique prefixes), times ISO."""
        rows = []
        for ln in self.lines:
            d = ln._asdict()
            for k in ("session_id", "checkpoint", "before_checkpoint", "commit"):
                d[k] = self.id(d[k])
            d["when"] = _iso(ln.when_ms)
            rows.append(d)
        return {"path": self.path, "rev": self.rev, "lines": rows, "summary": summary(self),
                "checkpoints_missing": self.missing}


def missing_hint(missing: dict[str, Any]) -> str:
    """The hint `blame` prints on stderr when ``BlameResult.missing`` says lines cannot be told."""
    if missing["checkpoints"]:
        what = (f"{missing['lines']} line(s) come from commits whose notes name "
                f"{missing['checkpoints']} checkpoint(s) this clone does not have: who wrote them "
                "cannot be told without them")
    else:
        what = ("this clone has sessions but no checkpoints: who wrote a line cannot be told "
                "without them (`before oxide` only says no checkpoint here covers it)")
    return f"hint: {what}; {missing['hint']}\n"


def _iso(ms: int | None) -> str | None:
    from oxide_git.core.model import to_iso

    return to_iso(ms)


def summary(result: BlameResult) -> dict[str, Any]:
    """Lines by agent, by session, written by you (human), and unknown (agent or user, before
    oxide)."""
    by_agent: dict[str, int] = {}
    by_session: dict[str, dict[str, Any]] = {}
    counts = dict.fromkeys(WHO, 0)
    for ln in result.lines:
        counts[ln.who] = counts.get(ln.who, 0) + 1
        if ln.who == AGENT:
            name = ln.agent or "?"
            by_agent[name] = by_agent.get(name, 0) + 1
            if ln.session_id:
                s = by_session.setdefault(result.id(ln.session_id) or "", {"agent": name, "lines": 0})
                s["lines"] += 1
    return {
        "path": result.path, "lines": len(result.lines),
        "agent": counts[AGENT], "by_agent": dict(sorted(by_agent.items(), key=lambda kv: -kv[1])),
        "by_session": dict(sorted(by_session.items(), key=lambda kv: -kv[1]["lines"])),
        "human": counts[HUMAN], "agent_or_user": counts[EITHER], "before_oxide": counts[BEFORE],
        "unknown": counts[EITHER] + counts[BEFORE],
    }
