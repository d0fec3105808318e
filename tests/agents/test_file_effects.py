"""What agents' tool calls do to a file's text, replayed forwards and backwards (for blame)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oxide_git.agents.file_effects import (
    Effect,
    NotReplayable,
    apply,
    effects,
    parse_patch,
    shell_names,
    unapply,
)

P = "*** Begin Patch\n{}*** End Patch"


def test_claude_write_edit_multiedit_and_reads() -> None:
    [w] = effects("Write", {"file_path": "/r/a.txt", "content": "x\n"}) or []
    assert (w.path, w.kind, apply(w, None)) == ("/r/a.txt", "write", "x\n")
    [e] = effects("Edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": True}) or []
    assert apply(e, "a a\n") == "b b\n" and e.edits == (("a", "b", True),)
    [m] = effects("MultiEdit", {"file_path": "a.txt", "edits": [{"old_string": "a", "new_string": "b"},
                                                                  {"old_string": "b", "new_string": "c"}]}) or []
    assert apply(m, "a\n") == "c\n"
    [oc] = effects("edit", {"filePath": "a.txt", "oldString": "x", "newString": "y", "replaceAll": False}) or []
    assert apply(oc, "x x\n") == "y x\n"
    assert effects("Read", {"file_path": "a.txt"}) is None
    assert effects("Grep", {"pattern": "x", "path": "."}) is None
    assert effects("Write", "not json") is None
    assert effects("Edit", {"old_string": "a"}) is None  # no path: nothing it names
    [u] = effects("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x"}) or []
    assert (u.path, u.kind) == ("n.ipynb", "opaque")
    [o] = effects("mystery_tool", {"path": "a.txt"}) or []
    assert o.kind == "opaque"  # a tool we do not know, given a path: it may change the file
    with pytest.raises(NotReplayable):
        apply(o, "x")


def test_edit_semantics_and_what_cannot_be_replayed() -> None:
    create = Effect("a", "edit", edits=(("", "new\n", False),))
    assert apply(create, None) == "new\n" and apply(create, "") == "new\n"
    with pytest.raises(NotReplayable):
        apply(Effect("a", "edit", edits=(("gone", "x", False),)), "here\n")
    with pytest.raises(NotReplayable):
        apply(Effect("a", "edit", edits=(("", "x", False),)), "not empty\n")
    with pytest.raises(NotReplayable):
        apply(Effect("a", "delete"), None)
    assert apply(Effect("a", "delete"), "x") is None


def test_text_editor_tool_commands() -> None:
    [c] = effects("str_replace_based_edit_tool", {"command": "create", "path": "a", "file_text": "t\n"}) or []
    assert apply(c, None) == "t\n"
    [r] = effects("str_replace_based_edit_tool", {"command": "str_replace", "path": "a", "old_str": "t",
                                                  "new_str": "u"}) or []
    assert apply(r, "t\n") == "u\n"
    assert effects("str_replace_based_edit_tool", {"command": "view", "path": "a"}) is None
    [i] = effects("str_replace_based_edit_tool", {"command": "insert", "path": "a", "insert_line": 1}) or []
    assert i.kind == "opaque"


def test_codex_patches_of_several_files_with_moves_deletes_and_context() -> None:
    patch = P.format("*** Add File: new.txt\n+one\n+two\n"
                     "*** Delete File: old.txt\n"
                     "*** Update File: src/a.py\n*** Move to: src/b.py\n@@ def f():\n-    return 1\n+    return 2\n"
                     "*** Update File: c.txt\n@@\n x\n-y\n+Y\n*** End of File\n")
    add, delete, move, upd = parse_patch(patch) or []
    assert (add.kind, apply(add, None)) == ("write", "one\ntwo\n")
    assert (delete.kind, delete.path) == ("delete", "old.txt")
    assert (move.path, move.move_to) == ("src/a.py", "src/b.py")
    assert apply(move, "def g():\n    return 1\ndef f():\n    return 1\n") == \
        "def g():\n    return 1\ndef f():\n    return 2\n"  # the @@ context line picks the hunk's place
    assert upd.hunks[0].end_of_file and apply(upd, "y\nx\ny\n") == "y\nx\nY\n"
    assert effects("apply_patch", {"input": patch}) and effects("apply_patch", patch)
    assert effects("apply_patch", {"input": "not a patch"}) is None
    # a patch inside a shell command (older Codex, or a heredoc)
    [s] = effects("shell", {"command": ["apply_patch", P.format("*** Add File: z\n+z\n")]}) or []
    assert s.path == "z"
    assert effects("shell", {"command": ["bash", "-lc", "echo hi"]}) is None
    assert parse_patch(P.format("*** Update File: a\nnot a hunk line\n")) is None
    assert parse_patch(P.format("garbage\n")) is None


def test_codex_seek_ignores_trailing_then_surrounding_white_space() -> None:
    [e] = parse_patch(P.format("*** Update File: a\n@@\n-  keep   \n+changed\n")) or []
    assert apply(e, "x\n  keep\ny\n") == "x\nchanged\ny\n"
    assert apply(e, "x\n keep \ny\n") == "x\nchanged\ny\n"
    with pytest.raises(NotReplayable):
        apply(e, "x\ny\n")
    with pytest.raises(NotReplayable):
        apply(e, None)
    [ins] = parse_patch(P.format("*** Update File: a\n@@\n+appended\n")) or []
    assert apply(ins, "x\n") == "x\nappended\n"
    [ctx] = parse_patch(P.format("*** Update File: a\n@@ missing\n-x\n+y\n")) or []
    with pytest.raises(NotReplayable):
        apply(ctx, "x\n")


def test_unapply_takes_an_edit_back_only_when_one_text_gives_it() -> None:
    e = Effect("a", "edit", edits=(("two", "TWO", False),))
    assert unapply(e, "one\nTWO\nthree\n") == "one\ntwo\nthree\n"
    with pytest.raises(NotReplayable):
        unapply(e, "TWO TWO\n")  # the new text twice: which one the edit wrote is unknown
    with pytest.raises(NotReplayable):
        unapply(e, "two TWO\n")  # replaying on the text before would change the first "two"
    with pytest.raises(NotReplayable):
        unapply(Effect("a", "edit", edits=(("x", "", False),)), "y\n")  # a deletion leaves no trace
    with pytest.raises(NotReplayable):
        unapply(Effect("a", "write", content="x"), "x")
    [p] = parse_patch(P.format("*** Update File: a\n@@\n-alpha\n beta\n+alpha\n")) or []
    assert unapply(p, "beta\nalpha\n") == "alpha\nbeta\n"
    with pytest.raises(NotReplayable):
        unapply(p, "beta\nalpha\nbeta\nalpha\n")


@given(st.lists(st.sampled_from(["a", "b", "c", "dd", ""]), max_size=8),
       st.sampled_from(["a", "b", "dd"]), st.sampled_from(["X", "b\nb", "a"]))
def test_unapply_inverts_apply_whenever_it_answers(lines: list[str], old: str, new: str) -> None:
    text = "".join(x + "\n" for x in lines)
    e = Effect("f", "edit", edits=((old, new, False),))
    try:
        after = apply(e, text)
    except NotReplayable:
        return
    try:
        before = unapply(e, after)
    except NotReplayable:
        return
    assert apply(e, before) == after  # never a text before that the edit would not turn into after


def test_shell_names_the_file_a_glob_or_a_folder_of_it() -> None:
    cwd, f = "/r", "/r/src/app.py"
    assert shell_names("echo x > src/app.py", f, cwd)
    assert shell_names("sed -i s/a/b/ ./src/app.py", f, cwd)
    assert shell_names("cat /r/src/app.py | wc -l", f, cwd)
    assert shell_names("black src/*.py", f, cwd)
    assert shell_names("rm -rf src", f, cwd)
    assert shell_names("tool --out=src/app.py", f, cwd)
    assert shell_names("cd src && touch app.py", f, "/r/src")
    assert not shell_names("ls -la", f, cwd)
    assert not shell_names("prettier --write .", f, cwd)  # the working folder itself names nothing
    assert not shell_names("echo src/app.pyc", f, cwd)
    assert shell_names("echo 'unclosed src/app.py", f, cwd)  # shell quoting that does not parse
