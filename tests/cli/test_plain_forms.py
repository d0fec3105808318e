"""The click-free forms of `search`, `list`, `import` and `blame` (the console script runs them
before click is imported, for their start-up) are held to the click commands by every option:
each option of a click command is either one its plain form takes, answering exactly as click
does, or one the plain form declines (it returns None and click runs). An option added to a click
command, or taken by a plain form alone, fails here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from oxide_git.blame.command import plain as plain_blame
from oxide_git.cli import main
from oxide_git.core.model import Message, Part, Session
from oxide_git.imports.command import plain as plain_import
from oxide_git.ops.list_command import plain as plain_list
from oxide_git.ops.search_command import plain as plain_search
from oxide_git.store import writes as store
from tests.conftest import NOW_MS, git, make_ctx

# command: (its plain form, the options it takes, the arguments every call has)
PLAIN: dict[str, tuple[Callable[[list[str]], int | None], set[str], list[str]]] = {
    "search": (plain_search, {"-n", "--limit", "--json"}, ["hello"]),
    "list": (plain_list, {"--json", "--all"}, []),
    "import": (plain_import, {"-q", "--quiet", "--agent"}, ["-q"]),
    "blame": (plain_blame, {"-L", "--rev", "--porcelain", "--json", "--summary"}, ["notes.txt"]),
}
VALUE = {"-n": "3", "--limit": "3", "--agent": "claude", "-L": "1,2", "--rev": "HEAD",
         "--range": "HEAD~1..HEAD"}
READ_ONLY = ("search", "list", "blame")  # the same answer twice: compared with click's


def _options(name: str) -> dict[str, click.Parameter]:
    cmd = main.get_command(click.Context(main), name)
    assert cmd is not None
    return {o: p for p in cmd.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}


def _argv(name: str, opt: str) -> list[str]:
    return [*PLAIN[name][2], opt, *([VALUE[opt]] if opt in VALUE else [])]


@pytest.fixture
def here(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (repo / "notes.txt").write_text("one\ntwo\nthree\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "notes")
    (repo / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    store.append(make_ctx(repo), Session("019c18a520e8aaaabbbbccccddddee39", "claude", title="plain"),
                 [Message("user", (Part.text(f"hello {i}"),), created_at=NOW_MS + i) for i in range(5)])
    monkeypatch.chdir(repo)
    monkeypatch.setenv("OXIDE_BLAME_CACHE", "0")  # each answer computed, not the one kept
    return repo


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_a_plain_form_takes_only_options_its_click_command_has(name: str) -> None:
    assert PLAIN[name][1] <= set(_options(name)), PLAIN[name][1] - set(_options(name))


@pytest.mark.parametrize(("name", "opt"), [(n, o) for n in sorted(PLAIN) for o in sorted(_options(n))
                                           if o not in PLAIN[n][1] and o != "--help"])
def test_an_option_the_plain_form_does_not_take_goes_to_click(name: str, opt: str, here: Path) -> None:
    assert PLAIN[name][0](_argv(name, opt)) is None


@pytest.mark.parametrize(("name", "opt"), [(n, o) for n in READ_ONLY for o in sorted(PLAIN[n][1])])
def test_an_option_the_plain_form_takes_answers_as_click_does(
        name: str, opt: str, here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _argv(name, opt) if opt not in PLAIN[name][2] else list(PLAIN[name][2])
    rc = PLAIN[name][0](argv)
    assert rc is not None, f"the plain form of {name} declined {argv}"
    got = capsys.readouterr()
    ran = CliRunner().invoke(main, [name, *argv], catch_exceptions=False)
    assert (rc, got.out) == (ran.exit_code, ran.stdout)
    assert got.out  # an answer, not two empty ones


def test_import_s_plain_form_takes_what_click_takes(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--agent`'s names are click's choices; an agent click refuses goes to click, which says why."""
    param = _options("import")["--agent"]
    assert isinstance(param.type, click.Choice)
    assert plain_import(["-q", "--agent", "not-an-agent"]) is None
    assert plain_import(["-q", "--agent=not-an-agent"]) is None
    for agent in param.type.choices:
        assert plain_import(["-q", "--agent", str(agent), str(here / "no-such-file")]) is not None
    capsys.readouterr()
