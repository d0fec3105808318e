"""`git oxide mcp` over 10,000 sessions: its start-up (spawn to the answer to ``initialize``) and a
``search`` call (request to answer), each against `git oxide --version` (the process start floor).

Budgets (issue 33, what a user feels): the server ready (its answer to ``initialize``) in under
500 ms, as an agent waits for it at every start (Codex gives it one second); a search over 10,000
sessions under 300 ms. The client here
is a few lines of JSON-RPC over the pipes (the protocol is one JSON object per line), so the
figures are the server's alone; the same store as the `list --json` row (``store._list_repo``).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from . import common
from .common import median, row
from .store import _list_repo

PROTOCOL = "2025-06-18"


def _send(pipe: IO[bytes], msg: dict[str, Any]) -> None:
    pipe.write(json.dumps(msg).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], want: int) -> dict[str, Any]:
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("git oxide mcp closed its stdout")
        msg = json.loads(line)
        if msg.get("id") == want:
            if "error" in msg:
                raise RuntimeError(f"git oxide mcp answered an error: {msg['error']}")
            return dict(msg["result"])


def one_session(path: Path, query: str) -> tuple[float, float, dict[str, Any]]:
    """(start-up seconds, search seconds, the search's result) of one server process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(common.oxide_cmd("mcp"), cwd=path, env=common.env(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdin is not None and p.stdout is not None
    try:
        _send(p.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        _answer(p.stdout, 1)
        started = time.perf_counter() - t0
        _send(p.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        t1 = time.perf_counter()
        _send(p.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "search", "arguments": {"query": query}}})
        res = _answer(p.stdout, 2)
        searched = time.perf_counter() - t1
    finally:
        p.stdin.close()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if res.get("isError"):
        raise RuntimeError(f"search failed: {res['content'][0]['text']}")
    return started, searched, json.loads(res["content"][0]["text"])


def bench_mcp(quick: bool, log: Any = print) -> list[dict[str, Any]]:
    n = 1_000 if quick else 10_000
    reps = 7 if quick else 15
    path = _list_repo(n, lambda m: log(f"  [mcp] {m}"))
    # Every generated session's first prompt asks to "fix the failing test": a search whose words
    # every session holds, the index's worst case (all of them ranked, the best 10 returned).
    query = "fix the failing test"
    _s, _q, res = one_session(path, query)
    if len(res.get("results") or []) != 10 or "next_cursor" not in res:
        raise RuntimeError(f"search over {n:,} sessions gave {res}")
    log(f"  [mcp] git oxide mcp start-up and search over {n:,} sessions, {reps} reps…")
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    starts, searches, floor, cpu, cpu_floor = [], [], [], [], []
    for i in range(reps + 1):
        floor.append(common.time_steps([common.oxide_cmd("--version")], path))
        s, q, _ = one_session(path, query)
        cpu.append(common.cpu_seconds(common.oxide_cmd("mcp"), path, init.encode() + b"\n"))
        cpu_floor.append(common.cpu_seconds(common.oxide_cmd("--version"), path))
        if i:  # one warm-up round
            starts.append(s)
            searches.append(q)
    f = median(floor[1:])
    rows = [row("git oxide --version (process start floor)", f, "info", samples=floor[1:]),
            row("CPU of git oxide --version (user + system)", median(cpu_floor[1:]), "info",
                samples=cpu_floor[1:]),
            row("CPU of git oxide mcp answering initialize, then exiting (user + system)",
                median(cpu[1:]), "info", baseline_s=median(cpu_floor[1:]), samples=cpu[1:])]
    ready = f"git oxide mcp start-up, spawn to its answer to initialize ({n:,} sessions)"
    searched = f"git oxide mcp search, every one of {n:,} sessions matching"
    for name, xs, budget in ((ready, starts, 0.500), (searched, searches, 0.300)):
        m = median(xs)
        rows.append(row(name, m, f"< {budget * 1000:.0f} ms", baseline_s=f, met=m < budget, samples=xs))
    return rows


def run(quick: bool) -> list[dict[str, Any]]:
    try:
        return bench_mcp(quick)
    except Exception as e:  # a report: one broken figure must not hide the others
        print(f"  [mcp] failed: {e}")
        return [common.error_row("git oxide mcp", "< 500 ms", e)]
