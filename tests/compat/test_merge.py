"""`git oxide merge` with the real agents (issue 34): a session, a fork of it continued in an agent in
another worktree (a linked one, ``git worktree add``) where the agent's turn writes a file, the
merge, then the target resumed in its agent. The request that agent sends its model must hold the
fork's prompt, its tool result and its answer; the file must be in the target's worktree; `undo`
must take both back; undone again, the agent's next turn imports after the merged turns, which
stay once. Claude Code and Codex, and both pairs across them. Then, with Claude alone (to keep the
time down): a conflict with a dirty worktree, and `--digest` (each also merged twice: the second
adds nothing). Last, a Codex fork merged into a session of each other agent with tools: its model
sees the merged block, the call as a tool call.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import git
from . import checks
from .conftest import make_driver
from .driver import Driver
from .modelserver import ModelServer, Turn

MAIN = "MERGE-MAIN: say hello."
MAIN2 = "MERGE-SECOND: and go on here."
FORK = "MERGE-FORK: write feature.txt for me."
AFTER = "MERGE-AFTER: what did the fork do?"
FORK_ANSWER = "MERGE-FORK-ANSWER: feature.txt is written."
FEATURE = "written by the fork\n"


def _script(server: ModelServer, fork_wt: Path, *, readme: bool = False) -> None:
    """The turns: the main session says hello; the fork writes feature.txt (with the agent's write
    tool; Codex's is apply_patch) and, with ``readme``, edits README.md's one line; then answers."""
    server.script["MERGE-MAIN"] = [Turn.say("Hello from the main session.")]
    server.script["MERGE-SECOND"] = [Turn.say("MERGE-SECOND-ANSWER: going on.")]
    server.script["MERGE-AFTER"] = [Turn.say("MERGE-AFTER-ANSWER: the fork wrote feature.txt.")]
    server.script["MERGE-FORK"] = [Turn.write(str(fork_wt / "feature.txt"), FEATURE)]
    if readme:
        server.script["MERGE-FORK"].append(Turn.edit(str(fork_wt / "README.md"), "hello", "hello from the fork"))
    server.script["MERGE-FORK"].append(Turn.say(FORK_ANSWER))


def _codex_turns(server: ModelServer) -> None:
    """Codex has no write tool: the fork's file is an ``apply_patch`` (paths relative to its cwd)."""
    add = f"*** Begin Patch\n*** Add File: feature.txt\n+{FEATURE.strip()}\n*** End Patch\n"
    server.script["MERGE-FORK"] = [Turn.tool("apply_patch", {"input": add}), Turn.say(FORK_ANSWER)]


def _worktree(repo: Path, tmp_path: Path) -> Path:
    wt = tmp_path / "fork-wt"
    git(repo, "worktree", "add", "-q", "-b", "fork-work", str(wt))
    return wt


def _session_of(repo: Path, agent: str, native_id: str | None) -> dict[str, Any]:
    """The agent's session named by its native id, or (an agent that gives none, as aider) the one
    that is no fork."""
    rows = [r for r in checks.oxide_json(repo, "list", "--all") if r["agent"] == agent
            and (r["native_id"] == native_id if native_id is not None else not r.get("parent_id"))]
    assert len(rows) == 1, rows
    return dict(rows[0])


def _messages(repo: Path, sid: str) -> list[dict[str, Any]]:
    return list(checks.show(repo, sid)["messages"])


def _outline(m: dict[str, Any]) -> str:
    """One line of a message as `show --json` gives it, for a failure's message."""
    kinds = ",".join(p["type"] for p in m["parts"])
    text = " ".join(checks.texts(m, "text"))[:60].replace("\n", " ")
    came = "merged" if "merged_from" in m.get("extra", {}) else ""
    return f"#{m['seq']} {m['role']} [{kinds}] {came} {m.get('native_id')} {text!r}"


def _merge(repo: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    r = checks.oxide(repo, "merge", *args, check=False)
    assert r.returncode == code, f"merge {' '.join(args)} exited {r.returncode}:\n{r.stderr}\n{r.stdout}"
    return r


def _fork_in(target: Driver, fork_driver: Driver, repo: Path, wt: Path) -> tuple[str, str, dict[str, Any]]:
    """Run the main session, import it, fork it, continue the fork in ``fork_driver``'s agent in the
    linked worktree ``wt``, import that and checkpoint it there. (session id, continuation id, the
    continuation as `show` gives it)."""
    first = target.run(MAIN).check()
    checks.oxide(repo, "import")
    sid = _session_of(repo, target.name, first.native_id)["id"]
    fork_id = checks.oxide_json(repo, "fork", sid, "--title", "feature idea")["id"]
    res = checks.into(wt, fork_id, fork_driver.name)
    assert res["written"], res
    fork_driver.resume(res["native_id"], FORK).check()
    checks.oxide(wt, "import")
    [cont] = [r for r in checks.oxide_json(wt, "list", "--all") if r.get("parent_id") == fork_id]
    assert cont["agent"] == fork_driver.name, cont
    checks.oxide(wt, "checkpoint", "--session", cont["id"], "-m", "the fork's work")
    target.resume(first.native_id or _session_of(repo, target.name, None)["native_id"], MAIN2).check()
    checks.oxide(repo, "import")  # the session went on after the fork point
    shown = checks.show(wt, cont["id"])
    assert any(FORK in u for u in checks.user_prompts(shown)), checks.user_prompts(shown)
    return sid, cont["id"], shown


def _tool_result_text(shown: dict[str, Any]) -> str:
    """The fork's write tool result as text (the first line of it: what any agent carries)."""
    [res] = checks.tool_results(shown)
    out = res.get("output")
    if isinstance(out, dict | list):
        out = json.dumps(out)
    assert isinstance(out, str) and out.strip(), res
    return out.strip().splitlines()[0]


# what the Messages API takes as content blocks (Claude Code sends its model its transcript's)
ANTHROPIC_BLOCKS = {"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking",
                    "server_tool_use", "web_search_tool_result"}


def _well_formed(server: ModelServer) -> None:
    """The last request holds only what its API takes: no other agent's records or fields."""
    row = server.last_request()
    if row["api"] != "anthropic":
        return
    blocks = [b for m in row["body"]["messages"] if isinstance(m.get("content"), list) for b in m["content"]]
    kinds = {str(b.get("type")) for b in blocks}
    assert kinds <= ANTHROPIC_BLOCKS, f"blocks the Messages API refuses: {sorted(kinds - ANTHROPIC_BLOCKS)}"
    odd = [b for b in blocks if {"codex_type", "native", "status"} & b.keys()]
    assert not odd, f"another agent's fields on blocks: {json.dumps(odd)[:1000]}"


def _merge_and_resume(target: Driver, fork_driver: Driver, repo: Path, server: ModelServer,
                      tmp_path: Path) -> None:
    wt = _worktree(repo, tmp_path)
    sid, cont, shown = _fork_in(target, fork_driver, repo, wt)
    assert (wt / "feature.txt").read_text() == FEATURE and not (repo / "feature.txt").exists()
    result_text = _tool_result_text(shown)
    before = _messages(repo, sid)

    dry = _merge(repo, cont, "--dry-run")
    assert "feature.txt" in dry.stdout and "append" in dry.stdout, dry.stdout
    assert "Dry run: nothing was written" in dry.stderr, dry.stderr
    assert f"for {target.name} to see them, continue it with `git oxide resume {sid[:8]} --into {target.name}`" \
        in dry.stderr, dry.stderr
    assert not (repo / "feature.txt").exists() and _messages(repo, sid) == before

    merged = _merge(repo, cont, "--yes")
    assert f"Merged {cont[:8]}" in merged.stderr and "1 file(s) written" in merged.stderr, merged.stderr
    assert (repo / "feature.txt").read_text() == FEATURE
    after = _messages(repo, sid)
    assert after[:len(before)] == before
    added = json.dumps(after[len(before):])
    assert "[git oxide merge]" in added and FORK in added and FORK_ANSWER in added, added[:2000]
    assert '\\"feature idea\\"' in added, added[:1000]  # the marker names the fork by the title it was given
    shown_text = checks.oxide(repo, "show", sid, "--no-pager").stdout
    assert "[git oxide merge]" in shown_text and FORK_ANSWER in shown_text

    again = _merge(repo, cont, "--yes")  # merging twice adds nothing
    assert "Already merged" in again.stderr, again.stderr
    assert len(_messages(repo, sid)) == len(after)

    # the target resumed in its agent: its model sees the fork's prompt, tool result and answer
    res = checks.into(repo, sid, target.name)
    assert res["written"], res
    server._log.clear()
    target.resume(res["native_id"], AFTER).check()
    checks.assert_request_holds(server, [MAIN, MAIN2, "[git oxide merge]", FORK, result_text, FORK_ANSWER, AFTER])
    _well_formed(server)
    # the fork's write reached the model as a tool call (another agent's handed over as the
    # target agent's own tool), never as text
    calls = checks.request_tool_calls(server)
    assert any("feature.txt" in args for _n, args in calls), calls

    undone = checks.oxide(repo, "undo", "--yes")
    assert not (repo / "feature.txt").exists(), undone.stderr + undone.stdout
    assert _messages(repo, sid) == before, undone.stderr + undone.stdout
    assert (wt / "feature.txt").read_text() == FEATURE  # the fork's worktree is not touched

    # undo again (a redo): then the agent's own turn after the merge is imported after the merged
    # turns, which stay as they were (the import's cursor, issue 39)
    checks.oxide(repo, "undo", "--yes")
    assert (repo / "feature.txt").read_text() == FEATURE and _messages(repo, sid) == after
    checks.oxide(repo, "import")
    final = _messages(repo, sid)
    outline = "\n".join(_outline(m) for m in final)
    assert final[:len(after)] == after, outline
    prompts = checks.user_prompts({"messages": final})
    assert sum(FORK in p for p in prompts) == 1 and sum(AFTER in p for p in prompts) == 1, outline
    answers = [t for m in final if m["role"] == "assistant" for t in checks.texts(m, "text")]
    assert sum(FORK_ANSWER in t for t in answers) == 1, outline
    assert any("MERGE-AFTER-ANSWER" in t for t in answers), outline


@pytest.mark.parametrize(("target", "fork_agent"), [("claude", "claude"), ("codex", "codex"),
                                                     ("claude", "codex"), ("codex", "claude")],
                         ids=["claude", "codex", "codex-fork-into-claude", "claude-fork-into-codex"])
def test_a_fork_continued_in_an_agent_merges_back(target: str, fork_agent: str, compat_repo: Path,
                                                  model_server: ModelServer, tmp_path: Path) -> None:
    t = make_driver(target, compat_repo, model_server)
    wt = tmp_path / "fork-wt"
    f = make_driver(fork_agent, wt, model_server) if fork_agent != target else None
    _script(model_server, wt)
    if fork_agent == "codex":
        _codex_turns(model_server)
    if f is None:
        f = type(t)(wt, model_server)
    _merge_and_resume(t, f, compat_repo, model_server, tmp_path)


def _claude_pair(compat_repo: Path, model_server: ModelServer, tmp_path: Path, *, readme: bool = False
                 ) -> tuple[Driver, Path, str, str]:
    t = make_driver("claude", compat_repo, model_server)
    wt = _worktree(compat_repo, tmp_path)
    _script(model_server, wt, readme=readme)
    sid, cont, _shown = _fork_in(t, type(t)(wt, model_server), compat_repo, wt)
    return t, wt, sid, cont


def test_a_conflict_and_a_dirty_worktree(compat_repo: Path, model_server: ModelServer, tmp_path: Path) -> None:
    """Both sides changed README.md's one line: git's conflict markers, listed, exit 1. The
    target worktree's uncommitted changes are its side of the merge: none is overwritten, and
    the output says so. Merging again adds nothing; undo puts the worktree back as it was, dirty."""
    _t, wt, sid, cont = _claude_pair(compat_repo, model_server, tmp_path, readme=True)
    assert (wt / "README.md").read_text() == "hello from the fork\n"
    (compat_repo / "README.md").write_text("hello from main\n")  # uncommitted, in the same line
    (compat_repo / "src" / "app.py").write_text("print('mine')\n")  # uncommitted, elsewhere
    before = _messages(compat_repo, sid)

    dry = _merge(compat_repo, cont, "--dry-run", code=1)
    assert "conflict README.md (both changed)" in dry.stdout, dry.stdout
    assert "none would be overwritten; both sides of README.md are in its conflict markers" in dry.stderr
    assert (compat_repo / "README.md").read_text() == "hello from main\n"

    merged = _merge(compat_repo, cont, "--yes", code=1)
    assert "CONFLICT (both changed): README.md" in merged.stderr, merged.stderr
    assert "uncommitted changes (2 file(s)) as its side: none was overwritten" in merged.stderr, merged.stderr
    readme = (compat_repo / "README.md").read_text()
    assert readme.startswith("<<<<<<< worktree\nhello from main\n=======\nhello from the fork\n>>>>>>> fork "), readme
    assert (compat_repo / "src" / "app.py").read_text() == "print('mine')\n"
    assert (compat_repo / "feature.txt").read_text() == FEATURE
    after = _messages(compat_repo, sid)
    assert len(after) > len(before)

    again = _merge(compat_repo, cont, "--yes")
    assert "Already merged" in again.stderr and _messages(compat_repo, sid) == after, again.stderr
    assert (compat_repo / "README.md").read_text() == readme

    checks.oxide(compat_repo, "undo", "--yes")
    assert (compat_repo / "README.md").read_text() == "hello from main\n"
    assert (compat_repo / "src" / "app.py").read_text() == "print('mine')\n"
    assert not (compat_repo / "feature.txt").exists() and _messages(compat_repo, sid) == before


def test_digest(compat_repo: Path, model_server: ModelServer, tmp_path: Path) -> None:
    """`--digest` appends the fork's prompt and final answer and names the files it changed; no
    tool call comes in, the code does. The target resumed in Claude: its model sees the digest.
    A full merge afterwards adds nothing (the digest stands for those turns)."""
    t, _wt, sid, cont = _claude_pair(compat_repo, model_server, tmp_path)
    before = _messages(compat_repo, sid)
    dry = _merge(compat_repo, cont, "--digest", "--dry-run")
    assert "a digest of the fork" in dry.stdout and "feature.txt" in dry.stdout, dry.stdout
    _merge(compat_repo, cont, "--digest", "--yes")
    assert (compat_repo / "feature.txt").read_text() == FEATURE
    added = _messages(compat_repo, sid)[len(before):]
    marker = " ".join(checks.texts(added[0], "text"))
    assert marker.startswith("[git oxide merge]") and "Files it changed: feature.txt." in marker, marker
    assert [m["role"] for m in added] == ["user", "user", "assistant"], [_outline(m) for m in added]
    assert FORK in " ".join(checks.texts(added[1])) and FORK_ANSWER in " ".join(checks.texts(added[2]))
    assert not checks.tool_calls({"messages": added}) and not checks.tool_results({"messages": added})

    again = _merge(compat_repo, cont, "--yes")
    assert "Already merged" in again.stderr, again.stderr
    assert len(_messages(compat_repo, sid)) == len(before) + 3

    res = checks.into(compat_repo, sid, "claude")
    model_server._log.clear()
    t.resume(res["native_id"], AFTER).check()
    checks.assert_request_holds(model_server, [MAIN, MAIN2, "Files it changed: feature.txt", FORK, FORK_ANSWER,
                                               AFTER])
    _well_formed(model_server)
    assert not [c for c in checks.request_tool_calls(model_server) if "feature.txt" in c[1]]


OTHERS = ("pi", "opencode", "copilot", "gemini", "qwen", "cline", "aider")


@pytest.mark.parametrize("target", OTHERS)
def test_a_codex_fork_merged_into_another_agents_session(target: str, compat_repo: Path,
                                                         model_server: ModelServer, tmp_path: Path) -> None:
    """The other agents' exporters write a session of their own agent as its records: one that
    holds Codex's merged turns goes to the agent as another agent's session would (a new one of
    its own, continuing it). Its model sees the merged block (the fork's prompt, its tool call as
    a tool call, the result, the answer) and none of Codex's own context."""
    t = make_driver(target, compat_repo, model_server)
    f = make_driver("codex", tmp_path / "fork-wt", model_server)
    wt = _worktree(compat_repo, tmp_path)
    _script(model_server, wt)
    _codex_turns(model_server)
    sid, cont, shown = _fork_in(t, f, compat_repo, wt)
    result_text = _tool_result_text(shown)
    _merge(compat_repo, cont, "--yes")
    assert (compat_repo / "feature.txt").read_text() == FEATURE
    res = checks.into(compat_repo, sid, target)
    model_server._log.clear()
    t.resume(res["native_id"], AFTER).check()
    checks.assert_request_holds(model_server, [MAIN, MAIN2, "[git oxide merge]", FORK, result_text, FORK_ANSWER,
                                               AFTER])
    assert "fork-wt</cwd>" not in checks.request_text(model_server)  # Codex's environment context
    if target == "aider":  # aider has no tool calls: the call is text in the answer (docs/agents/aider.md)
        assert "Tool call `apply_patch`" in checks.request_text(model_server)
        return
    calls = checks.request_tool_calls(model_server)
    assert any("feature.txt" in args for _n, args in calls), calls
