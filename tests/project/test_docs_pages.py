"""The README and the pages under docs/: the README stays a page for users (at most 250 lines), every
relative link in them points at a file that exists, and each block a program rewrites has its
markers where that program writes it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
# [text](target) and [text](target "title"); images too. Code spans are left out first.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def links(text: str) -> list[str]:
    """The relative targets of a Markdown text's links, without their #anchor."""
    out = []
    for target in LINK.findall(CODE.sub("", text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # https:, mailto:, an anchor of the same page
        out.append(target.split("#", 1)[0])
    return out


def test_links_finds_relative_targets_only() -> None:
    text = ("See [a](docs/a.md), [b](b.md#part), ![c](img/c.png \"C\"), [web](https://x.org/y.md), "
            "[top](#use), [mail](mailto:a@b.c) and `[not](a/link.md)`.\n```\n[nor](this.md)\n```\n")
    assert links(text) == ["docs/a.md", "b.md", "img/c.png"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file(page: Path) -> None:
    missing = [t for t in links(page.read_text()) if not (page.parent / t).exists()]
    assert missing == [], f"{page.relative_to(ROOT)} links to missing {missing}"


def test_the_readme_is_a_page_for_users() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    for heading in ("## Install", "## The first ten minutes", "## Use", "## Configuration", "## Tested with",
                    "## Dependencies"):
        assert f"\n{heading}" in text, heading
    assert "pipx install" in text and "make demo" in text and "make test" in text
    for page in ("docs/architecture.md", "docs/performance.md", "CHANGELOG.md"):
        assert f"]({page})" in text, page


def test_each_dependency_is_named_in_the_readme_with_its_reason() -> None:
    """House rule: dependencies are chosen, not collected, and named with their reason."""
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    section = (ROOT / "README.md").read_text().split("## Dependencies", 1)[1].split("\n## ", 1)[0]
    names = [re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0] for d in deps]
    assert [n for n in names if f"**{n}**" not in section] == []


def test_the_marked_blocks_are_where_their_writers_write() -> None:
    from bench.table import PAGE
    from tests.compat import report

    assert report.README == ROOT / "README.md" and report.BLAME_PAGE == ROOT / "docs" / "blame.md"
    for page, marks in ((report.README, (report.START, report.END)),
                        (report.BLAME_PAGE, (report.BLAME_START, report.BLAME_END)),
                        (PAGE, ("<!-- bench:start -->", "<!-- bench:end -->",
                                "<!-- bench-large:start -->", "<!-- bench-large:end -->"))):
        text = page.read_text()
        assert all(text.count(m) == 1 for m in marks), (page, marks)
