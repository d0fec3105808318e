"""The aider agent: history grammar, sessions, incremental parsing, discovery, export."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oxide_git.agents import AgentEnv, FoundMessage, FoundSession, Problem, Resumable
from oxide_git.agents.aider import agent as aider
from oxide_git.core.errors import OxideError, UnsupportedFormat
from oxide_git.core.model import Message, Part, Session, from_iso, session_id_for

FIX = Path(__file__).resolve().parent.parent.parent / "fixtures" / "aider"


@dataclass
class Parsed:
    sessions: dict[str, Session] = field(default_factory=dict)  # last FoundSession wins
    messages: dict[str, list[Message]] = field(default_factory=dict)
    resumables: list[Resumable] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def order(self) -> list[Session]:
        return list(self.sessions.values())

    def msgs(self, i: int) -> list[Message]:
        return self.messages.get(self.order()[i].id, [])


def collect(events: Iterable[Any], into: Parsed | None = None) -> Parsed:
    out = into or Parsed()
    for e in events:
        if isinstance(e, FoundSession):
            out.sessions[e.session.id] = e.session
            out.messages.setdefault(e.session.id, [])
        elif isinstance(e, FoundMessage):
            assert e.session_id in out.sessions, "message before its session"
            out.messages[e.session_id].append(e.message)
        elif isinstance(e, Resumable):
            out.resumables.append(e)
        elif isinstance(e, Problem):
            out.problems.append(e)
        else:  # pragma: no cover
            raise AssertionError(e)
    return out


def parse(path: Path, **kw: Any) -> Parsed:
    return collect(aider.parse(path, **kw))


def shape(msgs: list[Message]) -> list[tuple[str, str]]:
    """(role, text or tool output) of each message."""
    out = []
    for m in msgs:
        if m.role == "tool":
            out.append(("tool", "\n".join(str(p.get("output")) for p in m.parts
                                          if p.type == "tool_result")))
        else:
            out.append((str(m.role), m.text()))
    return out


def ms(stamp: str) -> int:
    v = from_iso(stamp)
    assert v is not None
    return v


# -- fixtures, exactly ------------------------------------------------------------------------


def test_multi_session() -> None:
    path = FIX / "multi_session.md"
    p = parse(path)
    assert not p.problems
    s = p.order()
    assert [x.native_id for x in s] == [
        "2025-03-01 10:00:00#0", "2025-03-01 10:00:00#1", "2025-03-02 08:30:15#0"]
    assert s[0].id == session_id_for("aider", "2025-03-01 10:00:00#0", ms("2025-03-01T10:00:00Z"))
    assert len({x.id for x in s}) == 3
    assert s[0].created_at == ms("2025-03-01T10:00:00Z")
    assert s[0].extra["header"] == "# aider chat started at 2025-03-01 10:00:00"
    assert s[0].extra["aider_version"] == "v0.86.1"
    assert s[0].extra["weak_model"] == "anthropic/claude-haiku"
    assert s[0].model == "anthropic/claude-sonnet-4"
    assert s[0].title == "add a greeting to app.py"
    assert s[0].cwd == str(FIX) and s[0].worktree == str(FIX)
    assert s[2].model == "gpt-4o"

    m = p.msgs(0)
    assert [x.role for x in m] == ["tool", "user", "assistant", "tool", "user", "user",
                                   "assistant", "tool"]
    assert all(x.created_at == s[0].created_at for x in m)
    assert m[0].parts[0].data == {
        "call_id": "aider-0", "is_error": False,
        "output": "Aider v0.86.1\n"
                  "Main model: anthropic/claude-sonnet-4 with diff edit format, infinite output\n"
                  "Weak model: anthropic/claude-haiku\nGit repo: .git with 3 files"}
    assert m[1].text() == "add a greeting to app.py"
    a = m[2]
    assert a.model == "anthropic/claude-sonnet-4"
    assert a.text().startswith("I'll add the greeting.\n\nsrc/app.py\n```python\n<<<<<<< SEARCH")
    assert a.text().endswith(">>>>>>> REPLACE\n```")
    assert a.parts[1] == Part.patch(
        "<<<<<<< SEARCH\nprint('hi')\n=======\nprint('hello, world')\n>>>>>>> REPLACE",
        path="src/app.py")
    tokens = "Tokens: 3.2k sent, 222 received. Cost: $0.01 message, $0.05 session."
    assert a.usage == {"raw": tokens, "input_tokens": 3200, "output_tokens": 222,
                       "approximate": True, "session_cost": 0.05}
    assert a.cost == 0.01
    t = m[3]
    assert t.parts[0].get("output") == (
        tokens + "\nApplied edit to src/app.py\nCommit 862549d feat: greet the world")
    assert t.parts[1] == Part.file("src/app.py", action="edit")
    assert t.parts[2] == Part.other("commit", {
        "sha": "862549d", "message": "feat: greet the world",
        "line": "Commit 862549d feat: greet the world"})
    assert [x.text() for x in m[4:6]] == ["/ask what does it print?", "what does it print?"]
    assert m[6].text() == "It prints `hello, world`." and m[6].cost == 0.0
    assert m[7].parts[0].get("call_id") == "aider-2"

    assert p.msgs(1) == []  # header-only session kept, empty
    assert shape(p.msgs(2)) == [
        ("tool", "Aider v0.86.1\nMain model: gpt-4o with diff edit format"),
        ("user", "/add README.md"), ("tool", "Added README.md to the chat"),
        ("user", "thanks")]

    # a Resumable at every header after the first, the last one at the last header
    text = path.read_bytes()
    headers = [i for i in range(len(text)) if text.startswith(b"# aider chat started", i)]
    assert [r.offset for r in p.resumables] == [*headers[1:], headers[-1]]
    assert p.resumables[0].state == {"ordinals": {"2025-03-01 10:00:00": 1}, "input_at": 0}
    assert p.resumables[-1].state == {
        "ordinals": {"2025-03-01 10:00:00": 2}, "input_at": 0}


def test_headings_kept_inside_and_outside_fences() -> None:
    p = parse(FIX / "headings.md")
    (a,) = [m for m in p.msgs(0) if m.role == "assistant"]
    assert a.text() == (
        "# Project\n\nSome intro.\n\n```python\n# a comment that aider's own parser drops\n"
        "def f():\n    return 1\n```\n\n## Usage\n\nRun it.")
    assert p.order()[0].model is None


def test_interrupt_and_tool_only_session() -> None:
    p = parse(FIX / "interrupt.md")
    s = p.order()
    assert s[0].model == "openrouter/openai/gpt-oss-120b" and s[0].title is None
    (t,) = p.msgs(0)
    assert t.role == "tool" and t.parts[0].get("is_error") is True
    assert t.parts[0].get("output").splitlines()[2:] == [
        "", "", "^C again to exit", "", "", "^C KeyboardInterrupt"]
    assert shape(p.msgs(1)) == [("user", "explain the code"), ("assistant", "The code"),
                                ("tool", "^C KeyboardInterrupt")]
    assert p.msgs(1)[2].parts[0].get("is_error") is True


def test_tokens_and_costs() -> None:
    m = parse(FIX / "tokens.md").msgs(0)
    assert [x.role for x in m] == ["user", "assistant", "tool", "user", "assistant", "tool",
                                   "user", "tool"]
    assert m[1].usage is not None and m[1].cost == 0.02
    assert {k: m[1].usage[k] for k in ("input_tokens", "cache_read_tokens", "output_tokens")} == {
        "input_tokens": 15000, "cache_read_tokens": 13000, "output_tokens": 1100}
    assert m[4].usage == {"raw": "Tokens: 3.2k sent, 222 received.", "input_tokens": 3200,
                          "output_tokens": 222, "approximate": True}
    assert m[4].cost is None
    assert m[2].parts[0].get("is_error") is False
    # no assistant reply before it: the tokens line stays in the tool output only
    assert m[7].parts[0].get("is_error") is True
    assert "Tokens: 1 sent" in m[7].parts[0].get("output")


def test_edit_blocks() -> None:
    (a,) = [m for m in parse(FIX / "edit_blocks.md").msgs(0) if m.role == "assistant"]
    patches = [p for p in a.parts if p.type == "patch"]
    assert [p.get("path") for p in patches] == ["a.py", "b.py", "b.py", "c.py"]
    assert patches[0].get("text") == "<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE"
    assert patches[3].get("text") == "--- a/c.py\n+++ b/c.py\n@@ -1 +1 @@\n-z = 1\n+z = 2"
    assert "<<<<<<< SEARCH\ny = 2" in a.text() and a.text().endswith("+z = 2\n```")


def test_crlf() -> None:
    p = parse(FIX / "crlf.md")
    assert b"\r\n" in (FIX / "crlf.md").read_bytes()
    assert shape(p.msgs(0)) == [
        ("tool", "Aider v0.86.1"), ("user", "line one\n\nline three"),
        ("assistant", "Answer line 1\n\nAnswer line 3"), ("tool", "Applied edit to x.py")]
    assert not any("\r" in str(part.data) for m in p.msgs(0) for part in m.parts)


def test_partial_final_section() -> None:
    path = FIX / "partial.md"
    p = parse(path)
    assert shape(p.msgs(1)) == [("user", "second question"),
                                ("assistant", "The answer is partly wri")]
    last = path.read_bytes().index(b"# aider chat started at 2025-07-01 08")
    assert p.resumables[-1].offset == last


def test_preamble_and_bad_offset(tmp_path: Path) -> None:
    f = tmp_path / aider.HISTORY
    f.write_text("stray line\n\n# aider chat started at 2025-13-01 00:00:00\n\n#### hi  \n")
    p = parse(f)
    first, second = p.order()
    assert first.native_id == "preamble" and first.created_at is None
    assert shape(p.msgs(0)) == [("assistant", "stray line")]
    assert second.created_at is None and [x.text for x in p.problems] == [
        "invalid time in session header: 2025-13-01 00:00:00"]
    q = parse(f, offset=3)
    assert q.problems and "not at a session header" in q.problems[0].text


# -- incremental ------------------------------------------------------------------------------


def _view(p: Parsed) -> list[tuple[Session, list[Message]]]:
    return [(s, p.messages[s.id]) for s in p.order()]


def _resume(path: Path, before: Parsed) -> Parsed:
    """Restart from the last Resumable, replacing what came after it (what the store must do)."""
    last = before.resumables[-1]
    again = parse(path, offset=last.offset, state=last.state)
    merged = Parsed()
    for s in before.order():
        if s.source["offset"] < last.offset:
            merged.sessions[s.id] = s
            merged.messages[s.id] = before.messages[s.id]
    collect([], merged)
    for s in again.order():
        merged.sessions[s.id] = s
        merged.messages[s.id] = again.messages[s.id]
    merged.resumables = again.resumables
    return merged


@pytest.mark.parametrize("name", ["multi_session.md", "partial.md", "crlf.md", "tokens.md"])
def test_append_and_resume_equals_full_parse(tmp_path: Path, name: str) -> None:
    f = tmp_path / aider.HISTORY
    shutil.copy(FIX / name, f)
    first = parse(f)
    with f.open("ab") as out:
        out.write(b"tten.\n\n> Tokens: 2 sent, 3 received.  \n\n"
                  b"# aider chat started at 2025-03-01 10:00:00\n\n#### more  \n")
    resumed = _resume(f, first)
    full = parse(f)
    assert _view(resumed) == _view(full)
    assert resumed.resumables[-1] == full.resumables[-1]
    # resuming once more with nothing new changes nothing
    assert _view(_resume(f, full)) == _view(full)


def test_every_resumable_restarts_identically() -> None:
    path = FIX / "multi_session.md"
    events = list(aider.parse(path))
    for i, e in enumerate(events):
        if isinstance(e, Resumable) and i < len(events) - 1:
            again = list(aider.parse(path, offset=e.offset, state=e.state))
            assert again == events[i + 1 :]


# -- discover ---------------------------------------------------------------------------------


def test_discover(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b, c):
        d.mkdir()
    (a / aider.HISTORY).write_text("\n# aider chat started at 2025-01-01 00:00:00\n")
    (c / "custom.md").write_text("")
    (b / aider.HISTORY).mkdir()  # not a file
    env = AgentEnv(home=tmp_path / "home", environ={}, worktrees=(a, b, c))
    assert aider.discover(env) == [a / aider.HISTORY]
    env2 = AgentEnv(home=tmp_path, environ={"AIDER_CHAT_HISTORY_FILE": "custom.md"},
                    worktrees=(a, c))
    assert aider.discover(env2) == [a / aider.HISTORY, c / "custom.md"]
    assert aider.discover(AgentEnv(home=tmp_path, environ={})) == []


# -- export -----------------------------------------------------------------------------------


def _sessions(path: Path) -> list[tuple[Session, list[Message]]]:
    return _view(parse(path))


def _export_into(folder: Path, s: Session, msgs: list[Message]) -> aider.Export:
    """``resume --into aider``'s write: append what the export gives to both files."""
    moved = Session(**{**{f: getattr(s, f) for f in s.__slots__}, "cwd": str(folder)})
    exp = aider.export(moved, msgs, AgentEnv(folder, {}, (folder,)))
    for path, data in exp.files.items():
        with open(path, "ab") as out:
            out.write(data)
    return exp


@pytest.mark.parametrize("name", ["multi_session.md", "headings.md", "interrupt.md",
                                  "tokens.md", "edit_blocks.md", "crlf.md", "partial.md",
                                  "restored/.aider.chat.history.md"])
def test_export_writes_back_what_aider_wrote(tmp_path: Path, name: str) -> None:
    """Every session into an empty folder of its own: the file aider wrote, byte for byte, parts,
    ids and usage the same; all sessions into one folder: the whole file again."""
    src = FIX / name
    every = tmp_path / "all"
    every.mkdir()
    for i, (s, msgs) in enumerate(_sessions(src)):
        one = tmp_path / f"s{i}"
        one.mkdir()
        exp = _export_into(one, s, msgs)
        assert exp.cwd == str(one) and exp.command == ["aider", "--restore-chat-history"]
        assert not [x for x in exp.lost if "restores the whole" in x]
        if not msgs:  # a header alone at the end of a file: a run starting, read once it has said more
            assert _sessions(one / aider.HISTORY) == []
            _export_into(every, s, msgs)
            continue
        (b, got), = _sessions(one / aider.HISTORY)
        assert exp.native_id == b.native_id
        if s.native_id.endswith("#0"):
            assert b.native_id == s.native_id and b.id == s.id and exp.lost == []
        else:  # a second session started in the same second: alone in a file, it is #0
            assert exp.lost == [f"Sessions in this history file started in the same second: "
                                f"written here, this one's native id is {b.native_id} (it was "
                                f"{s.native_id})."]
        assert (b.title, b.model, b.created_at) == (s.title, s.model, s.created_at)
        assert [(m.role, m.parts, m.usage, m.cost, m.model) for m in got] == [
            (m.role, m.parts, m.usage, m.cost, m.model) for m in msgs]
        _export_into(every, s, msgs)
    assert (every / aider.HISTORY).read_bytes() == src.read_bytes()
    typed = src.parent / ".aider.input.history"
    if name.startswith("restored/"):
        assert (every / ".aider.input.history").read_bytes() == typed.read_bytes()


def test_export_twice_appends_nothing(tmp_path: Path) -> None:
    shutil.copytree(FIX / "restored", tmp_path, dirs_exist_ok=True)
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    for s, msgs in _sessions(tmp_path / aider.HISTORY):
        exp = _export_into(tmp_path, s, msgs)
        assert set(exp.files.values()) == {b""} and exp.native_id == s.native_id
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_restored_history_continues_the_session() -> None:
    """aider --restore-chat-history (0.86.2, real run): its section is the same session."""
    (s, msgs), (t, more) = _sessions(FIX / "restored" / aider.HISTORY)
    prompts = [m.text() for m in msgs if m.role == "user"]
    assert [p.split(":")[0] for p in prompts] == ["AIDER-PROMPT-1", "PROMPT-2"]
    assert s.native_id == "2026-12-01 19:39:52#0" and s.title is not None
    assert s.extra["restored_sections"] == ["# aider chat started at 2026-12-01 19:39:55"]
    assert s.model == "openai/fake-model" and s.extra["aider_version"] == "v0.86.2"
    assert [m.extra.get("typed_at") for m in msgs if m.role == "user"] == [
        "2026-12-01 19:39:54.507310", "2026-12-01 19:39:57.326030"]
    (patch,) = [p for m in msgs for p in m.parts if p.type == "patch"]
    assert patch.get("path") == "notes.txt" and "first line from aider" in patch.get("text")
    assert [p.get("path") for m in msgs for p in m.parts if p.type == "file"] == ["notes.txt"]
    # the next section restores nothing: a session of its own; its command line's line break
    # (a two-line --message) stays in the command line, not an assistant message
    assert t.native_id == "2026-12-01 19:39:58#0" and "restored_sections" not in t.extra
    assert [m.role for m in more] == ["tool", "user", "assistant", "tool", "tool"]
    assert more[0].parts[0].get("output").splitlines()[1] == "with two lines"
    assert more[1].text() == "PROMPT-3: start afresh\nwith two lines"


def test_restored_section_restart_and_growth(tmp_path: Path) -> None:
    """The restart point stays at the session's first header while restored sections follow."""
    src = (FIX / "restored" / aider.HISTORY).read_bytes()
    cut = src.index(b"\n# aider chat started at 2026-12-01 19:39:58")
    f = tmp_path / aider.HISTORY
    f.write_bytes(src[:cut])
    shutil.copy(FIX / "restored" / ".aider.input.history", tmp_path)
    first = parse(f)
    assert [r.offset for r in first.resumables] == [0]
    f.write_bytes(src)
    assert _view(_resume(f, first)) == _view(parse(f))


def test_binary_input_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "ls"
    f.write_bytes(Path(sys.executable).resolve().read_bytes()[:20000])
    with pytest.raises(UnsupportedFormat, match="not a text file"):
        list(aider.parse(f))
    f.write_bytes(b"\n# aider chat started at 2025-01-01 00:00:00\n\n#### hi\0  \n")
    with pytest.raises(UnsupportedFormat):
        list(aider.parse(f))


def test_export_of_a_fork_is_a_new_marked_section(tmp_path: Path) -> None:
    shutil.copytree(FIX / "restored", tmp_path, dirs_exist_ok=True)
    (s, msgs), _ = _sessions(tmp_path / aider.HISTORY)
    fork = Session(**{**{f: getattr(s, f) for f in s.__slots__}, "id": "f" * 32})
    exp = _export_into(tmp_path, fork, msgs[:3])
    assert exp.native_id == "2026-12-01 19:39:52#1"
    assert exp.files[tmp_path / ".aider.input.history"] == b""  # its prompt is there already
    again = _export_into(tmp_path, fork, msgs[:3])
    assert set(again.files.values()) == {b""} and again.native_id == exp.native_id
    sessions = _sessions(tmp_path / aider.HISTORY)
    (b, got), = [(x, m) for x, m in sessions if x.native_id == exp.native_id]
    assert b.extra["restored_from"] == "f" * 32
    assert [(m.role, m.parts) for m in got] == [(m.role, m.parts) for m in msgs[:3]]


def test_export_foreign_session(tmp_path: Path) -> None:
    sub = tmp_path / "src"
    s = Session(id="0" * 32, agent="claude", created_at=ms("2025-01-02T03:04:05Z"), cwd=str(sub))
    msgs = [
        Message("user", (Part.text("<environment>ctx</environment>"),), extra={"harness": True}),
        Message("user", (Part.text("fix it\nplease"),)),
        Message("assistant", (Part.reasoning("hmm"), Part.text("Looking."),
                              Part.tool_call("t1", "Read", {"path": "a.py"}))),
        Message("user", (Part.tool_result("t1", "# x = 1\n\n> y = 2"),)),
        Message("assistant", (Part.text("# Done\n> quoted"), Part.image("image/png"))),
    ]
    exp = aider.export(s, msgs, AgentEnv(tmp_path, {}, (tmp_path,)))
    assert exp.cwd == str(tmp_path)
    text = exp.files[tmp_path / aider.HISTORY].decode()
    assert text == (
        "\n# aider chat started at 2025-01-02 03:04:05\n\n"
        f"> git-oxide: restored session {'0' * 32}  \n"
        "\n#### fix it  \n#### please  \n"
        "\nLooking.\n\nTool call `Read` (t1):\n\n```json\n{\"path\": \"a.py\"}\n```\n\n"
        "Tool result (t1):\n\n```\n # x = 1\n\n > y = 2\n```\n\n"
        "\\# Done\n\\> quoted\n\n")
    assert exp.files[tmp_path / ".aider.input.history"].decode() == (
        "\n# 2025-01-02 03:04:05.000000\n+fix it\n+please\n")
    lost = exp.lost
    assert sum("Tool calls" in x for x in lost) == 1
    assert any("Reasoning" in x for x in lost) and any("image" in x for x in lost)
    assert any("1 message(s) that claude's harness" in x for x in lost)
    assert any("backslash" in x for x in lost)
    assert exp.native_id == "2025-01-02 03:04:05#0"
    # what aider's own splitter (utils.split_chat_history_markdown, 0.86.2) makes of it
    assert _aider_split(text) == [
        ("user", "fix it  \nplease  \n"),
        ("assistant", "\nLooking.\n\nTool call `Read` (t1):\n\n```json\n{\"path\": \"a.py\"}\n```"
                      "\n\nTool result (t1):\n\n```\n # x = 1\n\n > y = 2\n```\n\n\\# Done\n"
                      "\\> quoted\n\n")]


def _aider_split(text: str) -> list[tuple[str, str]]:
    """aider 0.86.2's ``split_chat_history_markdown`` (include_tool=False), line for line."""
    out: list[tuple[str, str]] = []
    bufs: dict[str, list[str]] = {"user": [], "assistant": [], "tool": []}

    def close(role: str) -> None:
        joined = "".join(bufs[role])
        if joined.strip():
            out.append((role, joined))
        bufs[role] = []

    for line in text.splitlines(keepends=True):
        if line.startswith("# "):
            continue
        if line.startswith("> "):
            close("assistant"), close("user")
            bufs["tool"].append(line[2:])
        elif line.startswith("#### "):
            close("assistant"), close("tool")
            bufs["user"].append(line[5:])
        else:
            close("user"), close("tool")
            bufs["assistant"].append(line)
    close("assistant"), close("user"), close("tool")
    return [(r, t) for r, t in out if r != "tool"]


def test_export_needs_a_folder(tmp_path: Path) -> None:
    s = Session(id="1" * 32, agent="aider")
    with pytest.raises(OxideError):
        aider.export(s, [], AgentEnv(tmp_path, {}))
    exp = aider.export(s, [], AgentEnv(tmp_path, {}, (tmp_path,)))
    assert exp.cwd == str(tmp_path) and any("1970" in x for x in exp.lost)


def test_module_is_pure() -> None:
    src = Path(aider.__file__).read_text()
    for banned in ("pygit2", "sqlite", "msgpack", "click", "watchdog", "print(", "time.time",
                   "datetime.now"):
        assert banned not in src


# -- robustness -------------------------------------------------------------------------------

_ALL = [FIX / n for n in ("multi_session.md", "headings.md", "interrupt.md", "tokens.md",
                          "edit_blocks.md", "crlf.md", "partial.md")]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(idx=st.integers(0, len(_ALL) - 1), cut=st.floats(0, 1), noise=st.binary(max_size=40).map(lambda b: b.replace(b"\0", b"")),
       flip=st.booleans())
def test_damaged_files_never_raise_nor_lose_earlier_sessions(
    tmp_path: Path, idx: int, cut: float, noise: bytes, flip: bool
) -> None:
    data = _ALL[idx].read_bytes()
    at = int(len(data) * cut)
    damaged = data[:at] + noise + (data[at:] if flip else b"")
    f = tmp_path / "damaged.md"
    f.write_bytes(data)
    full = parse(f)
    f.write_bytes(damaged)
    got = parse(f)
    assert got.resumables, "always a last Resumable"
    # every session whose section ends (the next header line is whole) before the damage is intact
    for s in full.order():
        nxt = [o.source["offset"] for o in full.order() if o.source["offset"] > s.source["offset"]]
        if nxt and data.index(b"\n", min(nxt)) < at:
            assert got.sessions[s.id] == s
            assert got.messages[s.id] == full.messages[s.id]


def test_an_input_history_given_as_a_chat_history_holds_no_session() -> None:
    """``resume --into aider`` writes both files; importing the input history alone finds none."""
    p = parse(FIX / "restored" / ".aider.input.history")
    assert p.sessions == {} and len(p.resumables) == 1
    assert [x.text.split(":")[0] for x in p.problems] == ["an aider input history, not a chat history"]


def test_input_history_entries() -> None:
    from oxide_git.agents.aider.input import parse_entries, render

    text = "\n# 2026-01-01 10:00:00.000001\n+one\n+two\n\n\n# 2026-01-01 10:00:01.5\n+three\n"
    entries = parse_entries(text)
    assert [(e.time, e.text) for e in entries] == [("2026-01-01 10:00:00.000001", "one\ntwo"),
                                                   ("2026-01-01 10:00:01.5", "three")]
    assert "".join(e.raw for e in entries) == text
    assert render("2026-01-01 10:00:00.000001", "one\ntwo") == entries[0].raw


def test_input_history_matching(tmp_path: Path) -> None:
    """Prompts, typed confirmations and the ``/run`` entries of commands aider ran find their
    messages (as in the real histories: answers logged lower-cased, a prompt's trailing spaces and
    empty last lines not in the chat, ``/run`` written twice); an answer taken by default takes
    no entry typed later."""
    (tmp_path / aider.HISTORY).write_text(
        "\n# aider chat started at 2025-12-03 14:43:45\n\n"
        "> Create new file? (Y)es/(N)o [Yes]: y  \n\n"
        "#### make it  \n####   \n\nOk.\n\n"
        "> Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n\n"
        ">  \n> Running ls -a  \n\n"
        "#### again  \n\nSure.\n\n> Add file? (Y)es/(N)o [Yes]: y  \n")
    entries = ("\n# 2025-12-03 14:44:00.1\n+make it \n+\n+\n"
               "\n# 2025-12-03 14:44:06.2\n+Y\n"
               "\n# 2025-12-03 14:44:07.3\n+/run ls -a\n\n# 2025-12-03 14:44:07.4\n+/run ls -a\n"
               "\n# 2025-12-03 14:45:00.5\n+again\n"
               "\n# 2025-12-03 14:46:00.6\n+N\n")
    (tmp_path / ".aider.input.history").write_text(entries)
    (s, msgs), = _sessions(tmp_path / aider.HISTORY)
    typed = [(str(m.role), m.extra.get("input", "").count("\n# ")) for m in msgs]
    assert typed == [("tool", 0), ("user", 1), ("assistant", 0), ("tool", 1), ("tool", 2),
                     ("user", 1), ("assistant", 0), ("tool", 0)]
    out = tmp_path / "back"
    out.mkdir()
    _export_into(out, s, msgs)
    # every entry but the answer no confirmation took
    assert (out / ".aider.input.history").read_text() == entries[:entries.index("\n# 2025-12-03 14:46")]


def test_a_command_echo_takes_no_entry(tmp_path: Path) -> None:
    """``/code X`` is logged as ``#### /code X`` and ``#### X``: only the first was typed."""
    (tmp_path / aider.HISTORY).write_text(
        "\n# aider chat started at 2025-05-04 17:00:00\n\n#### /code fix it  \n\n#### fix it  \n\n"
        "Done.\n\n#### fix it  \n\nAgain.\n")
    (tmp_path / ".aider.input.history").write_text(
        "\n# 2025-05-04 17:00:01.0\n+/code fix it\n\n# 2025-05-04 17:00:09.0\n+fix it\n")
    (_s, msgs), = _sessions(tmp_path / aider.HISTORY)
    assert [m.extra.get("typed_at") for m in msgs if m.role == "user"] == [
        "2025-05-04 17:00:01.0", None, "2025-05-04 17:00:09.0"]


def test_a_starting_run_is_read_once_it_says_whether_it_restored(tmp_path: Path) -> None:
    """aider writes its header and command line a second or more before its announcements: an
    import in between (a running watch) must not make a session of a restored section."""
    src = (FIX / "restored" / aider.HISTORY).read_bytes()
    second = src.index(b"\n# aider chat started at 2026-12-01 19:39:55")
    announced = src.index(b"> Aider v0.86.2", second)
    shutil.copy(FIX / "restored" / ".aider.input.history", tmp_path)
    f = tmp_path / aider.HISTORY
    f.write_bytes(src[:announced])
    starting = parse(f)
    assert len(starting.sessions) == 1 and [r.offset for r in starting.resumables] == [0]
    f.write_bytes(src[:src.index(b"\n# aider chat started at 2026-12-01 19:39:58")])
    grown = _resume(f, starting)
    assert _view(grown) == _view(parse(f)) and len(grown.sessions) == 1
    assert [m.text() for m in grown.msgs(0) if m.role == "user"][1].startswith("PROMPT-2")


def test_export_says_when_the_file_holds_more_of_the_session(tmp_path: Path) -> None:
    """A rewound (or not yet re-imported) session: aider restores the longer one in the file."""
    shutil.copytree(FIX / "restored", tmp_path, dirs_exist_ok=True)
    (s, msgs), (t, more) = _sessions(tmp_path / aider.HISTORY)
    longer = "The history file holds more of this session"
    assert [m.role for m in msgs[:4]] == ["tool", "user", "assistant", "tool"]
    for cut in (3, 4):  # inside its first section; at the end of it (a restored one follows)
        exp = _export_into(tmp_path, s, msgs[:cut])
        assert set(exp.files.values()) == {b""} and any(longer in x for x in exp.lost)
    assert not any(longer in x for x in _export_into(tmp_path, s, msgs).lost)
    assert not any(longer in x for x in _export_into(tmp_path, t, more).lost)
