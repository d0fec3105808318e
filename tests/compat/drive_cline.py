"""Cline 3.x: Chat Completions through its ``openai-compatible`` provider; sessions under
``~/.cline/data/sessions/<id>/``.

``setup`` writes ``~/.cline/data/settings/providers.json`` as ``cline auth -p openai-compatible -b
URL -k KEY -m MODEL`` does. A turn is ``cline --json PROMPT``; its output names no session id,
so the newest session folder of this repository is the run's. ``cline --id ID`` resumes only in
the terminal UI, so a resume speaks the Agent Client Protocol to ``cline --acp`` over stdio
(``initialize``, ``session/load``, ``session/set_model``, ``session/prompt``, every permission
request allowed). ACP wants a Cline account unless ``CLINE_API_KEY`` is set; ``CLINE_PROVIDER``
then picks the provider. Every run starts a background "hub" daemon (a WebSocket server on
127.0.0.1, port 25463 unless ``CLINE_HUB_PORT`` says otherwise): each driver has a port of its
own, and the hub is stopped after every run (``cline hub stop``, repeated until it is gone).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .driver import PROMPT2, Driver, Run

MODEL = "fake-model"
KEY = "sk-cline-compat-key"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ClineDriver(Driver):
    name = "cline"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hub_port = free_port()

    def cline_dir(self) -> Path:
        return self.home / ".cline"

    def sessions(self) -> Path:
        return self.cline_dir() / "data" / "sessions"

    def setup(self) -> None:
        settings = self.cline_dir() / "data" / "settings"
        settings.mkdir(parents=True, exist_ok=True)
        doc = {"version": 1, "lastUsedProvider": "openai-compatible", "modes": {}, "providers": {
            "openai-compatible": {"settings": {"provider": "openai-compatible", "apiKey": KEY,
                                               "model": MODEL, "baseUrl": self.server.url + "/v1"},
                                  "updatedAt": "2026-12-01T00:00:00.000Z", "tokenSource": "manual"}}}
        path = settings / "providers.json"
        path.write_text(json.dumps(doc, indent=2))
        path.chmod(0o600)

    def limit_context(self, tokens: int) -> None:
        """Give the model a context window of ``tokens`` (providers.json's ``contextWindow``):
        Cline compacts once a request reaches 90% of it."""
        path = self.cline_dir() / "data" / "settings" / "providers.json"
        doc = json.loads(path.read_text())
        doc["providers"]["openai-compatible"]["settings"]["contextWindow"] = tokens
        path.write_text(json.dumps(doc, indent=2))

    def env(self) -> dict[str, str]:
        env = super().env()
        env.update(CLINE_HUB_PORT=str(self.hub_port), CLINE_NO_AUTO_UPDATE="1")
        return env

    def run_argv(self, prompt: str) -> list[str]:
        return [str(self.binary), "--json", prompt]

    def _exec(self, argv: Sequence[str], extra_env: Mapping[str, str] | None = None,
              timeout: int | None = None) -> Run:
        try:
            return super()._exec(argv, extra_env, timeout)
        finally:
            self.stop_hub()

    def native_id_of(self, run: Run) -> str | None:
        """The newest session of this repository (the JSON output does not name it)."""
        best: tuple[str, str] | None = None
        for manifest in self.sessions().glob("*/*.json"):
            if manifest.name.endswith(".messages.json"):
                continue
            try:
                doc = json.loads(manifest.read_text())
            except (OSError, ValueError):
                continue
            if doc.get("cwd") == str(self.repo) and (best is None or doc["started_at"] > best[0]):
                best = (doc["started_at"], doc["session_id"])
        return best[1] if best else None

    def resume(self, native_id: str, prompt: str = PROMPT2) -> Run:
        env = self.env()
        # ACP: no account here; the key set aside makes it use the configured provider
        env.update(CLINE_API_KEY="unused", CLINE_PROVIDER="openai-compatible", CLINE_MODEL=MODEL)
        argv = [str(self.binary), "--acp"]
        try:
            return _acp(argv, env, self.repo, native_id, prompt, self.timeout)
        finally:
            self.stop_hub()

    def stop_hub(self) -> None:
        """``cline hub stop`` until no hub of this driver's port runs; a hub that outlives 30 s of
        that is terminated. A run starts its hub detached, and on a loaded host the hub may write
        its discovery record only after the first ``hub stop`` looked for it (seen in CI: the hub
        outlived the run)."""
        deadline = time.monotonic() + 30
        while True:
            subprocess.run([str(self.binary), "hub", "stop"], cwd=self.repo, env=self.env(),
                           capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
            settle = time.monotonic() + 3
            while self.hub_pids() and time.monotonic() < settle:
                time.sleep(0.1)
            if not self.hub_pids() or time.monotonic() >= deadline:
                break
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.hub_pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            settle = time.monotonic() + 5
            while self.hub_pids() and time.monotonic() < settle:
                time.sleep(0.1)

    def hub_pids(self) -> list[int]:
        """Hub daemons on this driver's port (each started by a run of ours)."""
        out = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--cline-hub-daemon" in cmd and str(self.hub_port).encode() in cmd:
                out.append(int(proc.name))
        return out

    def store(self) -> list[Path]:
        return [self.sessions()]

    def session_files(self, native_id: str) -> list[Path]:
        folder = self.sessions() / native_id
        return [folder / f"{native_id}.json", folder / f"{native_id}.messages.json"]


def _acp(argv: list[str], env: dict[str, str], cwd: Path, sid: str, prompt: str, timeout: int) -> Run:
    """One prompt to session ``sid`` over ACP; stdout is the JSON-RPC transcript."""
    with tempfile.TemporaryFile() as errors:  # a pipe nobody reads could fill and stall the agent
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=errors)
        code, transcript = _talk(proc, cwd, sid, prompt, timeout)
        errors.seek(0)
        err = errors.read().decode(errors="replace")
    return Run(argv, code, "\n".join(transcript), err, native_id=sid)


def _talk(proc: subprocess.Popen[bytes], cwd: Path, sid: str, prompt: str,
          timeout: int) -> tuple[int, list[str]]:
    """initialize, session/load, session/set_model, session/prompt; (0 on end_turn, the lines)."""
    assert proc.stdin is not None and proc.stdout is not None
    transcript: list[str] = []
    deadline = time.monotonic() + timeout
    counter = iter(range(1, 1000))
    lines: queue.Queue[bytes] = queue.Queue()
    out = proc.stdout

    def pump() -> None:  # a reader of its own: a silent agent must not hang the test
        for line in iter(out.readline, b""):
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=pump, daemon=True).start()

    def send(obj: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(obj) + "\n").encode())
        proc.stdin.flush()

    def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        n = next(counter)
        send({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(method) from None
            if not line:
                raise EOFError(f"cline --acp exited during {method}")
            transcript.append(line.decode(errors="replace").rstrip("\n"))
            msg = json.loads(line)
            if msg.get("id") == n and ("result" in msg or "error" in msg):
                return dict(msg)
            if "method" in msg and "id" in msg:  # the agent asks us: allow, else refuse
                opts = (msg.get("params") or {}).get("options") or []
                allow = next((o for o in opts if str(o.get("kind", "")).startswith("allow")), None)
                if msg["method"] == "session/request_permission" and allow:
                    send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "outcome": {"outcome": "selected", "optionId": allow["optionId"]}}})
                else:
                    send({"jsonrpc": "2.0", "id": msg["id"],
                          "error": {"code": -32601, "message": "not offered by this client"}})

    code = 1
    try:
        call("initialize", {"protocolVersion": 1, "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}})
        steps = [("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []}),
                 ("session/set_model", {"sessionId": sid, "modelId": MODEL}),
                 ("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": prompt}]})]
        for method, params in steps:
            reply = call(method, params)
            if "error" in reply:
                break
        else:
            code = 0 if reply["result"].get("stopReason") == "end_turn" else 2
    except (EOFError, TimeoutError, ValueError) as e:
        transcript.append(f"(client: {e})")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait(timeout=30)
    return code, transcript


DRIVER = ClineDriver
