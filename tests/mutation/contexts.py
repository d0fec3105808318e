"""A pytest plugin for the mutation runner's one measured run (``-p tests.mutation.contexts``):
which test reaches which line, the processes each test starts included.

In the pytest process, coverage's dynamic context is switched to the running test's node id (what
``--cov-context=test`` does). A process the test starts (a `git oxide` command, a hook, its
background drain) reads its coverage settings from ``COVERAGE_PROCESS_CONFIG`` (coverage's
``patch = subprocess``): while a test runs, that configuration names the test as its static
context, so the lines of every process it starts, and theirs, carry its node id too. Each test's outcome and seconds are written
to ``$OXIDE_MUTATE_REACH/tests.json`` at the end. Does nothing unless ``OXIDE_MUTATE_REACH`` is set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FOLDER_ENV = "OXIDE_MUTATE_REACH"
RESULTS = "tests.json"
CONFIG_ENV = "COVERAGE_PROCESS_CONFIG"  # what coverage's patch = subprocess hands to every process


class Reach:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.tests: dict[str, dict[str, Any]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        import coverage
        from coverage.config import CoverageConfig

        cov = coverage.Coverage.current()
        self.tests[item.nodeid] = {"passed": False, "failed": False, "seconds": 0.0}
        before = os.environ.get(CONFIG_ENV)
        if before is not None:
            config = CoverageConfig.deserialize(before)
            config.context = item.nodeid
            os.environ[CONFIG_ENV] = config.serialize()
        if cov is not None:
            cov.switch_context(item.nodeid)
        try:
            yield
        finally:
            if cov is not None:
                cov.switch_context("")
            if before is not None:
                os.environ[CONFIG_ENV] = before

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        t = self.tests.get(report.nodeid)
        if t is None:
            return
        t["seconds"] += report.duration
        if report.failed:
            t["failed"] = True
        if report.when == "call" and report.passed:
            t["passed"] = True

    def pytest_sessionfinish(self) -> None:
        for t in self.tests.values():
            t["passed"] = t["passed"] and not t.pop("failed")
        (self.folder / RESULTS).write_text(json.dumps(self.tests))


def pytest_configure(config: pytest.Config) -> None:
    folder = os.environ.get(FOLDER_ENV)
    if folder:
        config.pluginmanager.register(Reach(Path(folder)), "oxide-mutate-reach")
