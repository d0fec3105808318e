"""A scripted model server on 127.0.0.1 for driving the agents' real CLIs.

It speaks the four APIs the agents use (Anthropic Messages, OpenAI Responses, OpenAI Chat
Completions, and the Gemini API in modelserver_gemini.py; streaming as server-sent events, or one
JSON body) and plays a script of turns. The turn is chosen from the request itself, never from
server state: the last user prompt that holds a script marker names the exchange, and the number
of assistant turns after it names the step.
So a session the agent resumes later (from its own files, or from files oxide wrote) continues the
script exactly where it stood. Requests without the script's tools (titles, summaries, topic
checks) are side requests: they get a short text and use up nothing. A summarisation request (an
agent compacting its history, recognised by its prompt: ``SUMMARY_PROMPTS``) gets
``summary_text`` and uses up nothing either, even when it declares the script's tools.

Every request is logged (path, headers the agents identify themselves by, body) in memory and,
when ``log_path`` is given, as one JSON line each, so a test reads what the agent sent its model.

    srv = ModelServer({"PROMPT-1": [Turn.shell("echo hi > a.txt"), Turn.text("done")]})
    srv.start()            # srv.url == "http://127.0.0.1:PORT"
    ...                    # run the agent against srv.url
    srv.requests()         # [{"path": ..., "api": "anthropic"|"responses"|"chat", "body": {...}}]
    srv.stop()
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from . import modelserver_gemini as gemini

# The tool each agent declares for a shell command, an edit, a whole-file write (first found wins).
SHELL_TOOLS = ("Bash", "exec_command", "shell", "bash", "run_shell_command", "run_commands")
EDIT_TOOLS = ("Edit", "edit", "replace", "str_replace_based_edit_tool", "editor")
WRITE_TOOLS = ("Write", "write", "write_file", "create_file", "create", "editor")  # create: Copilot CLI
PATCH_TOOLS = ("apply_patch",)
# The request an agent sends to have its history summarised (its last user message starts so):
# answered with the server's summary text, never with a scripted turn (whose tool call the
# summariser would run, and ask again). Copilot CLI 1.0.102 sends the script's tools with it;
# Cline 3.0.65 sends none (it was a side request before, answered with ``side_text``).
SUMMARY_PROMPTS = ("Please create a detailed summary of the conversation so far",  # Copilot CLI
                   "Summarize this session for continuation.")  # Cline's agentic compaction
SUMMARY_TEXT = "COMPAT-SUMMARY: the user had shell.txt made and notes.txt written and edited."


@dataclass(frozen=True)
class Turn:
    """One assistant turn: text, or one tool call (generic kinds are mapped to the agent's tool)."""

    kind: str  # text | shell | edit | write | tool
    text: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    reasoning: str = ""  # a reasoning item sent first (Responses API: summary, encrypted content)
    pause: float = 0.0  # seconds before the answer, as a real model takes (what the agent starts meanwhile)

    def after(self, seconds: float) -> Turn:
        """This turn, answered only after ``seconds`` (a real model's first answer takes that long)."""
        return replace(self, pause=seconds)

    def thinking(self, summary: str) -> Turn:
        """This turn, preceded by a reasoning item (as reasoning models answer)."""
        return replace(self, reasoning=summary)

    @classmethod
    def say(cls, text: str) -> Turn:
        return cls("text", text=text)

    text_turn = say

    @classmethod
    def shell(cls, command: str) -> Turn:
        return cls("shell", args={"command": command})

    @classmethod
    def edit(cls, path: str, old: str, new: str) -> Turn:
        return cls("edit", args={"path": path, "old": old, "new": new})

    @classmethod
    def write(cls, path: str, content: str) -> Turn:
        return cls("write", args={"path": path, "content": content})

    @classmethod
    def tool(cls, name: str, args: Mapping[str, Any]) -> Turn:
        return cls("tool", name=name, args=args)


@dataclass(frozen=True)
class Usage:
    """What one answer reports it spent, in the common terms each API's shape is made from:
    ``prompt`` all input tokens, of which ``cached`` were read from a cache and ``written`` (the
    Anthropic API only) written to one; ``output`` all output tokens, of which ``reasoning`` were
    thinking. ``ModelServer(distinct_usage=True)`` gives every answer figures of its own
    (``Usage.nth``), so a sum that counts an answer twice or misses one shows."""

    prompt: int = 100
    output: int = 20
    cached: int = 0
    written: int = 0
    reasoning: int = 0

    @classmethod
    def nth(cls, k: int) -> Usage:
        # prompt stays under 1,000 (Aider writes larger counts rounded: "1.2k sent")
        return cls(prompt=300 + 17 * k, output=20 + 3 * k, cached=50 + 5 * k, written=10 + k, reasoning=k)


PLAIN = Usage()


# ---- reading a request: which tools, which prompt, how many assistant turns since -----------------

def _tool_names(api: str, body: Mapping[str, Any]) -> list[str]:
    if api == "gemini":
        return gemini.tool_names(body)
    names = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if api == "chat" and isinstance(t.get("function"), dict):
            names.append(str(t["function"].get("name")))
        elif t.get("name"):
            names.append(str(t["name"]))
        elif t.get("type") in ("local_shell",):
            names.append("local_shell")
    return names


def _tool_schema(api: str, body: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    if api == "gemini":
        return gemini.tool_schema(body, name)
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if api == "chat" and isinstance(t.get("function"), dict) and t["function"].get("name") == name:
            return t["function"].get("parameters") or {}
        if t.get("name") == name:
            return t.get("input_schema") or t.get("parameters") or {}
    return {}


def _texts(content: Any) -> list[str]:
    """The plain texts of a message's content (str, or blocks with text/input_text)."""
    if isinstance(content, str):
        return [content]
    out = []
    for b in content or []:
        if isinstance(b, dict) and b.get("type") in ("text", "input_text", None) and isinstance(
                b.get("text"), str):
            out.append(b["text"])
    return out


def conversation(api: str, body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The request's history as (kind, text): kind is user | assistant | tool_result | tool_call."""
    if api == "gemini":
        return gemini.conversation(body)
    out: list[tuple[str, str]] = []
    if api == "responses":
        items = body.get("input")
        if isinstance(items, str):
            return [("user", items)]
        for it in items or []:
            if not isinstance(it, dict):
                continue
            t = it.get("type", "message")
            if t == "message":
                role = it.get("role")
                text = "\n".join(_texts(it.get("content")))
                out.append(("assistant" if role == "assistant" else
                            "user" if role == "user" else "system", text))
            elif t.endswith("_call_output"):
                out.append(("tool_result", json.dumps(it.get("output"))))
            elif t.endswith("_call"):
                out.append(("tool_call", json.dumps(it)))
        return out
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role, content = m.get("role"), m.get("content")
        if role == "assistant":
            out.append(("assistant", "\n".join(_texts(content))))
            if m.get("tool_calls"):
                out.append(("tool_call", json.dumps(m["tool_calls"])))
        elif role == "tool":
            out.append(("tool_result", json.dumps(content)))
        elif role == "user":
            blocks = content if isinstance(content, list) else []
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                out.append(("tool_result", json.dumps(blocks)))
            texts = _texts(content)
            if texts:
                out.append(("user", "\n".join(texts)))
        else:
            out.append(("system", "\n".join(_texts(content))))
    return out


# ---- the server --------------------------------------------------------------------------------

class ModelServer:
    def __init__(self, script: Mapping[str, Sequence[Turn]], *, log_path: Path | None = None,
                 model: str = "fake-model", side_text: str = "Compat session",
                 summary_text: str = SUMMARY_TEXT, distinct_usage: bool = False) -> None:
        self.script = dict(script)
        self.distinct_usage = distinct_usage
        self._answers = 0
        self.summary_text = summary_text
        self.log_path = log_path
        self.model = model
        self.side_text = side_text
        self._log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> ModelServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # the log
    def requests(self, api: str | None = None, *, scripted: bool | None = None) -> list[dict[str, Any]]:
        with self._lock:
            rows = list(self._log)
        return [r for r in rows if (api is None or r["api"] == api)
                and (scripted is None or r.get("scripted") == scripted)]

    def scripted_requests(self) -> list[dict[str, Any]]:
        return self.requests(scripted=True)

    def last_request(self) -> dict[str, Any]:
        rows = self.scripted_requests()
        if not rows:
            raise AssertionError("the agent sent its model no scripted request")
        return rows[-1]

    def next_usage(self) -> Usage:
        """The usage the next answer reports (logged with it as ``usage``)."""
        with self._lock:
            self._answers += 1
            return Usage.nth(self._answers) if self.distinct_usage else PLAIN

    def _record(self, row: dict[str, Any]) -> None:
        with self._lock:
            self._log.append(row)
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")

    # choosing the turn
    @staticmethod
    def is_summary_request(api: str, body: Mapping[str, Any]) -> bool:
        """Whether the request's last user message is an agent's summarisation prompt."""
        users = [text for kind, text in conversation(api, body) if kind == "user"]
        return bool(users) and users[-1].lstrip().startswith(SUMMARY_PROMPTS)

    def choose(self, api: str, body: Mapping[str, Any]) -> tuple[Turn | None, str | None]:
        """The scripted turn for this request, or None for a side request."""
        if not any(n in SHELL_TOOLS or n in EDIT_TOOLS or n in WRITE_TOOLS or n in PATCH_TOOLS
                   for n in _tool_names(api, body)) and not self._aider_like(api, body):
            return None, None
        conv = conversation(api, body)
        for i in range(len(conv) - 1, -1, -1):
            kind, text = conv[i]
            if kind != "user":
                continue
            marker = next((mk for mk in self.script if mk in text), None)
            if marker is None:
                continue
            step = sum(1 for k, _ in conv[i + 1:] if k in ("assistant", "tool_call")
                       ) - self._double_counted(conv[i + 1:])
            turns = self.script[marker]
            return (turns[step] if step < len(turns) else Turn.say(f"(script of {marker} is over)")), marker
        return None, None

    @staticmethod
    def _double_counted(tail: Sequence[tuple[str, str]]) -> int:
        # Chat Completions puts a tool call on an assistant message: count that turn once.
        n = 0
        for a, b in itertools.pairwise(tail):
            if a[0] == "assistant" and b[0] == "tool_call" and not a[1]:
                n += 1
        return n

    def _aider_like(self, api: str, body: Mapping[str, Any]) -> bool:
        """Aider declares no tools: a chat request whose system prompt is Aider's is scripted."""
        if api != "chat":
            return False
        msgs = body.get("messages") or []
        system = " ".join("\n".join(_texts(m.get("content"))) for m in msgs
                          if isinstance(m, dict) and m.get("role") == "system")
        return "SEARCH/REPLACE" in system or "*SEARCH/REPLACE block*" in system

    def resolve(self, api: str, body: Mapping[str, Any], turn: Turn) -> tuple[str, dict[str, Any]] | None:
        """(tool name, arguments) for a tool turn, in the agent's own tool; None for text."""
        names = _tool_names(api, body)
        if turn.kind == "text":
            return None
        if turn.kind == "tool":
            return turn.name, dict(turn.args)
        if turn.kind == "shell":
            name = next((n for n in SHELL_TOOLS if n in names), None)
            if name is None:
                raise LookupError(f"no shell tool among {names}")
            props = _tool_schema(api, body, name).get("properties") or {}
            cmd = turn.args["command"]
            if "cmd" in props:
                return name, {"cmd": cmd}
            if "commands" in props:
                return name, {"commands": [cmd]}
            if props.get("command", {}).get("type") == "array":
                return name, {"command": ["bash", "-lc", cmd]}
            args: dict[str, Any] = {"command": cmd}
            if "description" in props:
                args["description"] = "Run the scripted command"
            return name, args
        if turn.kind in ("edit", "write"):
            pool = EDIT_TOOLS if turn.kind == "edit" else WRITE_TOOLS
            name = next((n for n in pool if n in names), None)
            if name is None:
                raise LookupError(f"no {turn.kind} tool among {names}")
            props = _tool_schema(api, body, name).get("properties") or {}
            pkey = next((k for k in ("file_path", "filePath", "path", "absolute_path") if k in props),
                        "file_path")
            # Copilot's create takes file_text; Cline's one ``editor`` tool writes a file given
            # new_text alone, edits given old_text too
            ckey = ("file_text" if "file_text" in props else
                    "new_text" if "new_text" in props and "content" not in props else "content")
            if turn.kind == "write":
                return name, {pkey: turn.args["path"], ckey: turn.args["content"]}
            if (props.get("edits") or {}).get("type") == "array":  # pi: {path, edits: [{oldText, newText}]}
                return name, {pkey: turn.args["path"],
                              "edits": [{"oldText": turn.args["old"], "newText": turn.args["new"]}]}
            okey = next((k for k in ("oldString", "old_str", "old_text") if k in props), "old_string")
            nkey = next((k for k in ("newString", "new_str", "new_text") if k in props), "new_string")
            edit = {pkey: turn.args["path"], okey: turn.args["old"], nkey: turn.args["new"]}
            if "instruction" in props:  # Gemini CLI's replace requires one
                edit["instruction"] = "Apply the scripted edit"
            return name, edit
        raise ValueError(turn.kind)


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if ctype == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.owner._record({"time": time.time(), "method": "GET", "path": self.path, "api": "get",
                            "scripted": False, "body": None})
        if path.endswith("/models"):
            m = self.owner.model
            self._send(200, json.dumps({"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "oxide"}],
                "models": []}).encode())
            return
        self._send(404, b'{"error":{"message":"not found","type":"not_found"}}')

    def do_HEAD(self) -> None:
        self._send(404, b"")

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "zstd":
            import zstandard  # codex may compress request bodies

            raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self._send(200, b'{"input_tokens": 12}')
            return
        if gemini.is_count_tokens(path):
            self._send(200, b'{"totalTokens": 12}')
            return
        api = ("anthropic" if path.endswith("/messages") else "responses" if path.endswith("/responses")
               else "chat" if path.endswith("/chat/completions") else "gemini" if gemini.is_gemini(path)
               else "other")
        row: dict[str, Any] = {"time": time.time(), "method": "POST", "path": self.path, "api": api,
                               "user_agent": self.headers.get("User-Agent"), "body": body}
        if api == "other":
            row["scripted"] = False
            self.owner._record(row)
            self._send(404, b'{"error":{"message":"not found"}}')
            return
        if api in ("gemini", "chat") and (snap := _state_snapshot_asked(api, body)) is not None:
            # Gemini CLI's and Qwen Code's compression: its summary, and (Qwen weighs the result by
            # the usage it reports) the summarised history as a large prompt.
            usage = replace(self.owner.next_usage(), prompt=SNAPSHOT_PROMPT_TOKENS) if api == "chat" \
                else self.owner.next_usage()
            row.update(scripted=False, marker=None, reply={"text": snap, "call": None}, usage=usage.__dict__)
            self.owner._record(row)
            payload, ctype = (gemini.reply if api == "gemini" else _chat)(
                str(body.get("model") or self.owner.model) if api == "chat" else gemini.model_of(path),
                snap, None, bool(body.get("stream")) or ":streamGenerateContent" in path, usage)
            self._send(200, payload, ctype)
            return
        try:
            summary = self.owner.is_summary_request(api, body)
            turn, marker = (None, None) if summary else self.owner.choose(api, body)
            if summary:
                row["summary"] = True
            row["scripted"] = turn is not None
            row["marker"] = marker
            call = self.owner.resolve(api, body, turn) if turn else None
            text = ((turn.text if turn and turn.kind == "text" else "") if turn else
                    self.owner.summary_text if summary else self.owner.side_text)
            if api == "gemini" and not turn:
                text = gemini.side_json(body) or text
            row["reply"] = {"text": text, "call": call}
            if turn is not None and turn.pause:
                time.sleep(turn.pause)
        except LookupError as e:
            row["scripted"] = True
            row["error"] = str(e)
            self.owner._record(row)
            self._send(400, json.dumps({"error": {"message": str(e), "type": "invalid_request"}}).encode())
            return
        usage = self.owner.next_usage()
        row["usage"] = usage.__dict__
        self.owner._record(row)
        stream = bool(body.get("stream")) or ":streamGenerateContent" in path
        model = str(body.get("model") or (gemini.model_of(path) if api == "gemini" else self.owner.model))
        reply = {"anthropic": _anthropic, "responses": _responses, "chat": _chat,
                 "gemini": gemini.reply}[api]
        more = {"reasoning": turn.reasoning} if api == "responses" and turn and turn.reasoning else {}
        payload, ctype = reply(model, text, call, stream, usage, **more)
        self._send(200, payload, ctype)


# ---- a compression's summary (Gemini CLI, Qwen Code) ----------------------------------------------

# What the summary says: a compat test looks for it in the request after a compression.
SNAPSHOT_TEXT = "COMPAT-SNAPSHOT: the conversation so far, summarised"
STATE_SNAPSHOT = f"<state_snapshot>\n<overall_goal>{SNAPSHOT_TEXT}</overall_goal>\n</state_snapshot>"
SNAPSHOT_PROMPT_TOKENS = 50_000


def _state_snapshot_asked(api: str, body: Mapping[str, Any]) -> str | None:
    """The summary, when a request without tools ends with a user turn that asks for a
    ``<state_snapshot>`` (Gemini CLI's and Qwen Code's summariser); else None. Qwen first asks its
    main model, tools declared (a "cache-sharing" request): that one stays a scripted request,
    whose answer (no snapshot) sends Qwen on to its summariser."""
    if _tool_names(api, body):
        return None
    conv = conversation(api, body)
    last = next((text for kind, text in reversed(conv) if kind == "user"), "")
    if conv and conv[-1][0] == "user" and "<state_snapshot>" in last:
        return STATE_SNAPSHOT
    return None


# ---- the three reply formats -------------------------------------------------------------------

def _sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        chunk = "" if name is None else f"event: {name}\n"
        chunk += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        out.append(chunk)
    return "".join(out).encode()


def _anthropic(model: str, text: str, call: tuple[str, dict[str, Any]] | None,
               stream: bool, spent: Usage = PLAIN) -> tuple[bytes, str]:
    mid = "msg_" + uuid.uuid4().hex[:24]
    # the Anthropic API's input_tokens are those neither read from nor written to the cache
    usage = {"input_tokens": spent.prompt - spent.cached - spent.written, "output_tokens": spent.output,
             "cache_creation_input_tokens": spent.written, "cache_read_input_tokens": spent.cached}
    blocks: list[dict[str, Any]] = []
    if text or not call:
        blocks.append({"type": "text", "text": text or "ok"})
    if call:
        blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": call[0],
                       "input": call[1]})
    stop = "tool_use" if call else "end_turn"
    if not stream:
        return json.dumps({"id": mid, "type": "message", "role": "assistant", "model": model,
                           "content": blocks, "stop_reason": stop, "stop_sequence": None,
                           "usage": usage}).encode(), "application/json"
    ev: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {**b, "input": {}}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": spent.output}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return _sse(ev), "text/event-stream"


def _responses(model: str, text: str, call: tuple[str, dict[str, Any]] | None,
               stream: bool, spent: Usage = PLAIN, reasoning: str = "") -> tuple[bytes, str]:
    rid = "resp_" + uuid.uuid4().hex
    if call:
        item: dict[str, Any] = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:24],
                                "call_id": "call_" + uuid.uuid4().hex[:24], "name": call[0],
                                "arguments": json.dumps(call[1]), "status": "completed"}
        if call[0] == "apply_patch" and set(call[1]) == {"input"}:
            item = {"type": "custom_tool_call", "id": item["id"], "call_id": item["call_id"],
                    "name": "apply_patch", "input": call[1]["input"], "status": "completed"}
    else:
        item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:24], "role": "assistant",
                "status": "completed", "content": [{"type": "output_text", "text": text or "ok",
                                                    "annotations": []}]}
    usage = {"input_tokens": spent.prompt, "input_tokens_details": {"cached_tokens": spent.cached},
             "output_tokens": spent.output, "output_tokens_details": {"reasoning_tokens": spent.reasoning},
             "total_tokens": spent.prompt + spent.output}
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    thought = {"type": "reasoning", "id": "rs_" + uuid.uuid4().hex[:24],
               "summary": [{"type": "summary_text", "text": reasoning}],
               "encrypted_content": "gAAAA" + uuid.uuid4().hex} if reasoning else None
    done = {**base, "status": "completed", "output": [*([thought] if thought else []), item],
            "usage": usage}
    if not stream:
        return json.dumps(done).encode(), "application/json"
    ev: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "sequence_number": 0, "response": base}),
        ("response.in_progress", {"type": "response.in_progress", "sequence_number": 1, "response": base}),
    ]
    if thought:  # the reasoning item first, output_index 0 (the other item's index is not read)
        ev.append(("response.output_item.added", {"type": "response.output_item.added",
                                                  "output_index": 0, "item": {**thought, "summary": []}}))
        ev.append(("response.reasoning_summary_text.delta", {
            "type": "response.reasoning_summary_text.delta", "item_id": thought["id"],
            "output_index": 0, "summary_index": 0, "delta": reasoning}))
        ev.append(("response.output_item.done", {"type": "response.output_item.done",
                                                 "output_index": 0, "item": thought}))
    ev.append(("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 2,
                                              "output_index": 0, "item": {**item, "status": "in_progress"}}))
    if item["type"] == "message":
        ev.append(("response.output_text.delta", {
            "type": "response.output_text.delta", "sequence_number": 3, "item_id": item["id"],
            "output_index": 0, "content_index": 0, "delta": item["content"][0]["text"]}))
        ev.append(("response.output_text.done", {
            "type": "response.output_text.done", "sequence_number": 4, "item_id": item["id"],
            "output_index": 0, "content_index": 0, "text": item["content"][0]["text"]}))
    elif item["type"] == "function_call":
        ev.append(("response.function_call_arguments.delta", {
            "type": "response.function_call_arguments.delta", "sequence_number": 3,
            "item_id": item["id"], "output_index": 0, "delta": item["arguments"]}))
        ev.append(("response.function_call_arguments.done", {
            "type": "response.function_call_arguments.done", "sequence_number": 4,
            "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]}))
    ev.append(("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 5,
                                             "output_index": 0, "item": item}))
    ev.append(("response.completed", {"type": "response.completed", "sequence_number": 6,
                                      "response": done}))
    if thought:
        for i, (_name, data) in enumerate(ev):
            data["sequence_number"] = i
    return _sse(ev), "text/event-stream"


def _chat(model: str, text: str, call: tuple[str, dict[str, Any]] | None,
          stream: bool, spent: Usage = PLAIN) -> tuple[bytes, str]:
    cid = "chatcmpl-" + uuid.uuid4().hex[:24]
    created = int(time.time())
    usage: dict[str, Any] = {"prompt_tokens": spent.prompt, "completion_tokens": spent.output,
                             "total_tokens": spent.prompt + spent.output}
    if spent.cached or spent.reasoning:  # the details only with figures of their own (as before)
        usage["prompt_tokens_details"] = {"cached_tokens": spent.cached}
        usage["completion_tokens_details"] = {"reasoning_tokens": spent.reasoning}
    tool_calls = [{"index": 0, "id": "call_" + uuid.uuid4().hex[:24], "type": "function",
                   "function": {"name": call[0], "arguments": json.dumps(call[1])}}] if call else None
    finish = "tool_calls" if call else "stop"
    if not stream:
        msg: dict[str, Any] = {"role": "assistant", "content": text if not call else (text or None)}
        if tool_calls:
            msg["tool_calls"] = [{k: v for k, v in t.items() if k != "index"} for t in tool_calls]
        return json.dumps({"id": cid, "object": "chat.completion", "created": created, "model": model,
                           "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                           "usage": usage}).encode(), "application/json"

    def chunk(delta: dict[str, Any], fin: str | None = None, **more: Any) -> dict[str, Any]:
        return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": fin}], **more}

    ev: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    if text:
        ev.append((None, chunk({"content": text})))
    if tool_calls:
        ev.append((None, chunk({"tool_calls": tool_calls})))
    ev.append((None, chunk({}, finish)))
    ev.append((None, {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                      "choices": [], "usage": usage}))
    ev.append((None, "[DONE]"))
    return _sse(ev), "text/event-stream"
