"""The interactive session picker of `git oxide resume`, a terminal UI on prompt_toolkit.

A list moved with the arrow keys (PgUp/PgDn, Home/End); typing filters it by title and by every
message's text (the full-text index); Tab cycles the agent filter, ^B the branch, ^W this worktree
or all, ^S the sort; the filters in force are shown on screen, and a preview of the highlighted
session (agent, age, branch, first prompts, last answer, checkpoints) under the list. Enter opens
the actions: resume it in its own agent or another one, show, fork, export. Esc / ^C leaves.
Without a terminal it prints a plain numbered list and picks nothing.

prompt_toolkit rather than Textual: it draws in the normal terminal (and in tmux, over ssh, in
a test's pty) with one small dependency (wcwidth), and starts in ~60 ms where Textual's import
alone takes several times that; a picker is a list, a line of input and a preview, which is what
prompt_toolkit's layout primitives are.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import click

from oxide_git.agents import AGENT_NAMES
from oxide_git.cli.output import ago, cid, clip, sid
from oxide_git.core.titles import display, is_harness_text

SHOWN = 200  # rows kept in the list (the filter narrows it)


@dataclass
class Choice:
    session: str
    action: str = "resume"  # resume | show | fork | export
    agent: str | None = None  # resume: into this agent
    run: bool = False  # resume: run the agent's command (it is installed)


class Model:
    """What the picker shows: sessions, filters, the highlighted row. No terminal in here."""

    def __init__(self, ctx: Any, all_worktrees: bool) -> None:
        from oxide_git.ops.browse import list_sessions

        self.ctx = ctx
        self.rows_all = list_sessions(ctx, all_worktrees=True)
        self.here = ctx.repo.worktree_id
        self.all_worktrees = all_worktrees or not any(r["worktree"] == self.here for r in self.rows_all)
        self.agent: str | None = None
        self.branch: str | None = None
        self.sort = "updated_at"
        self.query = ""
        self.selected = 0
        self.rows: list[dict[str, Any]] = []
        self._preview: dict[str, list[str]] = {}
        self.refresh()

    def branches(self) -> list[str]:
        return sorted({r["branch"] for r in self.rows_all if r["branch"]})

    def refresh(self) -> None:
        rows = [r for r in self.rows_all
                if (self.all_worktrees or r["worktree"] == self.here)
                and (self.agent is None or r["agent"] == self.agent)
                and (self.branch is None or r["branch"] == self.branch)]
        if self.query.strip():
            from oxide_git.store.search_query import search  # the first query pays for the search index

            words = self.query.lower().split()
            try:
                hits = {h["session_id"] for h in search(self.ctx.index, self.query, 1000)}
            except Exception:  # a query FTS cannot parse: titles only
                hits = set()
            rows = [r for r in rows if r["id"] in hits or all(
                w in (display(r["title"], r["first_prompt"]) + " " + r["id"]).lower() for w in words)]
        rows.sort(key=lambda r: r[self.sort] or "", reverse=True)
        self.rows = rows[:SHOWN]
        self.selected = min(self.selected, max(len(self.rows) - 1, 0))

    def move(self, by: int) -> None:
        if self.rows:
            self.selected = max(0, min(len(self.rows) - 1, self.selected + by))

    def cycle_agent(self) -> None:
        order = [None, *AGENT_NAMES]
        self.agent = order[(order.index(self.agent) + 1) % len(order)]
        self.refresh()

    def cycle_branch(self) -> None:
        order = [None, *self.branches()]
        self.branch = order[(order.index(self.branch) + 1) % len(order)] if self.branch in order else None
        self.refresh()

    def current(self) -> dict[str, Any] | None:
        return self.rows[self.selected] if self.rows else None

    def filters_line(self) -> str:
        return (f"agent: {self.agent or 'all'} (Tab)   branch: {self.branch or 'all'} (^B)   "
                f"worktree: {'all' if self.all_worktrees else 'this one'} (^W)   "
                f"sort: {self.sort.split('_')[0]} (^S)   {len(self.rows)} of {len(self.rows_all)}")

    def row_line(self, r: dict[str, Any]) -> str:
        title = display(r["title"], r["first_prompt"], r["id"], 70)
        return (f"{sid(r['id']):<14} {r['agent']:<8} {clip(r['branch'] or '-', 14):<14} "
                f"{ago(r[self.sort], self.ctx.now_ms):>9}  {title}")

    def preview(self) -> list[str]:
        r = self.current()
        if r is None:
            return ["No session matches: change the filter (Backspace), Tab for the agent, "
                    "^W for all worktrees."]
        got = self._preview.get(r["id"])
        if got is None:
            got = self._preview[r["id"]] = self._make_preview(r)
        return got

    def _make_preview(self, r: dict[str, Any]) -> list[str]:
        from oxide_git.ops.browse import list_checkpoints

        q = self.ctx.index.query
        prompts = [t[0] for t in q("SELECT text FROM messages WHERE session_id=? AND role='user' "
                                    "AND text!='' ORDER BY seq LIMIT 20", (r["id"],))
                   if not is_harness_text(t[0])][:2]
        last = q("SELECT text FROM messages WHERE session_id=? AND role='assistant' AND text!='' "
                 "ORDER BY seq DESC LIMIT 1", (r["id"],))
        out = [f"{r['agent']} session {sid(r['id'])}, created {ago(r['created_at'], self.ctx.now_ms)}, "
               f"updated {ago(r['updated_at'], self.ctx.now_ms)}; worktree {r['worktree'] or '-'}, "
               f"branch {r['branch'] or '-'}; "
               f"{self.ctx.index.real_message_counts([r['id']]).get(r['id'], 0)} messages"]
        for p in prompts:
            out.append(f"prompt: {clip(p, 110)}")
        if last:
            out.append(f"last answer: {clip(last[0][0], 105)}")
        cps = list_checkpoints(self.ctx, r["id"])
        if cps:
            out.append(f"checkpoints: {len(cps)}; newest " + ", ".join(
                f"{cid(c['id'])} {c['kind']} {ago(c['created_at'], self.ctx.now_ms)} "
                f"({c.get('expiry') or '-'})" for c in cps[:2]))
        else:
            out.append("checkpoints: none")
        from oxide_git.ops.usage import header_line

        spent = header_line(self.ctx, r["id"])
        if spent:
            out.append(f"usage: {spent}")
        return out


def actions(agent: str) -> list[tuple[str, str, Choice]]:
    """(key, label, choice) of the Enter menu, the session's own agent first."""
    others = [a for a in AGENT_NAMES if a != agent]
    out = [("r", f"resume in {agent} (its agent)", Choice("", "resume", agent))]
    out += [(str(i), f"resume in {a}", Choice("", "resume", a)) for i, a in enumerate(others, 2)]
    out += [("s", "show it", Choice("", "show")), ("f", "fork it", Choice("", "fork")),
            ("e", "export it as Markdown (session-<id>.md)", Choice("", "export"))]
    return out


def _plain(model: Model) -> None:
    for i, r in enumerate(model.rows[:20], 1):
        click.echo(f"{i:>3}. {model.row_line(r)}")
    click.echo("hint: not a terminal; run `git oxide resume SESSION --into AGENT` with an id above", err=True)


def pick(ctx: Any, *, all_worktrees: bool = False) -> Choice | None:
    model = Model(ctx, all_worktrees)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        _plain(model)
        return None
    if not model.rows_all:
        click.echo("No session in this store yet; `git oxide import` finds this repository's sessions",
                   err=True)
        return None
    return run_app(model)


def run_app(model: Model) -> Choice | None:
    import shutil

    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
    from prompt_toolkit.layout.dimension import Dimension
    from prompt_toolkit.styles import Style

    state: dict[str, Any] = {"menu": None, "menu_at": 0}
    query = Buffer(multiline=False)

    def on_text(_buf: Buffer) -> None:
        model.query = query.text
        model.selected = 0
        model.refresh()

    query.on_text_changed += on_text
    in_menu = Condition(lambda: state["menu"] is not None)

    def list_text() -> StyleAndTextTuples:
        height = max(3, shutil.get_terminal_size((100, 30)).lines - 14)
        top = max(0, model.selected - height + 1)
        out: StyleAndTextTuples = []
        for i, r in enumerate(model.rows[top:top + height], top):
            style = "class:selected" if i == model.selected else ""
            out.append((style, ("> " if i == model.selected else "  ") + model.row_line(r) + "\n"))
        if not model.rows:
            out.append(("class:dim", "  (no session matches)\n"))
        return out

    def lower_text() -> StyleAndTextTuples:
        if state["menu"] is not None:
            r = model.current()
            out: StyleAndTextTuples = [("class:head", f"Session {sid(r['id']) if r else ''}: what now?\n")]
            for i, (key, label, _c) in enumerate(state["menu"]):
                style = "class:selected" if i == state["menu_at"] else ""
                out.append((style, f"  [{key}] {label}\n"))
            out.append(("class:dim", "  ↑↓ and Enter, or the key in brackets; Esc: back to the list\n"))
            return out
        lines: StyleAndTextTuples = [("class:head", "Preview\n")]
        return lines + [("", line + "\n") for line in model.preview()]

    kb = KeyBindings()

    @kb.add("up", filter=~in_menu)
    def _up(_e: Any) -> None:
        model.move(-1)

    @kb.add("down", filter=~in_menu)
    def _down(_e: Any) -> None:
        model.move(1)

    @kb.add("pageup", filter=~in_menu)
    def _pgup(_e: Any) -> None:
        model.move(-10)

    @kb.add("pagedown", filter=~in_menu)
    def _pgdn(_e: Any) -> None:
        model.move(10)

    @kb.add("tab", filter=~in_menu)
    def _agent(_e: Any) -> None:
        model.cycle_agent()

    @kb.add("c-b", filter=~in_menu)
    def _branch(_e: Any) -> None:
        model.cycle_branch()

    @kb.add("c-w", filter=~in_menu)
    def _worktrees(_e: Any) -> None:
        model.all_worktrees = not model.all_worktrees
        model.refresh()

    @kb.add("c-s", filter=~in_menu)
    def _sort(_e: Any) -> None:
        model.sort = "created_at" if model.sort == "updated_at" else "updated_at"
        model.refresh()

    @kb.add("enter", filter=~in_menu)
    def _open(_e: Any) -> None:
        r = model.current()
        if r is not None:
            state["menu"], state["menu_at"] = actions(r["agent"]), 0

    @kb.add("up", filter=in_menu)
    def _mup(_e: Any) -> None:
        state["menu_at"] = max(0, state["menu_at"] - 1)

    @kb.add("down", filter=in_menu)
    def _mdown(_e: Any) -> None:
        state["menu_at"] = min(len(state["menu"]) - 1, state["menu_at"] + 1)

    def choose(e: Any, i: int) -> None:
        r = model.current()
        if r is None:
            return
        _key, _label, c = state["menu"][i]
        agent = c.agent
        e.app.exit(result=Choice(r["id"], c.action, agent, bool(agent and shutil.which(agent))))

    @kb.add("enter", filter=in_menu)
    def _menter(e: Any) -> None:
        choose(e, state["menu_at"])

    @kb.add("<any>", filter=in_menu)
    def _mkey(e: Any) -> None:
        key = e.key_sequence[0].data
        for i, (k, _l, _c) in enumerate(state["menu"]):
            if k == key:
                choose(e, i)

    @kb.add("escape", eager=True)
    def _esc(e: Any) -> None:
        if state["menu"] is not None:
            state["menu"] = None
        else:
            e.app.exit(result=None)

    @kb.add("c-c")
    def _quit(e: Any) -> None:
        e.app.exit(result=None)

    root = HSplit([
        Window(FormattedTextControl([("class:head", "git oxide resume: pick a session")]), height=1),
        Window(BufferControl(query), height=1, get_line_prefix=lambda *_: "filter> "),
        Window(FormattedTextControl(lambda: [("class:dim", model.filters_line())]), height=1),
        Window(FormattedTextControl(list_text), height=Dimension(min=3)),
        Window(height=1, char="─", style="class:dim"),
        # the actions menu grows with the agents (one "resume in" line each): all of it shows
        Window(FormattedTextControl(lower_text), height=lambda: Dimension(
            min=6, max=max(9, len(state["menu"]) + 3) if state["menu"] else 9)),
        Window(FormattedTextControl([("class:dim", "↑↓ move · type to filter (titles and messages) · "
                                      "Enter: actions · Esc: quit")]), height=1),
    ])
    style = Style.from_dict({"selected": "reverse", "head": "bold", "dim": "#888888"})
    app: Application[Choice | None] = Application(
        layout=Layout(root, focused_element=query), key_bindings=kb, style=style, full_screen=True,
        mouse_support=False)
    return app.run()
