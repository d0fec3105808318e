"""When a parser emits a session again: only when what it shows changed.

A parser keeps, per session, an accumulator of what it has read (``acc``) and the snapshot it last
emitted (``acc["emitted"]``). Its ``shown`` fields end with the session's time, which only counts
``with_time`` (at the end of a read): emitting a session anew for every message whose time moved
would rebuild it once per message.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any


def getter(shown: tuple[str, ...]) -> Callable[[dict[str, Any]], Any]:
    """The comparison key of ``shown`` without its last field (the time)."""
    return itemgetter(*shown[:-1])


def changed(acc: dict[str, Any], shown: tuple[str, ...], but_time: Callable[[dict[str, Any]], Any],
            with_time: bool) -> dict[str, Any] | None:
    """The snapshot to emit (and now ``acc["emitted"]``), or None when nothing shown changed.
    Called for every message: the common "unchanged" answer compares two tuples, builds nothing."""
    old = acc["emitted"]
    when = shown[-1]
    if old is not None and but_time(acc) == but_time(old) and (not with_time or acc[when] == old[when]):
        return None
    snap = {k: acc[k] for k in shown}
    if old is not None and not with_time:
        snap[when] = old[when]
    acc["emitted"] = snap
    return snap
