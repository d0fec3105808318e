"""What each response of a session spent, read from the usage the agents recorded (pure, stdlib).

The importers keep each agent's own usage record on its message (``Message.usage``, ``cost``),
in the agent's own shape. Here each becomes one ``Spent``: input, output, cache-read and
cache-write tokens, and the cost the agent itself recorded in USD, if it did. The four counts
do not overlap: ``input`` is the input that was neither read from nor written to a cache, and
``output`` includes reasoning (both are billed at the output price).

Each response is counted once, however the agent spread it over records:
- Claude Code writes a response as several lines repeating its ``message.id`` and usage: the
  importer joins them into one message, and a message id met again (a response split across two
  imports) replaces the first count with the last line's usage (the final one);
- Codex's ``token_count`` events carry the running total: a response's tokens are what the total
  grew by since the last one (a repeated event adds nothing; a total that went down started again);
- OpenCode (per message, with its cost), Gemini CLI (``tokens``), Qwen Code (``usageMetadata``),
  Copilot CLI (``session.usage_record``), Cline (``metrics``), pi (``usage`` with its cost) and
  Aider (``Tokens:`` lines, with their cost): one record per response, each counted as it is.

Whose input holds the cached tokens (seen in real runs against answers with a cached share, and in
the agents' own code): Codex's, Gemini CLI's, Qwen Code's, Copilot CLI's (1.0.102 reckons the
uncached input as ``inputTokens - cacheReadTokens - cacheWriteTokens``) and Cline's (3.0.65 prices
the same difference at the input price); Claude Code's, OpenCode's and pi's do not (Aider's
``sent`` holds the cache's share and the cache write twice over: ``AIDER_SENT_HOLDS_CACHE``).
Copilot CLI's ``cost`` is counted in premium requests, not dollars: it is not taken as a cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

# The agents whose recorded cost is in USD (Copilot CLI's is premium requests; Codex, Gemini CLI and
# Qwen Code record none).
USD_COST = frozenset(("claude", "opencode", "aider", "cline", "pi"))


class Spent(NamedTuple):
    seq: int
    at: int | None  # the message's time, ms since the epoch
    model: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None  # what the agent recorded, USD


def _n(d: Any, *keys: str) -> int:
    """The integer at ``keys`` in nested mappings, 0 when missing or not a number."""
    for k in keys:
        if not isinstance(d, Mapping):
            return 0
        d = d.get(k)
    return int(d) if isinstance(d, int | float) and not isinstance(d, bool) else 0


# Aider from this release on (v0.86.2, with the litellm it pins, 1.81.10) counts in ``sent`` the
# whole prompt, the cache hit and write included (litellm's prompt_tokens), plus the cache write
# again (its own ``message_tokens_sent += cache_write_tokens``): an Anthropic answer of 317 prompt
# tokens, 55 read from the cache and 11 written, is "328 sent, 11 cache write, 55 cache hit".
# Before it, unknown: its ``sent`` is taken as the uncached input.
AIDER_SENT_HOLDS_CACHE = (0, 86, 2)


def _release(version: str | None) -> tuple[int, ...] | None:
    """(0, 86, 2) of "v0.86.2" (a suffix such as ".dev3" aside); None when there is none."""
    nums = []
    for part in (version or "").strip().lstrip("v").split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        nums.append(int(digits))
    return tuple(nums) or None


def counts(agent: str, u: Mapping[str, Any], version: str | None = None) -> tuple[int, int, int, int]:
    """(input, output, cache read, cache write) of one usage record in ``agent``'s shape
    (``version``: the agent's, as its session records it; Aider's tells what its ``sent`` holds)."""
    if agent in ("claude",) or "cache_creation_input_tokens" in u or "cache_read_input_tokens" in u:
        return (_n(u, "input_tokens"), _n(u, "output_tokens"), _n(u, "cache_read_input_tokens"),
                _n(u, "cache_creation_input_tokens"))
    if agent == "opencode" or isinstance(u.get("cache"), Mapping):
        return (_n(u, "input"), _n(u, "output") + _n(u, "reasoning"), _n(u, "cache", "read"),
                _n(u, "cache", "write"))
    # Gemini's API (usageMetadata, Qwen Code's record; Gemini CLI's ``tokens`` the same in short
    # names): the prompt holds the cached tokens; tool-use prompts are input, thoughts output.
    if "promptTokenCount" in u:
        cached = _n(u, "cachedContentTokenCount")
        prompt, tool = _n(u, "promptTokenCount"), _n(u, "toolUsePromptTokenCount")
        out, thoughts = _n(u, "candidatesTokenCount"), _n(u, "thoughtsTokenCount")
        # Gemini's candidates leave the thoughts out (its total adds them); Qwen Code's record of
        # an OpenAI-style answer puts the completion tokens, reasoning included, in candidates and
        # the reasoning again in thoughts: its total is prompt + candidates, and says so
        if not (thoughts and "totalTokenCount" in u and _n(u, "totalTokenCount") == prompt + out + tool):
            out += thoughts
        return max(0, prompt - cached) + tool, out, cached, 0
    if "cached" in u or "thoughts" in u:
        cached = _n(u, "cached")
        return (max(0, _n(u, "input") - cached) + _n(u, "tool"), _n(u, "output") + _n(u, "thoughts"),
                cached, 0)
    if "inputTokens" in u:  # Copilot CLI, Cline: the input holds what was read from and written to a cache
        read, write = _n(u, "cacheReadTokens"), _n(u, "cacheWriteTokens")
        return max(0, _n(u, "inputTokens") - read - write), _n(u, "outputTokens"), read, write
    if "cacheRead" in u or "cacheWrite" in u or agent == "pi":
        return _n(u, "input"), _n(u, "output"), _n(u, "cacheRead"), _n(u, "cacheWrite")
    if "cached_input_tokens" in u:  # OpenAI's: input_tokens holds the cached ones
        cached = _n(u, "cached_input_tokens")
        return (max(0, _n(u, "input_tokens") - cached), _n(u, "output_tokens"), cached,
                _n(u, "cache_write_input_tokens"))
    # Aider, and any other record in these names
    sent, read, write = _n(u, "input_tokens"), _n(u, "cache_read_tokens"), _n(u, "cache_write_tokens")
    if agent == "aider" and (release := _release(version)) is not None and release >= AIDER_SENT_HOLDS_CACHE:
        sent = max(0, sent - read - 2 * write)
    return sent, _n(u, "output_tokens"), read, write


_CODEX_KEYS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")


def _codex_totals(m: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The running totals a Codex message holds, in their order: its ``token_count`` events kept
    as parts, then the one the importer put in its usage (the last while it was open)."""
    out = []
    for p in m.get("parts") or ():
        if isinstance(p, Mapping) and p.get("type") == "other" and p.get("kind") == "token_count":
            total = _n_map(p.get("raw"), "info", "total_token_usage")
            if total is not None:
                out.append(total)
    u = m.get("usage")
    if isinstance(u, Mapping) and isinstance(u.get("total"), Mapping):
        out.append(u["total"])
    return out


def _n_map(d: Any, *keys: str) -> Mapping[str, Any] | None:
    for k in keys:
        if not isinstance(d, Mapping):
            return None
        d = d.get(k)
    return d if isinstance(d, Mapping) else None


def _codex(messages: Iterable[tuple[int, Mapping[str, Any]]], model: str | None) -> list[Spent]:
    out: list[Spent] = []
    prev = dict.fromkeys(_CODEX_KEYS, 0)
    last_model = model
    for seq, m in messages:
        last_model = m.get("model") or last_model
        grew = dict.fromkeys(_CODEX_KEYS, 0)
        for total in _codex_totals(m):
            now = {k: _n(total, k) for k in _CODEX_KEYS}
            if now == prev:
                continue  # the same event again
            back = any(now[k] < prev[k] for k in _CODEX_KEYS)  # a new count began (a new process)
            for k in _CODEX_KEYS:
                grew[k] += now[k] if back else now[k] - prev[k]
            prev = now
        if any(grew.values()):
            cached = grew["cached_input_tokens"]
            out.append(Spent(seq, m.get("created_at"), last_model,
                             max(0, grew["input_tokens"] - cached), grew["output_tokens"], cached,
                             grew["cache_write_input_tokens"], None))
    return out


def spent(agent: str, messages: Iterable[tuple[int, Mapping[str, Any]]],
          model: str | None = None, version: str | None = None) -> list[Spent]:
    """What each response of a session spent, once each, in order (``messages``: (seq, the
    message as a plain dict, as ``codec`` writes it); ``model``: the session's, for messages
    that name none; ``version``: the agent's, as the session records it)."""
    if agent == "codex":
        return _codex(messages, model)
    by_key: dict[Any, Spent] = {}
    for seq, m in messages:
        u = m.get("usage")
        if not isinstance(u, Mapping):
            continue
        cost = m.get("cost") if agent in USD_COST else None
        cost = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        i, o, r, w = counts(agent, u, version)
        if not (i or o or r or w or cost):
            continue
        key: Any = seq
        if agent == "claude":
            native = _n_map(m.get("extra"), "message")
            if native is not None and isinstance(native.get("id"), str):
                key = native["id"]  # one response, however many lines (and imports) it took
        first = by_key.get(key)
        by_key[key] = Spent(first.seq if first else seq, m.get("created_at") if not first else first.at,
                            m.get("model") or model, i, o, r, w, cost)
    return list(by_key.values())
