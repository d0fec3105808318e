"""The soak's checks, every few minutes and at the end, with every loop paused.

- every record the four writers wrote is in the store exactly once, in order: a Claude or Codex
  session exported back gives the very lines written (parsed, compared whole); OpenCode and Aider
  messages carry a marker each, and the store holds each marker once, in order;
- every acknowledged checkpoint exists and holds the tree that was on disk;
- every commit made (and still on the branch) has its note;
- the clone has every session the remote took, with every message of what was pushed at its own
  place (the pushed commit in its history, or, after the repository pushed a conversation rewind,
  the clone's longer log: a pull never drops a message the clone holds);
- `git fsck --full --strict` is clean in the repository, the clone and the remote;
- `git oxide doctor` finds nothing wrong in the repository and the clone.

The daemon is given time to import what was written; a catch-up `git oxide import` follows, so
that a daemon that is merely slow is reported as slow, and only what no import brings is a loss.
"""

from __future__ import annotations

import re
import time
from typing import Any

from .chaos import Acked
from .world import World
from .writers import AiderWriter, JsonlWriter, OpenCodeWriter, Writer, lines_of

_MARK = re.compile(r"⟦(?:oc|ai)-\d+⟧")


def _store(world: World) -> dict[str, tuple[Any, list[Any]]]:
    """native id -> (session, messages) of every session in the repository."""
    from oxide_git.git import refs
    from oxide_git.git.repo import find_repo
    from oxide_git.store import sessionlog
    from oxide_git.store.context import Context

    ctx = Context(find_repo(world.repo), int(time.time() * 1000), world.env)
    try:
        out = {}
        for _n, oid in refs.iter_refs(ctx.repo.git, refs.SESSIONS):
            log = sessionlog.load_commit(ctx.repo, oid)
            out[log.session.native_id or log.session.id] = (
                log.session, [m for _q, m in sessionlog.iter_messages(ctx.repo, log.commit.tree)])
        return out
    finally:
        ctx.close()


def _exported_lines(world: World, agent: str, session: Any, messages: list[Any]) -> list[Any]:
    import json

    from oxide_git.agents import agent as agent_module
    from oxide_git.git.repo import find_repo
    from oxide_git.imports.importing import agent_env
    from oxide_git.store.context import Context

    ctx = Context(find_repo(world.repo), int(time.time() * 1000), world.env)
    try:
        exp = agent_module(agent).export(session, messages, agent_env(ctx))
    finally:
        ctx.close()
    [data] = exp.files.values()
    return [json.loads(line) for line in data.decode().splitlines()]


def _main_line(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in ("sessionId", "isSidechain", "agentId")}


def writer_gaps(world: World, writers: list[Writer]) -> tuple[list[str], list[str]]:
    """(records not in the store yet, records the store has wrong: duplicated, reordered, changed)."""
    store = _store(world)
    behind, wrong = [], []
    for w in writers:
        if isinstance(w, JsonlWriter):
            for path in w.written:
                want = list(lines_of(path))
                if w.name == "codex":
                    native = path.stem[-36:]  # the rollout's session id
                elif "subagents" in path.parts:
                    native = f"{path.parent.parent.name}/{path.stem}"  # <session>/agent-<id>
                else:
                    native = path.stem
                if native not in store:
                    behind.append(f"{w.name} {path.name}: no session yet ({len(want)} lines written)")
                    continue
                got = _exported_lines(world, w.name, *store[native])
                if "subagents" in path.parts:
                    side = {x["uuid"] for x in want if x.get("isSidechain")}
                    # A sub-agent's session is exported as a session of its own (it cannot be
                    # resumed as a sub-agent): what makes it one is compared in the store instead.
                    got, want = [_main_line(x) for x in got], [_main_line(x) for x in want]
                    kept = all(m.extra.get("isSidechain") is True and m.extra.get("agentId")
                               for m in store[native][1] if m.native_id in side
                               and any(p.type != "other" for p in m.parts))  # (others: kept whole)
                    if not kept:
                        wrong.append(f"{w.name} {path.name}: a message lost its sidechain fields")
                if got == want:
                    continue
                if got == want[:len(got)]:
                    behind.append(f"{w.name} {path.name}: {len(got)} of {len(want)} lines in the store")
                else:
                    first = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                                 min(len(got), len(want)))
                    wrong.append(f"{w.name} {path.name}: line {first + 1} differs "
                                 f"({len(got)} in the store, {len(want)} written)")
        else:
            assert isinstance(w, OpenCodeWriter | AiderWriter)
            want = [m for t in w.texts for m in _MARK.findall(t)]
            agent = w.name
            got = [m for s, msgs in store.values() if s.agent == agent for x in msgs
                   for m in _MARK.findall(x.text())]
            if got == want:
                continue
            if got == want[:len(got)]:
                behind.append(f"{w.name}: {len(got)} of {len(want)} messages in the store")
            else:
                dupes = len(got) - len(set(got))
                wrong.append(f"{w.name}: the store's messages are not what was written "
                             f"({len(got)} markers, {dupes} duplicated, {len(want)} written)")
    return behind, wrong


def check(world: World, writers: list[Writer], acked: Acked, final: bool = False) -> list[str]:
    """Every check; returns the losses found (the tally has them too)."""
    from oxide_git.hooks.queue import wait_idle

    w = world
    t0 = time.monotonic()
    losses: list[str] = []
    if not wait_idle(w.repo / ".git", timeout=120):
        w.tally.problem("the hook queue did not drain in 120 s")
    deadline = time.monotonic() + 90
    behind, wrong = writer_gaps(w, writers)
    while behind and not wrong and time.monotonic() < deadline:
        time.sleep(3)
        behind, wrong = writer_gaps(w, writers)
    if behind:
        w.tally.problem(f"the watch daemon was behind after 90 s: {behind}")
        w.ox(w.repo, "import", "-q")
        behind, wrong = writer_gaps(w, writers)
    losses += [f"not in the store: {b}" for b in behind] + [f"wrong in the store: {x}" for x in wrong]
    losses += _checkpoints(w, acked) + _notes(w, acked) + _pushed(w, acked)
    for where in (w.repo, w.clone, w.bare):
        r = w.run(["git", "fsck", "--full", "--strict", "--no-progress"], where)
        bad = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith(("error", "missing", "broken",
                                                                                   "warning", "fatal"))]
        if r.returncode != 0 or bad:
            losses.append(f"git fsck in {where.name}: {bad[:3] or r.stderr.strip()[:200]}")
    for where in (w.repo, w.clone):
        r = w.ox(where, "doctor")
        findings = [ln for ln in r.stdout.splitlines() if ln.startswith(("error", "warning"))
                    and "record(s) of unknown type" not in ln]
        if r.returncode != 0 or findings:
            losses.append(f"doctor in {where.name}: {findings[:3] or r.stderr.strip()[:200]}")
    for x in losses:
        w.tally.lose(x)
    what = "ok" if not losses else f"{len(losses)} loss(es)"
    w.tally.checks.append((w.minute(), f"{what} ({time.monotonic() - t0:.0f} s)"))
    print(f"[{w.minute():5.1f} min] check: {what}", flush=True)
    return losses


def _checkpoints(w: World, acked: Acked) -> list[str]:
    out = []
    with acked.lock:
        items = dict(acked.checkpoints)
    trees = {}
    text = w.git(w.repo, "for-each-ref", "--format=%(refname) %(objectname) %(tree)", "refs/oxide/checkpoints/")
    for line in text.splitlines():
        _name, oid, tree = line.split()
        trees[oid] = tree
    for cid, tree in items.items():
        if cid not in trees:
            out.append(f"checkpoint {cid[:12]} is gone")
        elif trees[cid] != tree:
            out.append(f"checkpoint {cid[:12]} holds {trees[cid][:12]}, acknowledged with {tree[:12]}")
    return out


def _notes(w: World, acked: Acked) -> list[str]:
    """Every commit on the branch since the soak's first one (amended and rebased ones included:
    the hooks carry their notes) has its note."""
    on_branch = w.git(w.repo, "rev-list", "HEAD").split()[:-1]  # all but the initial commit
    noted = {ln.split()[1] for ln in w.git(w.repo, "notes", "--ref", "oxide", "list").splitlines()}
    missing = [c for c in on_branch if c not in noted]
    return [f"{len(missing)} of {len(on_branch)} commit(s) without a note, e.g. {missing[0][:12]}"] \
        if missing else []


def _pushed(w: World, acked: Acked) -> list[str]:
    r = w.ox(w.clone, "pull")
    if r.returncode != 0:
        return [f"the clone could not pull: {r.stderr.strip()}"]
    with acked.lock:
        pushed = dict(acked.pushed)
    out = []
    for name, oid in pushed.items():
        have = w.run(["git", "rev-parse", "-q", "--verify", name], w.clone).stdout.strip()
        if not have:
            out.append(f"the clone lacks {name}")
        elif w.run(["git", "merge-base", "--is-ancestor", oid, have], w.clone).returncode != 0 and not _holds(
                w, have, oid):
            out.append(f"the clone's {name} does not hold what was pushed ({oid[:12]})")
    return out


def _holds(w: World, have: str, pushed: str) -> bool:
    """Whether the clone's log ``have`` holds every message of the pushed log at its own place."""
    import pygit2

    from oxide_git.git.repo import find_repo
    from oxide_git.ops.pull_session import holds

    clone = find_repo(w.clone)
    git = clone.git
    try:
        return holds(clone, git[have].peel(pygit2.Tree), git[pushed].peel(pygit2.Tree))
    except KeyError:
        return False  # the pushed commit never reached the clone


def no_process_left(world: World) -> list[str]:
    from oxide_git.hooks.queue import wait_idle

    wait_idle(world.repo / ".git", timeout=60)
    deadline = time.monotonic() + 30
    left = world.leftovers()
    while left and time.monotonic() < deadline:
        time.sleep(1)
        left = world.leftovers()
    return left
