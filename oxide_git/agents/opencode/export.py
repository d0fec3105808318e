"""A session written back into OpenCode: rows of ``opencode.db`` (1.18), or the legacy storage tree.

OpenCode 1.18 keeps everything in ``$XDG_DATA_HOME/opencode/opencode.db`` and reads no JSON files,
so the export is that database's rows (``opencode_rows``; ``Export.databases``), applied by
``opencode_write.write_database`` in one transaction, the database created with OpenCode's own
schema when the data folder has none. Only a data folder that has the legacy ``storage/`` tree and
no database (OpenCode before 2026) gets the tree's JSON files instead:
``storage/session/<projectID>/<sid>.json``, ``storage/message/<sid>/<mid>.json``,
``storage/part/<mid>/<pid>.json``.

``command``: ``opencode --session <sid>`` (``-s``, in the TUI and ``run``): OpenCode finds the
session by its id in the ``session`` table and continues from its message and part rows.

An OpenCode session keeps its native ids, objects and rows (row times, JSON key order, the
session's token and cost totals, its todo list). Any other session gets deterministic OpenCode-style
ids (``ses_`` descending, ``msg_``/``prt_`` ascending, 12 hex of ``ms*4096+counter`` then 14 base62
from a hash), the required fields OpenCode validates, and the model OpenCode is configured with
(the ``model`` of its ``opencode.json``): a model id OpenCode has no provider for is refused
(``Model not found``), so without a configured model the export is refused before anything is
written (OpenCode's first run: ``_model_for``). Tool calls with an OpenCode equivalent become
``tool`` parts; other tools, patches and parts OpenCode cannot replay become readable text; the
other agent's harness messages are left out; all of it is listed in ``lost``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from oxide_git.agents import AgentEnv, Export
from oxide_git.agents.opencode.parts import part as _part
from oxide_git.agents.opencode.parts import provider as _provider
from oxide_git.agents.opencode.parts import tokens as _tokens
from oxide_git.agents.opencode.store import ROW_KEY, as_dict, data_home, load_json, loads_json
from oxide_git.core.errors import OxideError
from oxide_git.core.model import Message, Part, PartType, Session

_MASK = 0xFFFFFFFFFFFF
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


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
    model = None if native else _model_for(session, env, cwd, lost)
    if not native:
        harness = [m for m in messages if m.is_harness()]
        if harness:
            lost[f"{session.agent} harness messages left out (context its own harness injected)"] += (
                len(harness))
        messages = [m for m in messages if not m.is_harness()]

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
        info = _message_info(m, mid, sid, role, ms, native, last_user, cwd, model)
        parts: list[dict[str, Any]] = []
        synth: list[str] = []
        for p in m.parts:
            for d in _part(p, native, results, cwd, lost, ms):
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
            continue  # e.g. tool results, written with their calls
        if m.role not in ("user", "assistant"):
            lost[f"{m.role} messages became user messages"] += 1
        out.append((info, parts))
        if role == "user":
            last_user = mid
        for text in synth:
            sm = ids.next("msg", ms + 1)
            s_info = _message_info(Message("assistant", created_at=ms + 1, model=m.model), sm, sid,
                                   "assistant", ms + 1, False, mid, cwd, model)
            s_info.update(summary=True, mode="compaction", agent="compaction")
            s_part = {"type": "text", "text": text, "id": ids.next("prt", ms + 1),
                      "sessionID": sid, "messageID": sm}
            out.append((s_info, [s_part]))
            last_ms = max(last_ms, ms + 1)

    info = _session_info(session, sid, project_id, cwd, native, out, model)
    command = ["opencode", "--session", sid]
    lost_lines = [f"{n} {what}" for what, n in sorted(lost.items())]
    db = root / "opencode.db"
    if (root / "storage").is_dir() and not any(root.glob("opencode*.db")):
        return Export(files=_storage_files(root, project_id, info, out), native_id=sid,
                      command=command, cwd=cwd, lost=lost_lines)
    from oxide_git.agents.opencode.rows import build

    worktree = str(env.worktrees[0]) if env.worktrees else cwd
    return Export(files={}, native_id=sid, command=command, cwd=cwd, lost=lost_lines,
                  databases={db: build(info, out, worktree)})


def _storage_files(root: Path, project_id: str, info: dict[str, Any],
                   out: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> dict[Path, bytes]:
    """The legacy storage tree (OpenCode before 2026 reads these files directly)."""
    store = root / "storage"
    session = {k: v for k, v in info.items() if k not in ("totals", "todo", "columns")}
    files = {store / "session" / project_id / f"{info['id']}.json": _dump(session)}
    for m_info, parts in out:
        files[store / "message" / info["id"] / f"{m_info['id']}.json"] = _dump(m_info)
        for d in parts:
            files[store / "part" / m_info["id"] / f"{d['id']}.json"] = _dump(d)
    return files


def _model_for(session: Session, env: AgentEnv, cwd: str, lost: Counter[str]) -> tuple[str, str]:
    """(providerID, modelID) for another agent's session: the model OpenCode is configured with.

    Without one, refused before anything is written: OpenCode continues a session with the model
    of its last user message, and a model guessed now names a provider OpenCode may never have
    (once configured, ``opencode run --session`` fails with "Unexpected server error")."""
    configured = configured_model(env, cwd)
    original = session.model or "unknown"
    if configured is None:
        raise OxideError(
            f"OpenCode has no model configured, so the {session.agent} session cannot name one "
            "it will resolve when it resumes",
            hint=f'set "model": "<provider>/<model>" in {_global_config(env) / "opencode.json"} '
                 "(`opencode models` lists them; `opencode auth login` adds a provider), then run "
                 "this resume again")
    if configured[1] != original:
        lost[f"model {original} of {session.agent} recorded as OpenCode's configured model "
             f"{configured[0]}/{configured[1]}"] += 1
    return configured


def _global_config(env: AgentEnv) -> Path:
    xdg = env.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else env.home / ".config") / "opencode"


def configured_model(env: AgentEnv, cwd: str) -> tuple[str, str] | None:
    """The ``model`` (``provider/model``) of OpenCode's config: the project's ``opencode.json``
    (or ``.jsonc``) over ``$OPENCODE_CONFIG`` over the global ``$XDG_CONFIG_HOME/opencode/``."""
    base = _global_config(env)
    candidates = [base / "config.json", base / "opencode.json", base / "opencode.jsonc"]
    if env.environ.get("OPENCODE_CONFIG"):
        candidates.append(Path(env.environ["OPENCODE_CONFIG"]))
    tops = [*env.worktrees] or [Path(cwd)]
    candidates += [t / name for t in tops[:1] for name in ("opencode.json", "opencode.jsonc")]
    found = None
    for c in candidates:
        try:
            conf = loads_json(c.read_bytes()) if c.is_file() else None
        except OSError:
            conf = None
        value = conf.get("model") if isinstance(conf, dict) else None
        if isinstance(value, str) and "/" in value.strip("/"):
            provider, model = value.split("/", 1)
            found = (provider, model)
    return found


def _message_info(m: Message, mid: str, sid: str, role: str, ms: int, native: bool,
                  last_user: str | None, cwd: str, model: tuple[str, str] | None) -> dict[str, Any]:
    info: dict[str, Any] = dict(m.extra) if native else {}
    info.update(id=mid, sessionID=sid, role=role)
    if native and m.model and role == "assistant" and "modelID" not in info:
        info["modelID"] = m.model
    if m.usage is not None:
        info["tokens"] = dict(m.usage) if native else _tokens(m.usage)
    if m.cost is not None:
        info["cost"] = m.cost
    t = dict(as_dict(info.get("time")))
    t.setdefault("created", ms)
    info["time"] = t
    if native:
        return info
    provider, model_id = model or (_provider(m.model or "unknown"), m.model or "unknown")
    info["agent"] = "build"
    if role == "user":
        info["model"] = {"providerID": provider, "modelID": model_id}
        return info
    t.setdefault("completed", ms)
    info.setdefault("tokens", _tokens({}))
    info.setdefault("cost", 0)
    info.update(parentID=last_user or mid, modelID=model_id, providerID=provider, mode="build",
                path={"cwd": cwd, "root": cwd}, finish="stop")
    return info


def _session_info(session: Session, sid: str, project_id: str, cwd: str, native: bool,
                  out: list[tuple[dict[str, Any], list[dict[str, Any]]]],
                  model: tuple[str, str] | None) -> dict[str, Any]:
    """Session.Info, plus the db-only ``totals`` and ``todo`` of a session read from a db."""
    skip = ("parent_native_id",)
    info: dict[str, Any] = {k: v for k, v in session.extra.items() if k not in skip} if native else {}
    times = [i["time"]["created"] for i, _ in out]
    t = dict(as_dict(info.get("time")))
    t.setdefault("created", session.created_at or (times[0] if times else 0))
    t.setdefault("updated", session.updated_at or (times[-1] if times else t["created"]))
    info.update(id=sid, projectID=project_id, directory=cwd, time=t,
                title=session.title or info.get("title") or "Imported session")
    info.setdefault("slug", f"oxide-{session.id[-8:]}")
    info.setdefault("version", "oxide")
    parent = session.extra.get("parent_native_id")
    if native and isinstance(parent, str):
        info["parentID"] = parent
    if model is not None:
        info.update(agent="build", model={"id": model[1], "providerID": model[0]})
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
        p = load_json(f)
        if isinstance(p, dict) and env.belongs(p.get("worktree") if isinstance(p.get("worktree"), str)
                                               else None):
            return str(p.get("id") or f.stem)
    pid = session.extra.get("projectID")
    if native and isinstance(pid, str) and pid and pid != "global" and "/" not in pid:
        return pid
    return env.project_id or "global"


def _dump(obj: Mapping[str, Any]) -> bytes:
    obj = {k: v for k, v in obj.items() if k != ROW_KEY}
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str).encode()
