"""`git oxide blame`'s output (text like `git blame`'s, porcelain, JSON, summary) and its plain
form run without click: `git blame` of a long history is the command's critical path, and
click's import alone costs more than a third of what git takes (``entry`` tries ``plain``
first; whatever it does not take, click parses)."""

from __future__ import annotations

import os
import sys
from typing import Any

from oxide_git.blame.cache import form_of, format_text, line_range

__all__ = ["form_of", "line_range", "plain", "render"]
_SHOWN = {"human": "human", "agent or user": "agent or user", "before oxide": "before oxide"}


def text_rows(result: Any) -> list[tuple[str, str, int | None, str, str]]:
    """The text form's rows: (id, who, when, line number, line); ages are worked out as printed."""
    rows = []
    for ln in result.lines:
        ident = result.id(ln.session_id) or (result.id(ln.commit) if ln.commit else None) or "-"
        shown = (ln.agent or "agent") if ln.who == "agent" else _SHOWN.get(ln.who, ln.who)
        if ln.source:  # another tool's note says it
            shown = f"{shown} ({ln.source})"
        rows.append((ident, shown, ln.when_ms, str(ln.number), ln.text))
    return rows


def text(result: Any, now_ms: int) -> str:
    return format_text(text_rows(result), now_ms)


def porcelain(result: Any) -> str:
    out = []
    for ln in result.lines:
        out.append(f"line {ln.number}\nwho {ln.who}\n")
        for key, value in (("session", ln.session_id), ("message", ln.message_id), ("agent", ln.agent),
                           ("model", ln.model), ("commit", ln.commit), ("checkpoint", ln.checkpoint),
                           ("before-checkpoint", ln.before_checkpoint), ("when", ln.when_ms),
                           ("source", ln.source)):
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
    import json

    return json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n"


def render(result: Any, form: str, now_ms: int) -> str:
    """The result as ``form`` (text, porcelain, json, summary, summary-json) prints it."""
    if form in ("summary", "summary-json"):
        from oxide_git.blame.result import summary

        s = summary(result)
        return json_text({**s, "checkpoints_missing": result.missing}) if form == "summary-json" \
            else summary_text(s)
    if form == "json":
        return json_text(result.to_json())
    return porcelain(result) if form == "porcelain" else text(result, now_ms)


def plain(argv: list[str]) -> int | None:
    """The exit status of ``blame ARGV`` run here, or None when ARGV is not the plain form
    (FILE with -L, --rev, --porcelain, --json, --summary): the click command runs it then.
    Its answer is kept for the next same question (``blame_cache``)."""
    from oxide_git.blame import cache as blame_cache

    got = blame_cache.parse(argv)
    if got is None:
        return None
    path, rev, lines, form = got
    def work() -> None:
        from oxide_git.blame.attribution import blame_file
        from oxide_git.store.context import for_process

        cwd = os.getcwd()
        cacheable = os.environ.get("OXIDE_BLAME_CACHE") != "0"
        before = blame_cache.slot_before(cwd, path, rev, lines, form) if cacheable else None
        ctx = for_process()
        result = blame_file(ctx, os.path.abspath(path), rev=rev, lines=lines)
        payload: Any
        if form == "text":
            payload = text_rows(result)
            out = format_text(payload, ctx.now_ms)
        else:
            out = payload = render(result, form, ctx.now_ms)
        sys.stdout.write(out)
        if result.missing:  # said each time: such an answer is not kept
            from oxide_git.blame.result import missing_hint

            sys.stderr.write(missing_hint(result.missing))
        elif before is not None and not result.after_now:
            commits = sorted({ln.commit for ln in result.lines if ln.commit})
            blame_cache.store(before, blame_cache.slot(cwd, path, rev, lines, form), commits, (form, payload))

    import gc

    from oxide_git.git import failure

    # The cyclic collector's passes (70 in a cold blame of 200 commits, over pygit2's and oxide's
    # modules as they are imported, then the versions read) found next to nothing to free and
    # cost ~11 ms of CPU: off for the run; what the run made is then left out of later passes
    # (``freeze``: the first one would walk all of it; the console script exits anyway).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return failure.guarded(work)
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
