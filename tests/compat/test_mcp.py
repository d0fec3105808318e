"""`git oxide mcp` in a real agent: `git oxide init --mcp AGENT` registers it, the agent starts it
itself, the scripted model asks for its `search` tool, and the agent's next request to its model
holds what the search found (a session of the same repository, made earlier by that agent).
Codex 0.171 offers MCP tools only through its client-side tool search: its script searches first."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from . import checks
from .conftest import make_driver
from .modelserver import ModelServer, Turn, _tool_names

WORD = "quetzalcoatl"
SEED = "MCP-SEED: remember that the release is code-named " + WORD + "."
ASK = "MCP-ASK: what was the release code-named? Look it up in the project's history."


class HistoryModel(ModelServer):
    """The scripted model; a tool turn named ``oxide-search`` calls whatever the agent named our
    server's search tool (``mcp__git-oxide__search``, ``git-oxide_search``, or Codex's function
    ``search`` in the namespace its ``tool_search`` returned)."""

    def resolve(self, api: str, body: Mapping[str, Any], turn: Turn) -> tuple[str, dict[str, Any]] | None:
        if turn.kind == "tool" and turn.name == "oxide-search":
            names = [n for n in _tool_names(api, body) if "oxide" in n and n.endswith("search")]
            names += [f"{ns}{NAMESPACED}search" for ns in _searched_namespaces(body)]
            if not names:
                raise LookupError(f"the agent offers its model no search tool of git oxide: "
                                  f"{_tool_names(api, body)}")
            return names[0], dict(turn.args)
        return super().resolve(api, body, turn)


NAMESPACED = "::"  # a call of a function in a namespace (Responses API), as `namespace::name`
TOOL_SEARCH = "tool_search"  # a call of Codex's client-side tool search


def _searched_namespaces(body: Mapping[str, Any]) -> list[str]:
    """Namespaces of git oxide's tools that a Codex tool search returned earlier in the request."""
    out = []
    for it in body.get("input") or []:
        if isinstance(it, dict) and it.get("type") == "tool_search_output":
            for t in it.get("tools") or []:
                if isinstance(t, dict) and t.get("type") == "namespace" and "oxide" in str(t.get("name")):
                    out.append(str(t["name"]))
    return out


@pytest.fixture
def responses_with_tool_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripted Responses API also answers with Codex's client tool search (a
    ``tool_search_call`` item) and with a call of a function in a namespace: Codex 0.171 offers MCP
    tools to its model only through that search."""
    from . import modelserver

    plain = modelserver._responses

    def reply(model: str, text: str, call: Any, stream: bool, *usage: Any, **kw: Any) -> tuple[bytes, str]:
        if not call or (call[0] != TOOL_SEARCH and NAMESPACED not in call[0]):
            return plain(model, text, call, stream, *usage, **kw)
        ns, _, name = call[0].rpartition(NAMESPACED)
        payload, ctype = plain(model, text, (name, call[1]), stream, *usage, **kw)

        def item(it: dict[str, Any]) -> dict[str, Any]:
            if it.get("type") != "function_call":
                return it
            if call[0] == TOOL_SEARCH:
                return {"type": "tool_search_call", "id": it["id"], "call_id": it["call_id"],
                        "execution": "client", "status": it.get("status"), "arguments": call[1]}
            return {**it, "namespace": ns}

        def event(d: dict[str, Any]) -> dict[str, Any] | None:
            if call[0] == TOOL_SEARCH and d.get("type", "").startswith("response.function_call_arguments"):
                return None
            if isinstance(d.get("item"), dict):
                d["item"] = item(d["item"])
            if isinstance(d.get("response"), dict):
                d["response"]["output"] = [item(i) for i in d["response"].get("output") or []]
            return d

        if not stream:
            return json.dumps(event(json.loads(payload))).encode(), ctype
        blocks = []
        for block in payload.decode().split("\n\n"):
            if block.strip():
                head, data = block.split("\n", 1)
                d = event(json.loads(data.removeprefix("data: ")))
                if d is not None:
                    blocks.append(f"{head}\ndata: {json.dumps(d)}\n\n")
        return "".join(blocks).encode(), ctype

    monkeypatch.setattr(modelserver, "_responses", reply)


@pytest.mark.parametrize("agent", ["claude", "codex", "opencode"])
def test_the_agent_runs_our_server_and_its_model_gets_the_search_result(
        agent: str, compat_repo: Path, tmp_path: Path, responses_with_tool_search: None) -> None:
    srv = HistoryModel({}, log_path=tmp_path / "requests.jsonl").start()
    try:
        d = make_driver(agent, compat_repo, srv)
        srv.script.update({"MCP-SEED": [Turn.say("Noted.")],
                           "MCP-ASK": [*([Turn.tool(TOOL_SEARCH, {"query": "git oxide search", "limit": 5}).after(3.0)]  # as a real model's first answer takes: Codex starts MCP servers meanwhile, and its tool_search lists those started
                                         if agent == "codex" else []),  # Codex: find the tool first
                                       Turn.tool("oxide-search", {"query": WORD}),
                                       Turn.say("It was " + WORD + ".")]})
        seed = d.run(SEED).check()
        checks.oxide(compat_repo, "import")
        seed_id = checks.show(compat_repo, seed.native_id or WORD)["session"]["id"] if seed.native_id else None
        init = checks.oxide_json(compat_repo, "init", "--mcp", agent)
        assert [c["action"] for c in init["mcp"]] == ["add"], init
        if agent == "codex":  # its driver writes config.toml anew each run: keep what init made of it
            cfg = Path(init["mcp"][0]["path"])
            assert "[model_providers.fake]" in cfg.read_text()  # the user's settings kept
            d.write_config = lambda: cfg  # type: ignore[method-assign]
        asked = d.run(ASK)
        rows = srv.scripted_requests()
        called = [i for i, r in enumerate(rows) if (r.get("reply") or {}).get("call")
                  and r["reply"]["call"][0].endswith("search") and r["reply"]["call"][0] != TOOL_SEARCH]
        assert called, (f"{agent} never got the search call: {[r.get('error') for r in rows]}\n"
                        f"{asked.stderr[-2000:]}")
        name = rows[called[0]]["reply"]["call"][0]
        after = rows[called[0] + 1:]
        assert after, f"{agent} sent no request after calling {name}:\n{asked.stdout[-2000:]}\n{asked.stderr[-2000:]}"
        body = json.dumps(after[0]["body"], ensure_ascii=False)
        # what our server answered, as the agent handed it to its model: the hit's snippet, the session
        assert f"[{WORD}]" in body, f"{agent}'s next request lacks the search result:\n{body[-3000:]}"
        if seed_id:
            assert seed_id in body
        asked.check()
        checks.record({"agent": agent, "version": d.pin.version, "check": "mcp_search", "tool": name})
    finally:
        srv.stop()
