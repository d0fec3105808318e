"""`git oxide search` without click: what it prints, and the plain form people and scripts run.

``search QUERY [--json] [-n N]`` is parsed here by hand: click's start-up (~25 ms) was a third of a
search answered in ~10 ms over a million messages. Anything else (``-h``, a typo, more words than
one argument) goes through the click command (``cli/sessions.py``), which prints the same text.
The watcher answers over its socket with ``output`` too (``watch_server``).
"""

from __future__ import annotations

import sys
from typing import Any


def output(ctx: Any, query: str, limit: int, as_json: bool) -> tuple[str, str]:
    """What `search` prints (on stdout, on stderr): a table of hits, or one JSON object per hit;
    no hits is said on stderr (the table, as `git grep` would, prints nothing)."""
    from oxide_git.core.text_table import clip, json_list_text, table_text
    from oxide_git.core.titles import display
    from oxide_git.ops.browse import search

    hits = search(ctx, query, limit)
    if as_json:
        return json_list_text(hits), ""
    if not hits:
        return "", f"no message matches '{query}'\n"
    short = {s: ctx.index.session_prefix(s) for s in {h["session_id"] for h in hits}}
    return table_text(["SESSION", "MSG", "TITLE", "MATCH"],
                      [[short[h["session_id"]], f"#{h['seq']}", display(h["title"], h.get("first_prompt"),
                                                                 h["session_id"], 30),
                        clip(h["snippet"], 80)] for h in hits]), ""


def parse(argv: list[str]) -> tuple[str, int, bool] | None:
    """``(query, limit, as_json)`` of the plain form, else None."""
    query, limit, as_json = None, 50, False
    args = iter(argv)
    for a in args:
        if a == "--json":
            as_json = True
        elif a in ("-n", "--limit") or a.startswith("--limit="):
            value = a[8:] if a.startswith("--limit=") else next(args, "")
            if not value.isdigit():
                return None  # click says what is wrong
            limit = int(value)
        elif a.startswith("-") or query is not None:
            return None
        else:
            query = a
    return (query, limit, as_json) if query is not None else None


def plain(argv: list[str]) -> int | None:
    """The exit status of ``search ARGV`` run here, or None when ARGV is not the plain form."""
    parsed = parse(argv)
    if parsed is None:
        return None

    def work() -> None:
        from oxide_git.store.context import for_process

        out, err = output(for_process(), *parsed)
        sys.stdout.write(out)
        sys.stderr.write(err)

    from oxide_git.git import failure

    return failure.guarded(work)
