"""Each pinned agent has its page in docs/agents/, and the page names (in bold, as the version it
was checked with) the release the compatibility suite drives: bumping a pin without checking the
page again fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.compat.install import pins

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agents"


@pytest.mark.parametrize("agent", sorted(pins()))
def test_the_agents_page_names_the_pinned_version(agent: str) -> None:
    page = DOCS / f"{agent}.md"
    assert page.exists(), f"docs/agents/{agent}.md is missing"
    version = pins()[agent].version
    checked = re.findall(r"\*\*[^*\n]*?(\d+\.\d+\.\d+)[^*\n]*\*\*", page.read_text())
    assert checked and checked[0] == version, f"{page.name} says it was checked with {checked[:1]}, the pin is {version}"
