"""Another agent's parts as OpenCode part objects (oxide_git/agents/opencode/parts.py): what each
kind becomes, and that every change is counted in ``lost``."""

from __future__ import annotations

from collections import Counter

from oxide_git.agents.opencode.parts import part, provider
from oxide_git.core.model import Part, PartType

CWD = "/work/project"


def _one(p: Part, results: dict[str, Part] | None = None) -> tuple[list[dict[str, object]], Counter[str]]:
    lost: Counter[str] = Counter()
    return part(p, False, results or {}, CWD, lost, 1_767_225_600_000), lost


def test_a_model_names_its_provider_and_an_unknown_one_says_so() -> None:
    assert provider("claude-sonnet-4-5") == "anthropic"
    assert provider("gpt-5-codex") == "openai"
    assert provider("o3-mini") == "openai"
    assert provider("gemini-2.5-pro") == "google"
    assert provider("qwen3-coder") == "unknown"


def test_a_tool_result_without_its_call_becomes_text_and_is_counted() -> None:
    out, lost = _one(Part(PartType.TOOL_RESULT, {"call_id": "c1", "output": "done"}))
    assert out == [{"type": "text", "text": "Tool result:\n```\ndone\n```"}]
    assert lost == Counter({"tool results without their call became text": 1})
    # with its call in the same message, it is written with the call: nothing of its own
    out, lost = _one(Part(PartType.TOOL_RESULT, {"call_id": "c1", "output": "done"}),
                     {"c1": Part(PartType.TOOL_RESULT, {"call_id": "c1"})})
    assert out == [] and not lost


def test_a_file_is_a_file_part_with_its_text_beside_it() -> None:
    out, lost = _one(Part(PartType.FILE, {"path": "src/app.py", "text": "print('hi')\n"}))
    assert out == [{"type": "file", "mime": "text/plain", "filename": "src/app.py",
                    "url": "file:///work/project/src/app.py"},
                   {"type": "text", "text": "print('hi')\n", "synthetic": True}]
    out, _ = _one(Part(PartType.FILE, {"path": "/etc/hosts", "mime": "text/x-hosts"}))
    assert out == [{"type": "file", "mime": "text/x-hosts", "filename": "/etc/hosts", "url": "file:///etc/hosts"}]
    assert not lost


def test_an_image_keeps_its_data_or_path_and_one_without_either_is_dropped_and_counted() -> None:
    out, _ = _one(Part(PartType.IMAGE, {"mime": "image/jpeg", "data": "AAAA"}))
    assert out == [{"type": "file", "mime": "image/jpeg", "url": "data:image/jpeg;base64,AAAA", "filename": "image"}]
    out, _ = _one(Part(PartType.IMAGE, {"path": "shot.png"}))
    assert out == [{"type": "file", "mime": "image/png", "url": "file://shot.png", "filename": "shot.png"}]
    out, lost = _one(Part(PartType.IMAGE, {}))
    assert out == [] and lost == Counter({"images without data dropped": 1})
