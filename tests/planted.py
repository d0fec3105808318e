"""Test data shared by the redaction, export and share tests: planted secrets of every rule's kind
and a hand-written Claude Code transcript that carries them in every place a message can."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

_R = random.Random(7)


def _rand(n: int, chars: str = string.ascii_letters + string.digits) -> str:
    while True:
        s = "".join(_R.choice(chars) for _ in range(n))
        if not any(c.isalpha() for c in chars) or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
            return s


B64 = string.ascii_letters + string.digits + "+/"
# kind -> (text that carries it, the secret that must never be stored)
PLANTED: dict[str, tuple[str, str]] = {}
for kind, secret, carrier in [
    ("openai_key", "sk-proj-" + _rand(40), "export OPENAI_API_KEY={}"),
    ("anthropic_key", "sk-ant-api03-" + _rand(40), "use {} for claude"),
    ("google_api_key", "AIza" + _rand(35), "maps key {} ok"),
    ("aws_access_key_id", "AKIA" + _rand(16, string.ascii_uppercase + string.digits), "id {}"),
    ("aws_secret_access_key", _rand(40, B64), "aws_secret_access_key = {}"),
    ("github_token", "ghp_" + _rand(36), "git push https://github.com with {}"),
    ("gitlab_token", "glpat-" + _rand(20), "token for gitlab: {}"),
    ("slack_token", "xoxb-" + _rand(10, string.digits) + "-" + _rand(24), "slack {}"),
    ("stripe_key", "sk_live_" + _rand(24), "stripe={}"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _rand(20) + "." + _rand(43), "cookie {} set"),
    ("url_credentials", "deploy:" + _rand(16), "git clone https://{}@git.example.com/r.git"),
    ("password", "Tr0ub4dor&" + _rand(6), "DB_PASSWORD={}"),
    ("secret", _rand(24), '{{"client_secret": "{}"}}'),
    ("bearer_token", _rand(32), "curl -H 'Authorization: Bearer {}' https://api.example.com"),
]:
    PLANTED[kind] = (carrier.format(secret), secret)
KEY_BODY = _rand(64, B64)
PLANTED["private_key"] = (
    f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n{_rand(64, B64)}\n-----END OPENSSH PRIVATE KEY-----",
    KEY_BODY)

# The part of each secret a leak would show (url credentials: the password after the colon).
NEEDLES = [s.split(":", 1)[1] if k == "url_credentials" else s for k, (_t, s) in PLANTED.items()]


def line(kind: str, uuid: int, parent: int | None, message: object, sid: str, **extra: object) -> str:
    return json.dumps({
        "parentUuid": None if parent is None else f"00000000-0000-4000-8000-{parent:012d}",
        "isSidechain": False, "userType": "external", "cwd": extra.pop("cwd", "/work/project"),
        "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": kind, "message": message,
        "uuid": f"00000000-0000-4000-8000-{uuid:012d}",
        "timestamp": f"2026-02-01T10:{uuid // 60:02d}:{uuid % 60:02d}.000Z", **extra})


def claude_transcript(path: Path, cwd: str, sid: str = "50000000-0000-4000-8000-000000000005",
                      secrets: bool = True, turns: int = 1) -> Path:
    """A Claude Code JSONL file: prompts, tool calls and results, raw unknown lines; with every
    planted secret spread over the prompt, a tool input, a tool output and a raw line."""
    texts = [t for t, _s in PLANTED.values()] if secrets else ["nothing secret here"]
    lines, n = [], 0
    for turn in range(turns):
        base = turn * 10
        n = base + 1
        prompt = f"Turn {turn}: please fix the deploy script.\n" + "\n".join(texts[0::3])
        lines.append(line("user", n, base or None, {"role": "user", "content": prompt}, sid, cwd=cwd))
        lines.append(line("assistant", n + 1, n, {
            "model": "claude-opus-4-6", "id": f"msg_{turn}", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "Running the script. " + " ".join(texts[1::3])},
                        {"type": "tool_use", "id": f"toolu_{turn}", "name": "Bash",
                         "input": {"command": "./deploy.sh --verbose", "env": texts[2::3],
                                   "api_token": PLANTED["secret"][1]}}],
            "usage": {"input_tokens": 3, "output_tokens": 1}}, sid, cwd=cwd))
        lines.append(line("user", n + 2, n + 1, {"role": "user", "content": [
            {"tool_use_id": f"toolu_{turn}", "type": "tool_result",
             "content": [{"type": "text", "text": "deploy output\n" + "\n".join(texts)}]}]}, sid, cwd=cwd,
            toolUseResult={"stdout": "\n".join(texts), "stderr": ""}))
        lines.append(json.dumps({"type": "mystery-event", "payload": {"note": texts[-1], "secrets": texts},
                                 "sessionId": sid, "uuid": f"00000000-0000-4000-8000-{n + 3:012d}"}))
        lines.append(line("assistant", n + 4, n + 2, {
            "model": "claude-opus-4-6", "id": f"msg_{turn}b", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": f"Deployed (turn {turn})."}],
            "usage": {"input_tokens": 3, "output_tokens": 1}}, sid, cwd=cwd))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
