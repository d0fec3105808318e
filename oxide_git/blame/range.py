"""`git oxide blame --range A..B`: who wrote the lines a range of commits added (a pull request's),
by agent and session, in Markdown for a CI step summary (``export --range`` includes it).

The lines counted are those of B that `git blame` gives to a commit of the range (the range's
commits as `git log A..B` lists them), in the files those commits changed; each is attributed as
``blame_file`` attributes it.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from oxide_git.blame.attribution import BadRevision, blame_file
from oxide_git.blame.calls import AGENT, BEFORE, EITHER, HUMAN
from oxide_git.git.repo import clean_git_env
from oxide_git.store import redact
from oxide_git.store.context import Context


@dataclass
class RangeSummary:
    range: str
    commits: int
    lines: int = 0
    by_who: dict[str, int] = field(default_factory=lambda: dict.fromkeys((AGENT, HUMAN, EITHER, BEFORE), 0))
    by_agent: dict[str, int] = field(default_factory=dict)
    by_model: dict[str, int] = field(default_factory=dict)  # "agent:model" (as Assisted-by says it) -> lines
    by_session: dict[str, dict[str, Any]] = field(default_factory=dict)  # short id -> agent, title, lines
    files: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"range": self.range, "commits": self.commits, "lines": self.lines,
                "agent": self.by_who[AGENT], "human": self.by_who[HUMAN],
                "agent_or_user": self.by_who[EITHER], "before_oxide": self.by_who[BEFORE],
                "by_agent": self.by_agent, "by_model": self.by_model,
                "by_session": self.by_session, "files": self.files}

    def markdown(self) -> str:
        def share(n: int) -> str:
            return f"{100 * n / self.lines:.1f}%" if self.lines else "-"

        out = [f"### Who wrote the lines of `{self.range}`", "",
               f"{self.lines} line(s) added by {self.commits} commit(s).", ""]
        if not self.lines:
            return "\n".join(out) + "\n"
        out += ["| written by | lines | share |", "|---|---:|---:|"]
        for agent, n in self.by_agent.items():
            out.append(f"| {_cell(agent)} (agent) | {n} | {share(n)} |")
        for key, label in ((HUMAN, "human"), (EITHER, "agent or user (cannot be told apart)"),
                           (BEFORE, "unknown (no checkpoint covers it)")):
            if self.by_who[key]:
                out.append(f"| {label} | {self.by_who[key]} | {share(self.by_who[key])} |")
        if self.by_model:
            out += ["", "| agent:model | lines | share |", "|---|---:|---:|"]
            out += [f"| {_cell(m)} | {n} | {share(n)} |" for m, n in self.by_model.items()]
        if self.by_session:
            out += ["", "| session | agent | title | lines |", "|---|---|---|---:|"]
            for sid, s in self.by_session.items():
                title = _cell(s.get("title") or "-")
                out.append(f"| `{sid}` | {_cell(s['agent'])} | {title} | {s['lines']} |")
        out += ["", "<details><summary>Files</summary>", "",
                "| file | lines | agent | human | agent or user | unknown |",
                "|---|---:|---:|---:|---:|---:|"]
        for f in self.files:
            out.append(f"| `{_cell(f['path'])}` | {f['lines']} | {f['agent']} | {f['human']} | "
                       f"{f['agent_or_user']} | {f['before_oxide']} |")
        out += ["", "</details>", ""]
        return "\n".join(out)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")[:80]


def _git(ctx: Context, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=ctx.repo.workdir, capture_output=True, text=True,
                       env=clean_git_env())
    if r.returncode != 0:
        raise BadRevision(f"cannot read the range: {r.stderr.strip().removeprefix('fatal: ')}",
                          hint="fetch the commits first, or check the range (A..B)")
    return r.stdout


def blame_range(ctx: Context, rng: str) -> RangeSummary:
    """Who wrote the lines the commits of ``rng`` (``A..B``) added."""
    if ".." not in rng:
        raise BadRevision(f"{rng} is not a range", hint="give A..B, e.g. origin/main..HEAD")
    start, _, end = rng.partition("...") if "..." in rng else rng.partition("..")
    end = end or "HEAD"
    commits = set(_git(ctx, "rev-list", f"{start or 'HEAD'}..{end}", "--").split())
    res = RangeSummary(rng, len(commits))
    if not commits:
        return res
    base = _git(ctx, "merge-base", start or "HEAD", end).strip()
    names = _git(ctx, "diff", "--no-renames", "--diff-filter=AM", "--name-only", "-z", base, end).split("\0")
    titles: dict[str, str | None] = {}
    r = redact.redactor_for(ctx)  # titles go where exports go: redacted the same way
    for path in sorted(n for n in names if n):
        b = blame_file(ctx, path, rev=end, commits=commits)
        mine = [ln for ln in b.lines if ln.commit in commits]
        if not mine:
            continue
        counts = {"agent": 0, "human": 0, "agent_or_user": 0, "before_oxide": 0}
        for ln in mine:
            res.lines += 1
            res.by_who[ln.who] = res.by_who.get(ln.who, 0) + 1
            counts[{AGENT: "agent", HUMAN: "human", EITHER: "agent_or_user"}.get(ln.who, "before_oxide")] += 1
            if ln.who == AGENT:
                res.by_agent[ln.agent or "?"] = res.by_agent.get(ln.agent or "?", 0) + 1
                model = f"{ln.agent or '?'}:{ln.model or 'unknown'}"
                res.by_model[model] = res.by_model.get(model, 0) + 1
                if ln.session_id:
                    if ln.session_id not in titles:
                        rows = ctx.index.query("SELECT title, first_prompt FROM sessions WHERE id=?",
                                               (ln.session_id,))
                        title = (rows[0][0] or rows[0][1]) if rows else None
                        titles[ln.session_id] = r.text(title, Counter()) if title and r else title
                    s = res.by_session.setdefault(b.id(ln.session_id) or ln.session_id, {
                        "agent": ln.agent, "title": titles[ln.session_id], "lines": 0})
                    s["lines"] += 1
        res.files.append({"path": path, "lines": len(mine), **counts})
    res.by_agent = dict(sorted(res.by_agent.items(), key=lambda kv: -kv[1]))
    res.by_model = dict(sorted(res.by_model.items(), key=lambda kv: -kv[1]))
    res.by_session = dict(sorted(res.by_session.items(), key=lambda kv: -kv[1]["lines"]))
    return res
