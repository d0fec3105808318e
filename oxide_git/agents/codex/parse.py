"""The Codex rollout reader behind ``codex.parse``: see ``agents/codex/agent.py`` for the grouping rule."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from oxide_git.agents import Event, FoundMessage, FoundSession, Problem, Resumable, Unknown, jsonline
from oxide_git.agents.codex import items as items
from oxide_git.agents.codex.lines import CALL_KEYS, reasoning_data, tool_call_data
from oxide_git.agents.codex.lines import is_error as _is_error
from oxide_git.agents.codex.lines import iso_ms as _iso
from oxide_git.agents.codex.lines import texts as _texts
from oxide_git.agents.codex.message import message_of
from oxide_git.agents.codex.open import (
    Open,
    event_for_item,
    pair,
    raw_content,
    run_json,
    usage_of,
)
from oxide_git.agents.codex.store import open_rollout, plain_name, skip
from oxide_git.core.model import Part, Session, from_iso, session_id_for

name = "codex"
_SESSION_EXTRA = ("meta", "git", "forked_from", "meta_env", "file")

_ASSISTANT_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call",
                    "web_search_call", "image_generation_call"}
_EVENT_KIND = {"agent_message": "message", "agent_reasoning": "reasoning",
               "agent_reasoning_raw_content": "raw"}
_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


class Parser:
    def __init__(self, path: Path, state: Mapping[str, Any] | None) -> None:
        self.path = path
        self.st: dict[str, Any] = dict(state or {})
        self.st.setdefault("line", 0)
        self.cur: Open | None = None
        self.out: list[Event] = []
        self.off = 0
        self.raw = b""
        self.resumed_at = -1
        self.env: dict[str, Any] | None = None  # the envelope of the line being read
        self.env_msg = False  # that envelope belongs to the message (a prompt's item), not a part
        self.env_done = False  # that envelope is placed already
        self.exact: int | None = None  # the line's own time, when its timestamp reads as one

    # -- session ------------------------------------------------------------------------------
    def _session(self) -> Session:
        st = self.st
        extra = {k: st[k] for k in _SESSION_EXTRA if st.get(k) is not None}
        return Session(id=st["sid"], agent=name, native_id=st["native"], title=st.get("title"),
                       created_at=st.get("created"), updated_at=st.get("updated"),
                       branch=st.get("branch"), cwd=st.get("cwd"), model=st.get("model"),
                       extra=extra)

    def _emit_session(self) -> None:
        s = self._session()
        fp = hashlib.sha1(repr(s).encode()).hexdigest()
        if fp != self.st.get("fp"):
            self.st["fp"] = fp
            self.out.append(FoundSession(s))

    def _ensure(self, ts: int | None) -> None:
        if "sid" not in self.st:
            stem = plain_name(self.path).rsplit(".", 1)[0]
            m = _UUID.search(stem)
            native = m.group(1) if m else stem
            self.st.update(native=native, created=ts, sid=session_id_for(name, native, ts))
            self._emit_session()

    def _meta(self, p: dict[str, Any], ts: int | None) -> None:
        st = self.st
        if "sid" in st:
            self._neutral(Part.other("session_meta", p, line="session_meta"), ts)
            if p.get("id") and p.get("id") != st["native"] and not st.get("forked_from"):
                st["forked_from"] = p.get("id")
            return
        native = str(p.get("id") or "") or None
        if native is None:
            self._ensure(ts)
            return
        created = from_iso(p.get("timestamp")) or ts
        git = p.get("git") if isinstance(p.get("git"), dict) else None
        st.update(native=native, created=created, sid=session_id_for(name, native, created),
                  cwd=p.get("cwd") if isinstance(p.get("cwd"), str) else None,
                  branch=(git or {}).get("branch"), git=git,
                  meta={k: v for k, v in p.items() if k not in ("id", "timestamp", "cwd", "git")},
                  forked_from=p.get("forked_from_id"))
        if isinstance(p.get("cli_version"), str):
            st["version"] = p["cli_version"]
        fname = plain_name(self.path)
        if fname.startswith("rollout-") and fname.endswith(f"-{native}.jsonl"):
            st["file"] = fname  # written back under the same name (Codex names it in local time)
        if self.env is not None:
            st["meta_env"] = {**self.env, "keys": list(p)}
        self._emit_session()

    # -- messages -----------------------------------------------------------------------------
    def _start(self, role: str | None, ts: int | None) -> Open:
        if self.cur is not None:
            self._close()
        if "sid" not in self.st:
            self._ensure(ts)
        if self.off != self.resumed_at:  # the Resumable a restart begins at is not repeated
            self.out.append(Resumable(self.off, dict(self.st)))  # state before this line
        self.cur = Open(role, ts, self.st.get("model") if role == "assistant" else None)
        return self.cur

    def _want(self, role: str, ts: int | None) -> Open:
        c = self.cur
        if c is not None and (c.role is None or (c.role == role and role in ("assistant", "tool"))):
            c.role = role
            if role == "assistant" and c.model is None:
                c.model = self.st.get("model")
            return c
        return self._start(role, ts)

    def _neutral(self, part: Part, ts: int | None) -> None:
        c = self.cur if self.cur is not None else self._start(None, ts)
        c.parts.append([part.type, part.data])  # a fresh dict: Part.other builds one per call

    def _close(self) -> None:
        c, self.cur = self.cur, None
        if c is None:
            return
        self.out.append(FoundMessage(self.st["sid"], message_of(c, self.st)))

    # -- lines --------------------------------------------------------------------------------
    def _item(self, p: dict[str, Any], ts: int | None) -> None:
        t = p.get("type")
        if not isinstance(t, str):
            t = None  # a list or dict type is unknown
        if t == "message":
            native = {k: v for k, v in p.items() if k not in ("type", "role", "content")}
            role = p.get("role")
            content = p.get("content")
            if role == "assistant":
                c = self._want("assistant", ts)
                texts = _texts(content, ("output_text", "input_text"))
                text = "".join(texts)
                data: dict[str, Any] = {"text": text, **native}
                if content != [{"type": "output_text", "text": text}]:
                    data["content"] = content
                c.parts.append(["text", data])
                if self.env is None:  # kept in place (envelope), events need no pairing
                    pair(c, len(c.parts) - 1, "message", [text])
                return
            c = self._want("user-item" if role == "user" else "system", ts)
            self.env_msg = True
            if role != "user":
                c.extra["codex_role"] = role
            elif self.env is not None:
                c.prov = items.provenance(p)
            if native:
                c.extra["native"] = native
            for ci in content if isinstance(content, list) else []:
                ct = ci.get("type") if isinstance(ci, dict) else None
                if ct in ("input_text", "output_text") and isinstance(ci.get("text"), str):
                    c.parts.append(["text", {"text": ci["text"]}])
                elif ct == "input_image" and len(ci) == 2 and isinstance(ci.get("image_url"), str):
                    url = ci["image_url"]
                    mime = url[5:].split(";", 1)[0] if url.startswith("data:") else None
                    c.parts.append(["image", {"mime": mime, "url": url}])
                else:
                    c.parts.append(["other", {"kind": str(ct), "raw": ci, "line": "content"}])
            if not isinstance(content, list):
                c.extra["content"] = content
            c.item_text = "\n".join(_texts(content, ("input_text", "output_text")))
            return
        if t in _ASSISTANT_ITEMS:
            c = self._want("assistant", ts)
            if t == "reasoning":
                data, texts = reasoning_data(p)
                c.parts.append(["reasoning", data])
                if self.env is None:  # kept in place (envelope), events need no pairing
                    pair(c, len(c.parts) - 1, "reasoning", texts)
            elif t in CALL_KEYS:
                c.parts.append(["tool_call", tool_call_data(t, p)])
            else:
                c.parts.append(["other", {"kind": t, "raw": p, "line": "response_item"}])
            return
        if isinstance(t, str) and t.endswith("_output") and "call_id" in p:
            c = self._want("tool", ts)
            out = p.get("output")
            data = {**Part.tool_result(str(p["call_id"]), out, _is_error(out)).data, "codex_type": t}
            rest = {k: v for k, v in p.items() if k not in ("type", "call_id", "output")}
            if rest:
                data["native"] = rest
            c.parts.append(["tool_result", data])
            return
        if t not in items.ITEMS:
            self.out.append(Unknown(f"response_item/{t}", self.st.get("version")))
        self._neutral(Part.other(str(t), p, line="response_item"), ts)

    def _event(self, p: dict[str, Any], ts: int | None) -> None:
        t = p.get("type") if isinstance(p.get("type"), str) else None  # a list or dict type is unknown
        st, c = self.st, self.cur
        if t == "user_message":
            rest = {k: v for k, v in p.items() if k not in ("type", "message")}
            msg = p.get("message")
            if c is not None and c.role == "user-item" and not c.merged:
                c.merged = True
                c.extra["event"] = rest
                if msg != c.item_text:
                    c.extra["content"] = [*raw_content(c)]
                    idx = [i for i, (pt, _) in enumerate(c.parts) if pt == "text"]
                    for i in reversed(idx):
                        del c.parts[i]
                    c.parts.insert(idx[0] if idx else 0, ["text", {"text": msg}])
                if self.env is not None:  # kept as the line it is (its text is the prompt's)
                    c.parts.append(["other", {"kind": t, "raw": {**p, "message": None},
                                              "line": "event_msg", "text_of": "prompt", "env": self.env}])
                    self.env_done = True
                return
            c = self._want("user", ts)
            c.extra.update(event=rest, item=False)
            c.parts.append(["text", {"text": msg}])
            self.env_msg = True
        elif t in _EVENT_KIND and self.env is not None:  # kept in place; see _close for unpaired
            self._want("assistant", ts).parts.append(["other", Part.other(t, p, line="event_msg").data])
        elif t in _EVENT_KIND:
            event_for_item(self._want("assistant", ts), _EVENT_KIND[t], p)
        elif t == "token_count":
            info = p.get("info")
            if self.env is not None:  # paginated: every line is kept, to be written back
                self._neutral(Part.other("token_count", p, line="event_msg"), ts)
                c = self.cur
            if not isinstance(info, dict):
                return
            total = info.get("total_token_usage")
            prev = st.get("total")
            if isinstance(prev, str):  # a cursor written by an older build kept it as JSON text
                prev = json.loads(prev)
            if c is not None and c.role == "assistant":
                c.usage = usage_of(info, p)
            elif total != prev and self.env is None:
                self._neutral(Part.other("token_count", p, line="event_msg"), ts)
            st["total"] = total
        elif t in ("task_started", "turn_started"):
            self._start(None, ts).parts.append(["other", {"kind": t, "raw": p, "line": "event_msg"}])
        elif t == "item_completed":
            item = p.get("item")
            it = item.get("type") if isinstance(item, dict) else None
            it = it if isinstance(it, str) else None  # a list or dict type is unknown
            if it == "UserMessage" and c is not None and c.role == "user-item":
                c.merged = True
            elif it in items.ASSISTANT_TURN_ITEMS:
                self._want("assistant", ts)
            kind = items.unknown_event(t, p)
            if kind is not None:
                self.out.append(Unknown(kind, st.get("version")))
            self._neutral(Part.other(f"item_completed/{it}", p, line="event_msg"), ts)
        else:
            kind = items.unknown_event(t, p)
            if kind is not None:
                self.out.append(Unknown(kind, st.get("version")))
            self._neutral(Part.other(str(t), p, line="event_msg"), ts)

    def _line(self, obj: dict[str, Any], ts: int | None) -> None:
        t, p = obj.get("type"), obj.get("payload")
        if not (isinstance(t, str) and isinstance(p, dict) and "timestamp" in obj):
            self.env = None  # not a {timestamp, type, payload} line: the older eras
            self._dispatch(obj, ts)
            return
        self.env = env = items.envelope(obj, self.raw)
        self.env_msg = self.env_done = False
        if t in ("response_item", "compacted") or (
                t == "event_msg" and isinstance(p.get("type"), str) and p["type"] in items.REBUILT_EVENTS):
            env["keys"] = items.key_order(p)  # a payload rebuilt from parsed fields: its key order
        before = self.cur
        n = len(before.parts) if before is not None else 0
        self._dispatch(obj, ts)
        c = self.cur
        if c is None or self.env_done:
            return
        lt = env.get("ts")
        if c.created is not None and self.exact is not None and isinstance(lt, str) and len(lt) == 24 \
                and lt[10] == "T" and lt[19] == "." and lt[23] == "Z" and "raw" not in env:
            del env["ts"]  # written as to_iso writes it: kept as ms after its message's time
            env["dt"] = self.exact - c.created
        if self.env_msg:
            c.extra["env"] = env
            return
        start = n if c is before else 0
        if len(c.parts) > start:  # the part this line made (a first session_meta makes none)
            c.parts[start][1]["env"] = env

    def _dispatch(self, obj: dict[str, Any], ts: int | None) -> None:
        t, p, st = obj.get("type"), obj.get("payload"), self.st
        if isinstance(t, str) and isinstance(p, dict):
            st["era"] = "envelope"
            if t == "session_meta":
                self._meta(p, ts)
            elif t == "response_item":
                self._item(p, ts)
            elif t == "event_msg":
                self._event(p, ts)
            elif t == "turn_context":
                h = hashlib.sha1(self.raw[self.raw.find(b'"payload"'):]).hexdigest()
                if h != st.get("tc") or self.env is not None:  # identical repeats are dropped
                    self._neutral(Part.other("turn_context", p, line="turn_context"), ts)
                st["tc"] = h
                st["model"] = p.get("model") or st.get("model")
                st["cwd"] = st.get("cwd") or p.get("cwd")
            elif t == "compacted":
                c = self._want("compaction", ts)
                extra = {k: v for k, v in p.items() if k != "message"}
                c.parts.append(["compaction", dict(Part.compaction(str(p.get("message") or ""),
                                                                   **extra).data)])
            elif t in items.LINES or self.env is not None:  # world_state, token_usage_record...
                if t not in items.LINES:
                    self.out.append(Unknown(t, st.get("version")))
                self._neutral(Part.other(t, p, line=t), ts)
            else:
                self.out.append(Unknown(t, st.get("version")))
                raw = {k: v for k, v in obj.items() if k != "timestamp"}
                self._neutral(Part.other(t, raw, line="*"), ts)
        elif "record_type" in obj:
            self._neutral(Part.other(f"record_type:{obj['record_type']}", obj, line="bare"), ts)
        elif isinstance(t, str) and "payload" not in obj:
            self._item(obj, ts)
            if st.get("cwd") is None and self.cur is not None and self.cur.item_text:
                m = _CWD.search(self.cur.item_text)
                st["cwd"] = m.group(1).strip() if m else None
        elif "id" in obj and "timestamp" in obj and "sid" not in st:
            self._meta(obj, ts)
        else:
            raw = {k: v for k, v in obj.items() if k != "timestamp"}
            self._neutral(Part.other(str(t or "unknown"), raw, line="*"), ts)

    def run(self, offset: int) -> Iterator[Event]:
        st = self.st
        if self.path.suffix == ".json":
            yield from run_json(self, offset)
            return
        # A 1 MiB buffer: with the default 8 KiB one, splitting the file into lines is a tenth of
        # the parse (lines are ~1 KB, many are larger than the buffer).
        with open_rollout(self.path) as f:
            skip(f, offset, self.path)
            self.off = offset
            self.resumed_at = offset if offset else -1
            out, line = self.out, self._line
            for raw in f:
                if not raw.endswith(b"\n"):
                    break  # a line still being written: not consumed
                if not raw.isspace():  # raw.strip() without copying the line
                    self.raw = raw
                    try:
                        obj = jsonline.loads(raw)
                    except (ValueError, RecursionError):  # RecursionError: nested too deep for json
                        obj = None
                    if not isinstance(obj, dict):
                        out.append(Problem(st["line"] + 1, "not JSON, skipped"))
                    else:
                        ts = self.exact = _iso(obj.get("timestamp"))
                        ts = ts or st.get("ts")
                        line(obj, ts)
                        if ts is not None:
                            st["ts"] = st["updated"] = ts
                self.off += len(raw)
                st["line"] += 1  # state mutations of a line come after the message it opens
                if out:
                    yield from out
                    out.clear()
        self._close()
        if "sid" in st:
            self._emit_session()
        if self.off != self.resumed_at:
            self.out.append(Resumable(self.off, dict(st)))
        yield from self.out
        self.out.clear()
