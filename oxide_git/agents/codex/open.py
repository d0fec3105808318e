"""The message a Codex reader is building (``Open``), the pairing of legacy ``agent_message`` /
``agent_reasoning`` events with the items they repeat, and the TypeScript-era single-file reader."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from oxide_git.agents import Event, FoundMessage, Problem, Resumable, jsonline
from oxide_git.core.model import from_iso


class Open:
    __slots__ = ("created", "extra", "item_text", "merged", "model", "parts", "prov", "queue", "role",
                 "usage", "wants")

    def __init__(self, role: str | None, created: int | None, model: str | None) -> None:
        self.role, self.created, self.model = role, created, model
        self.parts: list[list[Any]] = []  # [type, data]
        self.extra: dict[str, Any] = {}
        self.usage: dict[str, Any] | None = None
        self.item_text: str | None = None
        self.merged = False
        self.prov: str | None = None  # a paginated user item's provenance: user | harness
        self.queue: list[tuple[str, dict[str, Any]]] = []  # events waiting for their item
        self.wants: list[list[Any]] = []  # [part index, kind, wanted texts, got texts]


def take(data: dict[str, Any], kind: str, p: dict[str, Any]) -> Any:
    extra = {x: v for x, v in p.items() if x not in ("type", "message", "text")}
    if extra and extra != {"phase": data.get("phase")}:
        data["event_extra"] = extra
    return p.get("message") if kind == "message" else p.get("text")

def pair(c: Open, idx: int, kind: str, want: list[str]) -> None:
    data, got = c.parts[idx][1], []
    for ev in [e for e in c.queue if e[0] == kind][: len(want)]:
        c.queue.remove(ev)
        got.append(take(data, kind, ev[1]))
    c.wants.append([idx, kind, want, got])

def event_for_item(c: Open, kind: str, p: dict[str, Any]) -> None:
    for w in c.wants:
        if w[1] == kind and len(w[3]) < len(w[2]):
            w[3].append(take(c.parts[w[0]][1], kind, p))
            return
    c.queue.append((kind, p))


def raw_content(c: Open) -> list[Any]:
    out: list[Any] = []
    for t, d in c.parts:
        if t == "text":
            out.append({"type": "input_text", "text": d["text"]})
        elif t == "image":
            out.append({"type": "input_image", "image_url": d.get("url")})
        elif d.get("line") == "content":
            out.append(d["raw"])
    return out


def run_json(self: Any, offset: int) -> Iterator[Event]:
    """TS era: one JSON document, rewritten in place; restart skips messages already emitted."""
    data = self.path.read_bytes()
    skip = int(self.st.pop("emitted", 0)) if offset else 0
    self.st = {"line": 0}
    try:
        doc = jsonline.loads(data)
    except ValueError:
        yield Problem(None, "not JSON, skipped")
        return
    session = doc.get("session") if isinstance(doc, dict) else None
    ts = from_iso((session or {}).get("timestamp"))
    self._meta(session if isinstance(session, dict) else {}, ts)
    for item in doc.get("items") or [] if isinstance(doc, dict) else []:
        if isinstance(item, dict):
            self._line(item, ts)
    self._close()
    self._emit_session()
    n = 0
    for ev in self.out:
        if isinstance(ev, FoundMessage):
            n += 1
            if n <= skip:
                continue
        if not isinstance(ev, Resumable):
            yield ev
    yield Resumable(len(data), {**self.st, "emitted": n})


_SOURCES = {"agent_message": "text", "agent_reasoning": "reasoning",
            "agent_reasoning_raw_content": "reasoning"}


def unpaired_events(parts: list[list[Any]]) -> None:
    """Lines kept in place (``env``): ``agent_message``/``agent_reasoning`` events repeat the items
    of their message, paired first to first per kind as ``pair`` does. A paired event that says
    what its item says keeps a reference instead of the text (``text_of``: the item's index, and
    the summary's); an event left over (and every ``agent_reasoning_raw_content``) becomes the text
    or reasoning part it is (``source``), still in place."""
    slots: dict[str, list[tuple[int, int | None]]] = {"agent_message": [], "agent_reasoning": []}
    for i, (t, d) in enumerate(parts):
        if "source" in d:
            continue
        if t == "text":
            slots["agent_message"].append((i, None))
        elif t == "reasoning":
            summary = d.get("summary")
            if isinstance(summary, list):
                slots["agent_reasoning"] += [(i, j) for j in range(len(summary))]
            else:
                slots["agent_reasoning"].append((i, None))
    taken = {"agent_message": 0, "agent_reasoning": 0}
    for part in parts:
        t, d = part
        kind = d.get("kind") if t == "other" and "env" in d else None
        if kind not in _SOURCES or not isinstance(d.get("raw"), dict):
            continue
        p = d["raw"]
        key = "message" if kind == "agent_message" else "text"
        if kind in taken and taken[kind] < len(slots[kind]):
            i, j = slots[kind][taken[kind]]
            taken[kind] += 1
            item = parts[i][1]
            said = item.get("text") if j is None else item["summary"][j]
            if isinstance(said, str) and p.get(key) == said:
                d["raw"] = {**p, key: None}
                d["text_of"] = i if j is None else [i, j]
            continue
        rest = {k: v for k, v in p.items() if k not in ("type", "message", "text")}
        part[0] = _SOURCES[kind]
        part[1] = {"text": p.get(key), "source": kind, **rest, "env": {**d["env"], "keys": list(p)}}


def said_again(d: dict[str, Any], parts: Any) -> dict[str, Any]:
    """The payload of an event part stored with ``text_of`` (see ``unpaired_events``), whole again;
    ``parts`` are its message's parts, ``prompt`` their text parts."""
    raw, ref = d["raw"], d["text_of"]
    try:
        if ref == "prompt":
            return {**raw, "message": "\n".join(str(p.get("text", "")) for p in parts if p.type == "text")}
        i, j = (ref, None) if isinstance(ref, int) else ref
        item = parts[i]
        text = item.get("text") if j is None else item.get("summary")[j]
        return {**raw, "message" if d.get("kind") == "agent_message" else "text": text}
    except (IndexError, TypeError, KeyError):  # the message was changed under the reference
        return dict(raw)


def usage_of(info: dict[str, Any], p: dict[str, Any]) -> dict[str, Any]:
    """A ``token_count`` event as an assistant message's ``usage``: the per-request
    ``last_token_usage`` fields, the cumulative ``total``, and the rest of ``info``."""
    last = info.get("last_token_usage")
    usage = dict(last) if isinstance(last, dict) else {}
    usage["total"] = info.get("total_token_usage")
    usage.update((k, v) for k, v in info.items() if k not in ("total_token_usage", "last_token_usage"))
    if p.get("rate_limits") is not None:
        usage["rate_limits"] = p["rate_limits"]
    return usage

