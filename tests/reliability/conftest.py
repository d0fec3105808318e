"""The reliability suite's shared pieces: the figures table at the end of the session, helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import report

BIN = str(Path(sys.executable).parent)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if any(report.FIGURES.values()):
        terminalreporter.write_sep("=", "reliability figures")
        terminalreporter.write_line(report.table())


def trials(full: int, quick: int) -> int:
    return quick if report.QUICK else full


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PATH"] = BIN + os.pathsep + e.get("PATH", "")
    return e


def run_oxide(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "oxide", *args], cwd=cwd, capture_output=True, text=True,
                          env=env(), timeout=timeout)


def assert_clean_exit(r: subprocess.CompletedProcess[str], what: str) -> None:
    """0, or 1 with an `error:` line; never a traceback (exit 3) or a raw lock/sqlite error."""
    assert r.returncode in (0, 1), f"{what}: exit {r.returncode}\n{r.stderr}"
    if r.returncode == 1:
        assert "error:" in r.stderr + r.stdout, f"{what}: exit 1 without error: line\n{r.stderr}"
    assert "Traceback" not in r.stderr, f"{what}: traceback\n{r.stderr}"
    assert "database is locked" not in r.stderr, f"{what}: raw sqlite lock error\n{r.stderr}"


def doctor_heals(root: Path) -> str:
    """`doctor --fix`, then `doctor` must report a consistent store."""
    r = run_oxide(root, "doctor", "--fix")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stdout + r.stderr
    r2 = run_oxide(root, "doctor")
    assert r2.returncode == 0, f"doctor after --fix still unhappy:\n{r2.stdout}{r2.stderr}"
    assert "error" not in r2.stdout and "warning" not in r2.stdout, r2.stdout
    return r.stdout
