"""Fixtures of the compatibility suite (``make compat``): a repository, a model server, a driver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import new_repo
from .driver import Driver, driver_class
from .modelserver import ModelServer

pytestmark = pytest.mark.compat


@pytest.fixture
def compat_repo(tmp_path: Path) -> Path:
    """The suite's usual repository (one commit: README.md, src/app.py), where the agents run."""
    return new_repo(tmp_path / "project")


@pytest.fixture
def model_server(tmp_path: Path) -> Iterator[ModelServer]:
    srv = ModelServer({}, log_path=tmp_path / "requests.jsonl").start()
    try:
        yield srv
    finally:
        srv.stop()


def make_driver(name: str, repo: Path, server: ModelServer, *, configure: bool = True) -> Driver:
    """A driver for ``name``, whose standard script is merged into the server's; configured as a
    user who has run it would have it, unless ``configure`` is false (its first run: nothing of
    it on disk yet; ``d.setup()`` configures it later)."""
    d = driver_class(name)(repo, server)
    server.script.update(d.script())
    if configure:
        d.setup()
    return d


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.compat)
