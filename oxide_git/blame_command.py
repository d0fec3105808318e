"""`git oxide blame`'s output (text like `git blame`'s, porcelain, JSON, summary) and its plain
form run without click: `git blame` of a long history is the command's critical path, and
click's import alone costs more than a third of what git takes (``entry`` tries ``plain``
first; whatever it does not take, click parses)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .model import ago

_SHOWN = {"human": "human", "agent or user": "agent or user", "before oxide": "before oxide"}


def line_range(value: str) -> tuple[int, int] | None:
    """``START,END``, ``START,+COUNT`` or ``START`` (to the end) as (first, last); None if not."""
    first, sep, last = value.partition(",")
    try:
        start = int(first)
        end = (1 << 31) if not sep or not last else (start + int(last[1:]) - 1 if last.startswith("+")
                                                     else int(last))
    except ValueError:
        return None
    return (start, end) if 1 <= start <= end else None


def text(result: Any, now_ms: int) -> str:
    rows = []
    for ln in result.lines:
        ident = result.id(ln.session_id) or (result.id(ln.commit) if ln.commit else None) or "-"
        shown = (ln.agent or "agent") if ln.who == "agent" else _SHOWN.get(ln.who, ln.who)
        rows.append((ident, shown, ago(ln.when_ms, now_ms) if ln.when_ms else "-", str(ln.number), ln.text))
    if not rows:
        return ""
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    return "".join(f"{a:<{w[0]}} ({b:<{w[1]}} {c:>{w[2]}} {d:>{w[3]}}) {t}\n" for a, b, c, d, t in rows)


def porcelain(result: Any) -> str:
    out = []
    for ln in result.lines:
        out.append(f"line {ln.number}\nwho {ln.who}\n")
        for key, value in (("session", ln.session_id), ("message", ln.message_id), ("agent", ln.agent),
                           ("model", ln.model), ("commit", ln.commit), ("checkpoint", ln.checkpoint),
                           ("before-checkpoint", ln.before_checkpoint), ("when", ln.when_ms)):
            if value is not None:
                out.append(f"{key} {value}\n")
        out.append(f"\t{ln.text}\n")
    return "".join(out)


def summary_text(s: dict[str, Any]) -> str:
    total = s["lines"] or 1

    def pct(n: int) -> str:
        return f"{100 * n / total:5.1f}%"

    agents = ", ".join(f"{a} {n}" for a, n in s["by_agent"].items())
    out = [f"{s['path']}: {s['lines']} line(s)",
           f"  agent          {s['agent']:>6}  {pct(s['agent'])}" + (f"  ({agents})" if agents else "")]
    for key, label in (("human", "human"), ("agent_or_user", "agent or user"),
                       ("before_oxide", "before oxide")):
        out.append(f"  {label:<13}  {s[key]:>6}  {pct(s[key])}")
    out += [f"  session {sid} ({d['agent']}): {d['lines']}" for sid, d in s["by_session"].items()]
    return "\n".join(out) + "\n"


def json_text(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n"


def render(result: Any, form: str, now_ms: int) -> str:
    """The result as ``form`` (text, porcelain, json, summary, summary-json) prints it."""
    if form in ("summary", "summary-json"):
        from .blame import summary

        s = summary(result)
        return json_text(s) if form == "summary-json" else summary_text(s)
    if form == "json":
        return json_text(result.to_json())
    return porcelain(result) if form == "porcelain" else text(result, now_ms)


def form_of(porcelain: bool, as_json: bool, summary: bool) -> str | None:
    """The output form the flags ask for; None when they clash."""
    if porcelain and (as_json or summary):
        return None
    if summary:
        return "summary-json" if as_json else "summary"
    return "json" if as_json else "porcelain" if porcelain else "text"


def plain(argv: list[str]) -> int | None:
    """The exit status of ``blame ARGV`` run here, or None when ARGV is not the plain form
    (FILE with -L, --rev, --porcelain, --json, --summary): the click command runs it then."""
    path = rev = None
    lines = None
    flags: set[str] = set()
    args = iter(argv)
    for a in args:
        if a in ("--porcelain", "--json", "--summary"):
            flags.add(a)
        elif a in ("-L", "--rev"):
            value = next(args, None)
            if value is None:
                return None
            if a == "-L":
                lines = line_range(value)
                if lines is None:
                    return None  # click says what is wrong
            else:
                rev = value
        elif a.startswith("-") or path is not None:
            return None
        else:
            path = a
    form = form_of("--porcelain" in flags, "--json" in flags, "--summary" in flags)
    if path is None or form is None:
        return None

    def work() -> None:
        from .blame import blame_file
        from .context import for_process

        ctx = for_process()
        out = render(blame_file(ctx, os.path.abspath(path), rev=rev, lines=lines), form, ctx.now_ms)
        sys.stdout.write(out)

    from . import failure

    return failure.guarded(work)
