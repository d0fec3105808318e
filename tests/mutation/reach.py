"""Which test reaches which line of the guarded modules: one run of the tests under coverage, the
processes they start included (``contexts``), read back per test.

Lines that ran where no test was running (imports during collection, a process started outside
any test) are kept apart: a mutant there runs against the module's whole list.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import contexts, sandbox

MARKERS = "not slow and not bench and not compat"


@dataclass
class Reach:
    seconds: dict[str, float] = field(default_factory=dict)  # each test that passes unmutated
    failing: list[str] = field(default_factory=list)  # tests that fail (or skip) unmutated
    # module path (oxide_git/x.py) -> line -> the tests that reach it
    lines: dict[str, dict[int, set[str]]] = field(default_factory=dict)
    unknown: dict[str, set[int]] = field(default_factory=dict)  # lines reached by no known test
    took: float = 0.0

    def tests_for(self, module: str, lines: tuple[int, ...], selection: list[str]) -> list[str]:
        """The tests of ``selection`` that reach any of ``lines``; the whole selection for a line
        that also ran where no test was running (the module's import during collection: a
        constant, a default value, a decorator, an object a test module builds when imported),
        whose effect any test may see without reaching the line itself."""
        if any(n in self.unknown.get(module, ()) for n in lines):
            return list(selection)
        by_line = self.lines.get(module, {})
        chosen = set().union(*(by_line.get(n, set()) for n in lines))
        return [t for t in selection if t in chosen]


def _rel(path: str) -> str | None:
    return path[path.rindex("oxide_git/"):] if "oxide_git/" in path else None


def measure(tree: Path, tests: list[str], log) -> Reach:  # type: ignore[no-untyped-def]
    """Run ``tests`` (files or node ids) once in the copy under coverage and read who reached what."""
    from coverage import CoverageData

    folder = tree / ".mutate-reach"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    env = sandbox.env(tree)
    env["COVERAGE_FILE"] = str(folder / ".coverage")
    env[contexts.FOLDER_ENV] = str(folder)
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "coverage", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-p", "tests.mutation.contexts", "-o", "addopts=--strict-markers", "-m", MARKERS, *tests],
                   cwd=tree, env=env, capture_output=True, text=True)
    out = Reach(took=time.monotonic() - t0)
    results = json.loads((folder / contexts.RESULTS).read_text())
    for nodeid, r in results.items():
        if r["passed"]:
            out.seconds[nodeid] = r["seconds"]
        else:
            out.failing.append(nodeid)
    for path in sorted(folder.iterdir()):
        if path.name == contexts.RESULTS:
            continue
        data = CoverageData(basename=str(path))
        data.read()
        for measured in data.measured_files():
            rel = _rel(measured)
            if rel is None:
                continue
            lines = out.lines.setdefault(rel, {})
            for n, names in data.contexts_by_lineno(measured).items():
                passing = {c.rsplit("|", 1)[-1] for c in names} & out.seconds.keys()
                if passing:
                    lines.setdefault(n, set()).update(passing)
                if "" in names:
                    out.unknown.setdefault(rel, set()).add(n)
    shutil.rmtree(folder)
    log(f"reach: {len(results)} tests measured in {out.took:.0f} s ({len(out.failing)} fail or skip "
        f"unmutated: left out)")
    return out
