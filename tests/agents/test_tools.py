"""What another agent's tool call is (agents/tools.py), as the exporters hand it over."""

from __future__ import annotations

from oxide_git.agents import tools
from oxide_git.agents.tools import Call


def test_shell_calls_of_every_agent() -> None:
    assert tools.classify("Bash", {"command": "ls -la"}) == Call("shell", command="ls -la")
    assert tools.classify("exec_command", {"cmd": "ls"}) == Call("shell", command="ls")
    assert tools.classify("shell", {"command": ["bash", "-lc", "make test"]}) == Call("shell", command="make test")
    assert tools.classify("shell", {"command": ["rg", "a b"]}) == Call("shell", command="rg 'a b'")
    assert tools.classify("bash", '{"command": "pwd"}') == Call("shell", command="pwd")  # JSON text
    assert tools.classify("run_commands", {"commands": ["a", "b"]}) == Call("shell", command="a && b")
    assert tools.classify("web_search", {"q": "x"}) is None


def test_file_calls() -> None:
    assert tools.classify("Write", {"file_path": "/p/a.txt", "content": "x\n"}) == Call(
        "write", path="/p/a.txt", content="x\n")
    assert tools.classify("edit", {"filePath": "a", "oldString": "o", "newString": "n"}) == Call(
        "edit", path="a", edits=(("o", "n"),))
    assert tools.classify("Read", {"file_path": "/p/a"}) == Call("read", path="/p/a")
    assert tools.classify("Edit", {"file_path": "a", "old_string": "o"}) is None  # says too little


def test_a_codex_patch_of_one_file_is_a_write_or_an_edit() -> None:
    add = "*** Begin Patch\n*** Add File: notes.txt\n+one\n+two\n*** End Patch\n"
    assert tools.classify("apply_patch", add) == Call("write", path="notes.txt", content="one\ntwo\n")
    upd = "*** Begin Patch\n*** Update File: a.py\n@@\n keep\n-old\n+new\n@@\n-x\n+y\n*** End Patch"
    assert tools.classify("apply_patch", {"input": upd}) == Call(
        "edit", path="a.py", edits=(("keep\nold", "keep\nnew"), ("x", "y")))
    two = "*** Begin Patch\n*** Add File: a\n+1\n*** Add File: b\n+2\n*** End Patch"
    assert tools.classify("apply_patch", two) is None  # two files: no single tool call says it
    assert tools.classify("apply_patch", "*** Begin Patch\n*** Delete File: a\n*** End Patch") is None


def test_paths_and_outputs() -> None:
    assert tools.relative("/w/p/src/a.py", "/w/p") == "src/a.py"
    assert tools.relative("/elsewhere/a", "/w/p") == "/elsewhere/a"
    assert tools.absolute("src/a.py", "/w/p") == "/w/p/src/a.py"
    assert tools.output_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert tools.output_text({"k": 1}) == '{"k": 1}'
