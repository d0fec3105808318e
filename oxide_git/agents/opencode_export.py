"""A session written back as OpenCode files: the legacy storage tree and an ``opencode import`` file.

Files (under ``$XDG_DATA_HOME/opencode/``):

- ``storage/session/<projectID>/<sid>.json``, ``storage/message/<sid>/<mid>.json`` and
  ``storage/part/<mid>/<pid>.json``: what OpenCode up to early 2026 reads directly;
- ``oxide-exports/<sid>.json``: ``{info, messages: [{info, parts}]}``, accepted by
  ``opencode import <file>``; OpenCode 2026+ keeps sessions in ``opencode.db`` and only reads the JSON
  tree once, at migration, so that is how a session reaches it.

``command``: ``opencode --session <sid>`` (``-s``, "session id to continue", in the TUI and ``run``
commands). When ``opencode.db`` already exists the command first runs ``opencode import`` on the
export file (idempotent: the session row is upserted, messages and parts are inserted or ignored).

An OpenCode session keeps its native ids and objects. Any other session gets deterministic
OpenCode-style ids (``ses_`` descending, ``msg_``/``prt_`` ascending, 12 hex of ``ms*4096+counter``
then 14 base62 from a hash) and the required fields OpenCode validates; its tool calls, patches and
other parts OpenCode cannot replay become readable text, listed in ``lost``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ..model import Message, Part, PartType, Session
from . import AgentEnv, Export
from .opencode import _dict, _load, data_home

_MASK = 0xFFFFFFFFFFFF
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_DERIVED: dict[str, tuple[str, ...]] = {  # normalized keys the parser adds next to the native fields
    PartType.FILE: ("path",),
    PartType.PATCH: ("text",),
    PartType.COMPACTION: ("summary", "replaces", "summary_message_id"),
}


class _Ids:
    """Deterministic OpenCode-style ids for one session."""

    def __init__(self, seed: str) -> None:
        self.seed, self.last, self.n = seed, 0, 0

    def _suffix(self, prefix: str) -> str:
        self.n += 1
        num = int.from_bytes(hashlib.sha1(f"{self.seed}:{prefix}:{self.n}".encode()).digest(), "big")
        out = []
        for _ in range(14):
            num, r = divmod(num, 62)
            out.append(_B62[r])
        return "".join(out)

    def session(self, ms: int) -> str:
        return f"ses_{~(ms * 4096) & _MASK:012x}{self._suffix('ses')}"

    def next(self, prefix: str, ms: int) -> str:
        self.last = max(self.last + 1, ms * 4096)
        return f"{prefix}_{self.last & _MASK:012x}{self._suffix(prefix)}"


def export(session: Session, messages: Sequence[Message], env: AgentEnv) -> Export:
    root = data_home(env)
    native = session.agent == "opencode"
    ids = _Ids(session.id)
    times = [m.created_at for m in messages if m.created_at is not None]
    created = session.created_at or (times[0] if times else 0)
    nid = session.native_id
    sid = nid if native and isinstance(nid, str) and nid.startswith("ses_") else ids.session(created)
    cwd = _target_cwd(session, env)
    project_id = _project_id(session, env, root, native)
    lost: Counter[str] = Counter()

    results: dict[Any, Part] = {}
    calls = {p.get("call_id") for m in messages for p in m.parts if p.type == PartType.TOOL_CALL}
    for m in messages:
        for p in m.parts:
            if p.type == PartType.TOOL_RESULT and p.get("call_id") in calls:
                results.setdefault(p.get("call_id"), p)
    known = {m.native_id for m in messages if m.native_id}

    out: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    last_ms, last_user = created, None
    for m in messages:
        ms = m.created_at if m.created_at is not None else last_ms
        last_ms = ms
        mid = m.native_id if native and m.native_id and m.native_id.startswith("msg_") else None
        mid = mid or ids.next("msg", ms)
        role = m.role if m.role in ("user", "assistant") else "user"
        if not native and any(p.type == PartType.COMPACTION for p in m.parts):
            role = "user"
        if m.role not in ("user", "assistant"):
            lost[f"{m.role} messages became user messages"] += 1
        info = _message_info(m, mid, sid, role, ms, native, last_user, cwd, session)
        parts: list[dict[str, Any]] = []
        synth: list[str] = []
        for p in m.parts:
            for d in _part(p, m, native, results, cwd, lost, ms):
                if d.get("type") == "compaction" and p.get("summary") and (
                    p.get("summary_message_id") not in known
                ):
                    synth.append(str(p.get("summary")))
                parts.append(d)
        for d in parts:
            pid = d.get("id")
            if not (native and isinstance(pid, str) and pid.startswith("prt_")):
                d["id"] = ids.next("prt", ms)
            d["sessionID"], d["messageID"] = sid, mid
        if m.parts and not parts:
            continue
        out.append((info, parts))
        if role == "user":
            last_user = mid
        for text in synth:
            sm = ids.next("msg", ms + 1)
            s_info = _message_info(Message("assistant", created_at=ms + 1, model=m.model), sm, sid,
                                   "assistant", ms + 1, False, mid, cwd, session)
            s_info.update(summary=True, mode="compaction", agent="compaction")
            s_part = {"type": "text", "text": text, "id": ids.next("prt", ms + 1),
                      "sessionID": sid, "messageID": sm}
            out.append((s_info, [s_part]))
            last_ms = max(last_ms, ms + 1)

    info = _session_info(session, sid, project_id, cwd, native, out)
    files: dict[Path, bytes] = {}
    store = root / "storage"
    files[store / "session" / project_id / f"{sid}.json"] = _dump(info)
    for m_info, parts in out:
        files[store / "message" / sid / f"{m_info['id']}.json"] = _dump(m_info)
        for d in parts:
            files[store / "part" / m_info["id"] / f"{d['id']}.json"] = _dump(d)
    bundle = root / "oxide-exports" / f"{sid}.json"
    files[bundle] = _dump({"info": info, "messages": [{"info": i, "parts": p} for i, p in out]})
    command: list[str] = ["opencode", "--session", sid]
    if (root / "opencode.db").exists():
        command = ["sh", "-c", 'opencode import "$1" && exec opencode --session "$2"', "sh",
                   str(bundle), sid]
    return Export(files=files, native_id=sid, command=command, cwd=cwd,
                  lost=[f"{n} {what}" for what, n in sorted(lost.items())])


def _message_info(m: Message, mid: str, sid: str, role: str, ms: int, native: bool,
                  last_user: str | None, cwd: str, session: Session) -> dict[str, Any]:
    info: dict[str, Any] = dict(m.extra) if native else {}
    info.update(id=mid, sessionID=sid, role=role)
    if m.model and role == "assistant" and "modelID" not in info:
        info["modelID"] = m.model
    if m.usage is not None:
        info["tokens"] = dict(m.usage) if native else _tokens(m.usage)
    if m.cost is not None:
        info["cost"] = m.cost
    t = dict(_dict(info.get("time")))
    t.setdefault("created", ms)
    info["time"] = t
    if native:
        return info
    model = m.model or session.model or "unknown"
    provider = _provider(model)
    info["agent"] = "build"
    if role == "user":
        info["model"] = {"providerID": provider, "modelID": model}
        return info
    t.setdefault("completed", ms)
    info.setdefault("tokens", _tokens({}))
    info.setdefault("cost", 0)
    info.update(parentID=last_user or mid, modelID=model, providerID=provider, mode="build",
                path={"cwd": cwd, "root": cwd}, finish="stop")
    return info


def _part(p: Part, m: Message, native: bool, results: Mapping[Any, Part], cwd: str,
          lost: Counter[str], ms: int) -> list[dict[str, Any]]:
    d = {k: v for k, v in p.data.items() if k not in _DERIVED.get(p.type, ())}
    t = p.type
    if t == PartType.TEXT:
        return [{"type": "text", **d} if native else {"type": "text", "text": str(p.get("text", ""))}]
    if t == PartType.REASONING:
        if native:
            return [{"type": "reasoning", **d}]
        if p.get("signature") or p.get("encrypted"):
            lost["reasoning signatures dropped"] += 1
        return [{"type": "reasoning", "text": str(p.get("text", "")), "time": {"start": ms, "end": ms}}]
    if t == PartType.TOOL_CALL:
        res = results.get(p.get("call_id"))
        if native:
            state = dict(_dict(p.get("state")))
            state["input"] = p.get("input")
            if res is not None:
                state["error" if res.get("is_error") else "output"] = res.get("output")
            rest = {k: v for k, v in d.items() if k not in ("call_id", "name", "input", "state")}
            return [{"type": "tool", **rest, "callID": p.get("call_id"), "tool": p.get("name"),
                     "state": state}]
        lost["tool calls became text"] += 1
        return [{"type": "text", "text": _tool_text(p, res)}]
    if t == PartType.TOOL_RESULT:
        if p.get("call_id") in results:
            return []  # written with its call
        lost["tool results without their call became text"] += 1
        return [{"type": "text", "text": f"Tool result:\n{_block(p.get('output'))}"}]
    if t == PartType.FILE:
        if native and "url" in d:
            return [{"type": "file", **d}]
        path = str(p.get("path", ""))
        full = path if PurePosixPath(path).is_absolute() else f"{cwd.rstrip('/')}/{path}"
        out = [{"type": "file", "mime": p.get("mime") or "text/plain", "filename": path,
                "url": p.get("url") or f"file://{full}"}]
        if isinstance(p.get("text"), str):
            out.append({"type": "text", "text": p.get("text"), "synthetic": True})
        return out
    if t == PartType.IMAGE:
        mime = p.get("mime") or "image/png"
        url = p.get("url") or (f"data:{mime};base64,{p.get('data')}" if p.get("data") else None)
        if url is None and p.get("path"):
            url = f"file://{p.get('path')}"
        if url is None:
            lost["images without data dropped"] += 1
            return []
        return [{"type": "file", "mime": mime, "url": url, "filename": p.get("path") or "image"}]
    if t == PartType.PATCH:
        if native and "hash" in d:
            return [{"type": "patch", **d}]
        lost["patches became text"] += 1
        return [{"type": "text", "text": f"Patch:\n{_block(p.get('text'), 'diff')}"}]
    if t == PartType.COMPACTION:
        if native and "auto" in d:
            return [{"type": "compaction", **d}]
        return [{"type": "compaction", "auto": False}]
    if t == PartType.OTHER and native and isinstance(p.get("raw"), dict):
        return [{**p.get("raw"), "type": p.get("kind")}]
    lost[f"{p.get('kind') or t} parts dropped"] += 1
    return []


def _session_info(session: Session, sid: str, project_id: str, cwd: str, native: bool,
                  out: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> dict[str, Any]:
    skip = ("parent_native_id", "totals")
    info: dict[str, Any] = {k: v for k, v in session.extra.items() if k not in skip} if native else {}
    times = [i["time"]["created"] for i, _ in out]
    t = dict(_dict(info.get("time")))
    t.setdefault("created", session.created_at or (times[0] if times else 0))
    t.setdefault("updated", session.updated_at or (times[-1] if times else t["created"]))
    info.update(id=sid, projectID=project_id, directory=cwd, time=t,
                title=session.title or info.get("title") or "Imported session")
    info.setdefault("slug", f"oxide-{session.id[-8:]}")
    info.setdefault("version", "oxide")
    parent = session.extra.get("parent_native_id")
    if native and isinstance(parent, str):
        info["parentID"] = parent
    return info


def _target_cwd(session: Session, env: AgentEnv) -> str:
    cwd = session.cwd
    if cwd and env.belongs(cwd):
        return cwd
    if env.worktrees:
        base = env.worktrees[0]
        if cwd and session.worktree:
            try:
                return str(base / PurePosixPath(cwd).relative_to(session.worktree))
            except ValueError:
                pass
        return str(base)
    return cwd or str(env.home)


def _project_id(session: Session, env: AgentEnv, root: Path, native: bool) -> str:
    projects = root / "storage" / "project"
    for f in sorted(projects.glob("*.json")) if projects.is_dir() else []:
        p = _load(f)
        if isinstance(p, dict) and env.belongs(p.get("worktree") if isinstance(p.get("worktree"), str)
                                               else None):
            return str(p.get("id") or f.stem)
    pid = session.extra.get("projectID")
    if native and isinstance(pid, str) and pid and pid != "global" and "/" not in pid:
        return pid
    return env.project_id or "global"


def _tokens(u: Mapping[str, Any]) -> dict[str, Any]:
    def n(*keys: str) -> int:
        for k in keys:
            v = u.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return 0

    cache = _dict(u.get("cache"))
    return {"input": n("input", "input_tokens", "prompt_tokens"),
            "output": n("output", "output_tokens", "completion_tokens"),
            "reasoning": n("reasoning", "reasoning_tokens", "reasoning_output_tokens"),
            "cache": {"read": cache.get("read") or n("cache_read_input_tokens", "cached_input_tokens"),
                      "write": cache.get("write") or n("cache_creation_input_tokens")}}


def _provider(model: str) -> str:
    low = model.lower()
    if "claude" in low:
        return "anthropic"
    if low.startswith(("gpt", "o1", "o3", "o4", "codex")):
        return "openai"
    if "gemini" in low:
        return "google"
    return "unknown"


def _tool_text(call: Part, res: Part | None) -> str:
    text = f"Tool `{call.get('name')}` was called with:\n{_block(call.get('input'), 'json')}"
    if res is not None:
        label = "Error" if res.get("is_error") else "Result"
        text += f"\n{label}:\n{_block(res.get('output'))}"
    return text


def _block(value: Any, lang: str = "") -> str:
    body = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False,
                                                          default=str)
    fence = "````" if "```" in body else "```"
    return f"{fence}{lang}\n{body}\n{fence}"


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str).encode()
